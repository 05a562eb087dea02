"""URL normalization, the news id and the engines' hosts (pure).

``normalize_url`` turns the many spellings of one article's URL into one string, so that
the same article found by several engines (or on several runs) gets the same ``news_id``:

* redirectors are unwrapped, repeatedly if nested: Google's ``/url?q=<target>`` and
  ``/url?...&url=<target>`` on any of Google's hosts (``www.google.com``,
  ``www.google.com.ng``…), Yahoo's ``.../RU=<target>/RK=...`` on Yahoo's ``r.search.*``
  hosts (``r.search.yahoo.com``…), and both on any host given in ``redirector_hosts``
  (an engine's hosts are those :mod:`topicstreams.engines.domains` gives it);
* w3lib's ``canonicalize_url`` lowercases the scheme and host (IDNA-encoding it), sorts the
  query, normalizes percent-encoding, resolves dot segments, drops the fragment and turns an
  empty path into ``/``;
* default ports are dropped, tracking query parameters (``TRACKING_PARAMS``,
  ``TRACKING_PARAM_PREFIXES``, compared case-insensitively) and Yahoo's ``;_ylt=…;_ylu=…``
  path parameters (``TRACKING_PATH_PARAMS``) are cut.

The result is a fixed point: ``normalize_url(normalize_url(u)) == normalize_url(u)``.

"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from topicstreams.engines.domains import RULES

logger = logging.getLogger(__name__)


def news_id(normalized_url: str) -> str:
    """The id of a news article: the first 32 hex digits of the SHA-256 of its normalized URL."""
    return hashlib.sha256(normalized_url.encode("utf-8")).hexdigest()[:32]


# --- Tables ------------------------------------------------------------------------------
# Query parameters that only track a click or a campaign: never part of an article's identity.
# Lowercase; matched case-insensitively. Extend freely.
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        # Google Ads / Analytics / Search
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "_ga",
        "_gl",
        "srsltid",
        "ved",
        "usg",
        "sa",
        "ei",
        "oq",
        "sca_esv",
        # Facebook / Instagram / Twitter / TikTok / LinkedIn
        "fbclid",
        "igshid",
        "igsh",
        "twclid",
        "ttclid",
        "li_fat_id",
        # Microsoft / Bing / MSN
        "msclkid",
        "ocid",
        "cvid",
        # Yahoo / Yandex
        "guccounter",
        "guce_referrer",
        "guce_referrer_sig",
        "_ylt",
        "_ylu",
        "_ylc",
        "yclid",
        # Mailchimp / HubSpot / Marketo / Vero / Olytics
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "hsctatracking",
        "mkt_tok",
        "vero_id",
        "vero_conv",
        "oly_anon_id",
        "oly_enc_id",
        # publishers' campaign ids
        "ncid",
        "cmpid",
        "soc_src",
        "soc_trk",
        "s_kwcid",
        "rb_clickid",
        "wickedid",
    }
)
# Any query parameter whose (lowercased) name starts with one of these is tracking.
TRACKING_PARAM_PREFIXES: tuple[str, ...] = ("utm_",)
# Path parameters (``/article.html;_ylt=…;_ylu=…``) that only track. Lowercase.
TRACKING_PATH_PARAMS: frozenset[str] = frozenset({"_ylt", "_ylu", "_ylc"})

# Yahoo's hosts whose ``.../RU=<target>/RK=...`` paths are unwrapped start so: r.search.yahoo.com, ...
YAHOO_REDIRECT_PREFIX = "r.search."
# Query parameters carrying the target of a Google-style ``/url`` redirect, by preference.
GOOGLE_TARGET_PARAMS: tuple[str, ...] = ("url", "q")
# ``RU=<percent-encoded target>`` as one path segment of a Yahoo-style redirect.
_YAHOO_RU_RE = re.compile(r"/RU=([^/]+)(?:/|$)")
# A ``;name=value`` (or bare ``;name``) path parameter.
_PATH_PARAM_RE = re.compile(r";([^;/=]*)(?:=[^;/]*)?")
# A canonical host: a DNS-ish name (IDNA already applied by w3lib) or a bracketed IPv6 address.
_HOST_RE = re.compile(r"[a-z0-9_~-]+(?:\.[a-z0-9_~-]+)*\.?|\[[0-9a-f:.]+\]")

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}
MAX_UNWRAP = 10


# --- normalize_url -----------------------------------------------------------------------
def normalize_url(url: str, redirector_hosts: Iterable[str] = ()) -> str:
    """Return the normalized form of the absolute http(s) ``url`` (see the module docstring).

    ``redirector_hosts``: extra host names (e.g. the engines' own hosts) on which Google-style
    ``/url?q=`` and Yahoo-style ``/RU=`` redirects are unwrapped.

    Raises ``ValueError`` (naming the URL) when ``url`` is not an absolute http or https URL,
    or nests redirectors more than ``MAX_UNWRAP`` deep.
    """
    hosts = frozenset(h.strip().lower().rstrip(".") for h in redirector_hosts)
    current = url
    for _ in range(MAX_UNWRAP + 1):
        canonical = _canonical(current)
        target = _redirect_target(canonical, hosts)
        if target is None:
            return canonical
        current = target
    raise ValueError(f"Too many nested redirectors in URL {url!r}")


def _canonical(url: str) -> str:
    """Canonical form of one URL, without unwrapping. Raises ValueError on a bad URL."""
    if not isinstance(url, str):
        raise ValueError(f"Not a URL: {url!r}")
    stripped = url.strip()
    try:
        scheme = urlsplit(stripped).scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise ValueError("not an http(s) URL")
        parts = urlsplit(canonicalize_url(stripped))
        host = parts.hostname or ""
        port = parts.port  # ValueError when not an integer in 0-65535
    except ValueError as exc:
        raise ValueError(f"Not an absolute http(s) URL: {url!r} ({exc})") from None
    if ":" in host:
        host = f"[{host}]"  # IPv6
    if not _HOST_RE.fullmatch(host):
        raise ValueError(f"Not an absolute http(s) URL: {url!r} (bad host {host!r})")

    netloc = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        netloc = f"{userinfo}@{netloc}"
    query = "&".join(p for p in parts.query.split("&") if p and not _is_tracking_pair(p))
    path = parts.path or "/"
    if ";" in path:
        cut = _PATH_PARAM_RE.sub(_keep_path_param, path) or "/"
        if cut != path:
            # Cutting may leave e.g. "/a/../b" (from "/a/..;_ylt=x/b"): canonicalize again.
            return _canonical(urlunsplit((scheme, netloc, cut, query, "")))
    return urlunsplit((scheme, netloc, path, query, ""))


def _keep_path_param(match: re.Match[str]) -> str:
    return "" if match.group(1).lower() in TRACKING_PATH_PARAMS else match.group(0)


def is_tracking_param(name: str) -> bool:
    """Whether the query parameter ``name`` (decoded) only tracks; case-insensitive."""
    name = name.strip().lower()
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PARAM_PREFIXES)


def _is_tracking_pair(pair: str) -> bool:
    return is_tracking_param(unquote_plus(pair.partition("=")[0]))


def _redirect_target(canonical: str, hosts: frozenset[str]) -> str | None:
    """The absolute http(s) URL a canonical redirector URL points to, or None."""
    parts = urlsplit(canonical)
    host = parts.hostname or ""
    extra = host in hosts
    if parts.path == "/url" and parts.query and (extra or RULES["google"].owns(host)):
        params: dict[str, str] = {}
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            params.setdefault(key.lower(), value.strip())
        for key in GOOGLE_TARGET_PARAMS:
            if _is_absolute_http(params.get(key, "")):
                return params[key]
    if "/RU=" in parts.path and (extra or _is_yahoo_redirector(host)):
        match = _YAHOO_RU_RE.search(parts.path)
        if match:
            target = unquote(match.group(1)).strip()
            if _is_absolute_http(target):
                return target
    return None


def _is_yahoo_redirector(host: str) -> bool:
    return host.startswith(YAHOO_REDIRECT_PREFIX) and RULES["yahoo"].owns(host)


def _is_absolute_http(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in DEFAULT_PORTS and bool(parts.netloc)


def engine_hosts(engines: Mapping[str, Any]) -> set[str]:
    """The host names of the engines' base URLs: ``engines`` maps each engine's name to its base URL, or to its
    configuration mapping (``engines.<name>``, with its ``base_url``)."""
    hosts = set()
    for name, config in (engines or {}).items():
        base_url = config.get("base_url") if isinstance(config, Mapping) else config
        try:
            host = urlsplit(base_url).hostname if isinstance(base_url, str) else None
        except ValueError:
            host = None
        if host:
            hosts.add(host.lower())
        else:
            logger.debug("Engine %r has no usable base_url: %r", name, base_url)
    return hosts
