"""Fake news engines on loopback for tests, the demo and benchmarks (nothing here talks to a real engine).

``FakeEngines`` runs one local HTTP server per engine; ``python -m topicstreams.fakes serve`` runs them
from the command line. See :mod:`topicstreams.fakes.server` for the scripting API,
:mod:`topicstreams.fakes.catalogue` for the articles and :mod:`topicstreams.fakes.google` for the pages.
``FakeEngines(..., world=NewsWorld())`` serves an evolving news world instead of the static catalogue
(:mod:`topicstreams.fakes.world`).
"""

from topicstreams.fakes.server import FakeEngines
from topicstreams.fakes.world import NewsWorld

__all__ = ["FakeEngines", "NewsWorld"]
