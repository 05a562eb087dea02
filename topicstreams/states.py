"""The state of an engine on a node, as its ``engine_status`` row keeps it and ``scrapy health`` prints it.

* ``running`` — the engine is crawling at its pace (a slowed one too);
* ``cooling`` — benched after a block until the row's ``cooling_until``; once that has passed it reads
  ``running`` again;
* ``paused`` — held by the health score until a person runs ``scrapy health resume ENGINE``.

A vocabulary only: the rows (:mod:`topicstreams.storage.engine_status`), the saturation judgement
(:mod:`topicstreams.health.saturation`) and the report (:mod:`topicstreams.health_report`) share it.
"""

RUNNING, COOLING, PAUSED = "running", "cooling", "paused"
