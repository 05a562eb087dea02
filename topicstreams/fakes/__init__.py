"""Fake news engines on loopback for tests, the demo and benchmarks (nothing here talks to a real engine).

``FakeEngines`` runs one local HTTP server per engine; ``python -m topicstreams.fakes serve`` runs them
from the command line. See :mod:`topicstreams.fakes.server` for the scripting API,
:mod:`topicstreams.fakes.catalogue` for the articles and :mod:`topicstreams.fakes.google` for the pages.
"""

from topicstreams.fakes.server import FakeEngines

__all__ = ["FakeEngines"]
