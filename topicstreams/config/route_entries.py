"""The check of ``routes`` (CONTRACT "Routes"): each entry ``{name, proxy, persona, engines}``, a name no other route
has. ``proxy`` is ``direct`` or a proxy URL (:func:`~topicstreams.config.checks.proxy_url`; masked in every message);
``persona``'s keys are each optional, and what it leaves out is Chromium's own (an empty string, or null)."""

from __future__ import annotations

import re
from typing import Any

from topicstreams.config.checks import (
    Check,
    distinct,
    engine_name,
    geolocation,
    list_of,
    number,
    proxy_url,
    text,
    timezone_id,
)
from topicstreams.config.errors import ConfigError
from topicstreams.config.route_table import DIRECT
from topicstreams.config.secrets import mask_url

ROUTE_KEYS = ("name", "proxy", "persona", "engines")
PERSONA_KEYS = ("user_agent", "locale", "timezone_id", "geolocation", "viewport")
ROUTE_NAME = re.compile(r"[a-z0-9_-]{1,32}")
LOCALE = r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*"
VIEWPORT = "{width: 320…7680, height: 240…4320}"


def _masked(value: Any) -> Any:
    """``value`` as an error may show it: a URL (or a list of them) without its password (a proxy put in the wrong
    place, a bare URL for a route, ``proxies:`` for ``proxy:``)."""
    if isinstance(value, str):
        return mask_url(value)
    if isinstance(value, list):
        return [_masked(each) for each in value]
    return value


def _known_keys(key: str, value: dict[str, Any], known: tuple[str, ...]) -> None:
    unknown = set(value) - set(known)
    if unknown:
        name = sorted(unknown, key=str)[0]
        raise ConfigError(f"{key}.{name}", _masked(value[name]), "no such key (known: " + ", ".join(known) + ")")


def user_agent(key: str, value: Any) -> str:
    """A user agent string: printable, one line, or empty for Chromium's own."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > 512 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(key, value, "a user agent string on one line (at most 512 characters), or empty")
    return value.strip()


def viewport(key: str, value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"width", "height"}:
        raise ConfigError(key, value, VIEWPORT)
    number(VIEWPORT, low=320, high=7680, integer=True)(f"{key}.width", value["width"])
    number(VIEWPORT, low=240, high=4320, integer=True)(f"{key}.height", value["height"])
    return {"width": int(value["width"]), "height": int(value["height"])}


def persona(key: str, value: Any) -> dict[str, Any]:
    """A route's persona, every key filled in (empty or null: Chromium's own)."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ConfigError(key, value, "{user_agent, locale, timezone_id, geolocation, viewport} (each optional)")
    _known_keys(key, value, PERSONA_KEYS)
    return {
        "user_agent": user_agent(f"{key}.user_agent", value.get("user_agent")),
        "locale": text("a BCP 47 language tag such as en-US", LOCALE)(f"{key}.locale", value.get("locale") or ""),
        "timezone_id": timezone_id(f"{key}.timezone_id", value.get("timezone_id") or ""),
        "geolocation": geolocation(f"{key}.geolocation", value.get("geolocation")),
        "viewport": viewport(f"{key}.viewport", value.get("viewport")),
    }


def route_proxy(key: str, value: Any) -> str:
    """``direct`` or a proxy URL."""
    if isinstance(value, str) and value.strip().lower() == DIRECT:
        return DIRECT
    return proxy_url(key, value)


def route(key: str, value: Any) -> dict[str, Any]:
    """One entry of ``routes``."""
    if not isinstance(value, dict):  # a bare proxy URL in its place is shown without its password
        raise ConfigError(key, _masked(value), "{name, proxy, persona, engines}")
    _known_keys(key, value, ROUTE_KEYS)
    name = value.get("name")
    if not isinstance(name, str) or not ROUTE_NAME.fullmatch(name):
        raise ConfigError(f"{key}.name", name, "a name of 1 to 32 characters among a-z, 0-9, _ and -")
    if "proxy" not in value:
        raise ConfigError(f"{key}.proxy", None, "direct, or an http://, https:// or socks5:// proxy URL")
    return {
        "name": name,
        "proxy": route_proxy(f"{key}.proxy", value["proxy"]),
        "persona": persona(f"{key}.persona", value.get("persona")),
        "engines": list_of(engine_name, "a list of engine names ([] for every engine)")(
            f"{key}.engines", value.get("engines") or []
        ),
    }


def route_list() -> Check:
    """The check of ``routes``: routes, each with a name no other has."""
    routes = distinct(list_of(route, "a list of routes"), "name", "a name no other route has")

    def check(key: str, value: Any) -> Any:
        if not isinstance(value, list):  # a bare proxy URL in its place is shown without its password
            raise ConfigError(key, _masked(value), "a list of routes")
        return routes(key, value)

    return check
