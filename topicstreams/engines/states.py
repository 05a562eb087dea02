"""The states of an engine on a node: the names every process, table, report and page uses."""

RUNNING, COOLING, PAUSED = "running", "cooling", "paused"
"""The state of an engine on a node, as its ``engine_status`` row keeps it and ``scrapy health`` prints it:
``running`` (crawling at its pace, a slowed one too), ``cooling`` (benched after a block until the row's
``cooling_until``; once that has passed it reads ``running`` again), ``paused`` (held by the health score until a
person runs ``scrapy health resume ENGINE``)."""

STALE, STOPPED = "stale", "stopped"
"""The states of an engine whose process is gone, which every report, page and metric shows in place of the stored
one: ``stale`` (its process stopped writing the row without closing — killed, hung, or cut off from the database:
no heartbeat for :data:`~topicstreams.storage.heartbeats.STALE_HEARTBEATS` heartbeats) and ``stopped`` (its crawl
closed). The stored state stays as it was: a paused engine is still paused when a crawl of it starts again."""

GONE = (STALE, STOPPED)
"""The states of an engine no running crawl is behind."""

ROUTE_OK, ROUTE_DOWN = "ok", "down"
"""The states of a route (CONTRACT "Routes"), and of an engine on it: ``ok`` (it carries requests), ``cooling`` (the
pair, or every engine on the route, benched after a block until its ``cooling_until``), ``down`` (the route fails on
every engine it serves — its proxy or the way to it is broken — and is benched as a route until its probe passes).
A row no running crawl is behind reads ``stale`` or ``stopped`` as an engine's does."""
