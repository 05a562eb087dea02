"""The keys topicstreams puts in ``request.meta`` of an engine's results-page requests: plain data, public.

Set by the spider (:mod:`topicstreams.crawl.spider`):

* ``topicstreams_engine`` (:data:`ENGINE`) — the engine's name; it marks a request as a results page (the
  middlewares leave every other request alone);
* ``topicstreams_topic`` (:data:`TOPIC`) — the topic (a canary's query for a canary);
* ``topicstreams_page`` (:data:`PAGE`) — the page of the topic's results, 0 for the first;
* ``topicstreams_canary`` (:data:`CANARY`) — True for a canary query's page;
* ``topicstreams_route`` (:data:`ROUTE`) — the route (``routes``) it goes by: its browser context, persona and
  pacing lane.

Set by the pacing middleware: ``topicstreams_probe`` (:data:`PROBE`, True for the single probe after a
cooldown) and ``topicstreams_sent_at`` (:data:`SENT_AT`, the monotonic time the browser sent it).

Set by the blocks middleware: ``topicstreams_reading`` (:data:`READING`, the page's
:class:`~topicstreams.engines.reader.Reading`: its class and results) and ``topicstreams_classification``
(:data:`CLASSIFICATION`, the :class:`~topicstreams.crawl.signals.Classification` it sent with ``response_classified``).
"""

ENGINE = "topicstreams_engine"
TOPIC = "topicstreams_topic"
PAGE = "topicstreams_page"
CANARY = "topicstreams_canary"
ROUTE = "topicstreams_route"
PROBE = "topicstreams_probe"
SENT_AT = "topicstreams_sent_at"
READING = "topicstreams_reading"
CLASSIFICATION = "topicstreams_classification"
