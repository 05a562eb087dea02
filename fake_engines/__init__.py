"""Fake news engines on loopback for tests, the demo and benchmarks (nothing here talks to a real engine).

``FakeEngines`` runs one local HTTP server per engine; ``python -m fake_engines serve`` runs them
from the command line. See :mod:`fake_engines.server` for the scripting API,
:mod:`fake_engines.catalogue` for the articles and :mod:`fake_engines.google` for the pages.
``FakeEngines(..., world=NewsWorld())`` serves an evolving news world instead of the static catalogue
(:mod:`fake_engines.world`); ``RatedWorld`` one whose topics publish at their own, changing rates
(:mod:`fake_engines.rated_world`).
"""

from fake_engines.rated_world import RatedWorld
from fake_engines.server import FakeEngines
from fake_engines.world import NewsWorld

__all__ = ["FakeEngines", "NewsWorld", "RatedWorld"]
