"""The states of an engine on a node: the names every process, table, report and page uses."""

RUNNING, COOLING, PAUSED = "running", "cooling", "paused"
"""The state of an engine on a node, as its ``engine_status`` row keeps it and ``scrapy health`` prints it:
``running`` (crawling at its pace, a slowed one too), ``cooling`` (benched after a block until the row's
``cooling_until``; once that has passed it reads ``running`` again), ``paused`` (held by the health score until a
person runs ``scrapy health resume ENGINE``)."""
