"""The routes of a configuration: the exits an engine's requests may take, each with its persona.

``routes`` lists them (CONTRACT "Routes"); an empty list (the default) means one route named :data:`DEFAULT_ROUTE`
made from ``anti_detection.*`` exactly as a configuration without routes always behaved: its proxy (one endpoint
among ``anti_detection.proxy.proxies``, drawn once per process run) or ``direct``, its time zone, locale and
geolocation. An engine takes the routes whose ``engines`` name it (or name none).
"""

from __future__ import annotations

from collections.abc import Sequence

from topicstreams.config.sections import AntiDetectionSection, PersonaSection, RouteSection, Sections

DIRECT = "direct"
"""A route's ``proxy`` when it goes out from the machine itself."""

DEFAULT_ROUTE = "default"
"""The name of the one route of a configuration without ``routes``."""


def default_route(anti: AntiDetectionSection, proxy: str | None = None) -> RouteSection:
    """The one route of a configuration without ``routes``: ``anti_detection``'s persona and ``proxy`` (the run's
    endpoint among its proxies; ``direct`` when the proxy is off)."""
    persona = PersonaSection(
        user_agent="",
        locale=anti.locale,
        timezone_id=anti.timezone_id,
        geolocation=anti.geolocation,
        viewport=None,
    )
    chosen = (proxy or anti.proxy.proxies[0]) if anti.proxy.enabled else DIRECT
    return RouteSection(name=DEFAULT_ROUTE, proxy=chosen, persona=persona, engines=())


def configured_routes(sections: Sections, proxy: str | None = None) -> tuple[RouteSection, ...]:
    """Every route of the configuration (``routes``, or the default one)."""
    return sections.routes or (default_route(sections.anti_detection, proxy),)


def engine_routes(routes: Sequence[RouteSection], engine: str) -> tuple[RouteSection, ...]:
    """The routes ``engine`` may take, in the configuration's order."""
    return tuple(route for route in routes if route.serves(engine))
