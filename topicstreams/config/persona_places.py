"""Whether a route's persona is one place: a ``timezone_id`` that contradicts its ``geolocation`` (a browser in New
York's time that says it stands in Berlin) is what a site that compares the two sees as a bot.

The time zone of a place is looked up offline with ``tzfpy`` (the IANA zone whose boundary holds the point, from
the timezone-boundary-builder data it ships; a point at sea gets its nautical zone, ``Etc/GMT+2``). The two zones
contradict each other when their clocks differ: when their offsets from UTC differ in January or in July of the
given year. A neighbouring zone that keeps the same time (``Europe/Amsterdam`` for a point in Germany) is no
contradiction: a page's script can only see the clock and its offset, never the zone's name.

:func:`persona_contradictions` says it for every route (pure); :func:`warn_persona_contradictions` logs one WARNING per
such route, once per process at crawl start (the add-on calls it, :mod:`topicstreams.addon`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import tzfpy

from topicstreams.config.sections import RouteSection

logger = logging.getLogger(__name__)

SEASONS = ((1, 15), (7, 15))
"""The days (month, day) whose offsets are compared: one in each half of the year, so that a zone with summer time
and one without (or one with it in the other hemisphere) are told apart."""


def zone_of_place(latitude: float, longitude: float) -> str | None:
    """The IANA time zone at the point, or None when the data has none there."""
    found: str = tzfpy.get_tz(longitude, latitude)
    return found or None


def utc_offsets(zone: str, year: int) -> tuple[timedelta, ...]:
    """``zone``'s offsets from UTC at noon UTC on each day of :data:`SEASONS` of ``year``."""
    info = ZoneInfo(zone)
    return tuple(
        datetime(year, month, day, 12, tzinfo=UTC).astimezone(info).utcoffset() or timedelta(0)
        for month, day in SEASONS
    )


def offsets_text(offsets: Iterable[timedelta]) -> str:
    """``UTC-05:00/-04:00``: each distinct offset once, in order."""
    shown: list[str] = []
    for offset in offsets:
        minutes = int(offset.total_seconds() // 60)
        text = f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        if text not in shown:
            shown.append(text)
    return "UTC" + "/".join(shown)


def persona_contradiction(route: RouteSection, year: int) -> str | None:
    """What is wrong when ``route``'s persona has a time zone and a geolocation whose clocks differ (in ``year``),
    else None."""
    persona = route.persona
    if not persona.timezone_id or persona.geolocation is None:
        return None
    place = persona.geolocation
    zone = zone_of_place(place.latitude, place.longitude)
    if zone is None:
        return None
    try:
        theirs, ours = utc_offsets(zone, year), utc_offsets(persona.timezone_id, year)
    except (ZoneInfoNotFoundError, ValueError):  # a zone this machine's tz database lacks: nothing to compare
        return None
    if theirs == ours:
        return None
    return (
        f"route {route.name}: its persona's time zone {persona.timezone_id} ({offsets_text(ours)}) contradicts its "
        f"geolocation {round(place.latitude, 4):g}, {round(place.longitude, 4):g}, which is in {zone} "
        f"({offsets_text(theirs)}): "
        "a site that compares the browser's clock with where it says it is sees a bot. Give the persona the time "
        f"zone of its place (timezone_id: {zone}) or the place of its time zone, both those of the route's proxy"
    )


def persona_contradictions(routes: Iterable[RouteSection], year: int | None = None) -> list[str]:
    """One message per route of ``routes`` whose persona's time zone contradicts its geolocation (this year's
    offsets when ``year`` is None)."""
    year = year or datetime.now(UTC).year
    return [message for route in routes if (message := persona_contradiction(route, year)) is not None]


def warn_persona_contradictions(routes: Iterable[RouteSection]) -> list[str]:
    """Log a WARNING for each route whose persona contradicts itself (see :func:`persona_contradictions`); the
    messages."""
    messages = persona_contradictions(routes)
    for message in messages:
        logger.warning(message)
    return messages
