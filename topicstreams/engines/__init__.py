"""The search engines as plain objects, and the registry that gives one by name.

:func:`engine_class` / :func:`make_engine` give an engine by name (google, bing, yahoo, brave); the spiders
(:mod:`topicstreams.spiders`) bind one each, the reader (:mod:`topicstreams.engines.reader`) reads its pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topicstreams.engines.base import Engine
from topicstreams.engines.bing import Bing
from topicstreams.engines.brave import Brave
from topicstreams.engines.classify import EngineMarkers
from topicstreams.engines.google import Google
from topicstreams.engines.yahoo import Yahoo

REGISTRY: dict[str, type[Engine]] = {cls.name: cls for cls in (Google, Bing, Yahoo, Brave)}
"""Every supported engine by name, in the order of :data:`topicstreams.ENGINES`."""


def engine_class(name: str) -> type[Engine]:
    """The engine called ``name``; KeyError naming the supported ones otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no engine {name!r}: expected one of {', '.join(REGISTRY)}") from None


def make_engine(name: str, engines: Mapping[str, Any]) -> Engine:
    """The engine ``name`` as configured in ``engines`` (the ``engines`` configuration mapping /
    ``TOPICSTREAMS_ENGINES``: its ``base_url`` and ``freshness``)."""
    config = engines[name]
    return engine_class(name)(config["base_url"], config.get("freshness") or "hour")


def markers_for(name: str) -> EngineMarkers:
    """The markers of the engine ``name`` (empty markers for an unknown one: the walls still apply)."""
    cls = REGISTRY.get(name)
    return cls.markers if cls is not None else EngineMarkers()


__all__ = ["REGISTRY", "Bing", "Brave", "Engine", "Google", "Yahoo", "engine_class", "make_engine", "markers_for"]
