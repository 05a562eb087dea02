"""Telling a person: engine transitions, a node's network, a topic's silence, news digests — through Apprise.

* :mod:`~topicstreams.alerts.events` — the events, and the message of each (what happened, why, since when, where,
  what to do);
* :mod:`~topicstreams.config.apprise_urls` — Apprise URLs: checked for the configuration, masked for every log and page;
* :mod:`~topicstreams.alerts.inert_text` — scraped text made inert for each kind of service;
* :mod:`~topicstreams.alerts.delivery` — the process's delivery thread: every target, retried with backoff, each
  attempt recorded (:mod:`~topicstreams.alerts.targets`: one attempt to one target); what a stop leaves undelivered
  taken up by the node's next start (:mod:`~topicstreams.alerts.leftovers`); :mod:`~topicstreams.alerts.apprise_logs` —
  what Apprise logs meanwhile, caught and kept out of the log;
* :mod:`~topicstreams.alerts.transitions`, :mod:`~topicstreams.alerts.network` — an engine's transitions and a
  node's network verdict (pure);
* :mod:`~topicstreams.alerts.topic_silence`, :mod:`~topicstreams.alerts.digest_periods` — a topic gone silent, news
  digests.
"""
