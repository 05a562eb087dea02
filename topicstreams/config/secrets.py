"""Secrets masked: in the configuration as ``config show`` prints it, in a URL shown, and in a log message before it
is stored (``scraper_logs``) and shown to whoever reads the logs.

The configuration's own: :func:`mask_url` (a password), :func:`mask_webhook` (a webhook's token),
:func:`masked_config` (every secret of a validated configuration, for printing) and :func:`config_secrets` (the
secret values, as they could appear in a log line).

A crawl's log lines carry URLs and headers, and some of those carry secrets: a proxy URL with its credentials, a
webhook or a notification URL with a token in its query, an ``Authorization`` header. The log store keeps what a
person needs to follow a crawl, never what would let them act as it, so every message goes through a
:class:`Masker` first:

* a URL with ``user:password@`` (any scheme: ``http``, ``socks5``, ``postgresql+psycopg``) keeps its user and loses
  its password, as :func:`mask_url` writes it (``http://user:***@proxy:3128``);
* ``Authorization: Bearer X`` / ``Bearer X`` / ``Authorization: Basic X`` keep the scheme: ``Bearer ***``;
* ``token=X``-style pairs (a query value, or a ``key=value`` in prose) of the usual secret names keep the name:
  ``token=***``;
* every secret the configuration holds (:func:`config_secrets`: the web tokens, the webhook URL, the Apprise URLs'
  secret parts, proxy and database passwords), wherever it appears, as it is or URL-encoded, is ``***``. A secret
  shorter than :data:`MIN_SECRET_LENGTH` characters is left to the patterns above: masking every ``ab`` of a log
  would make it unreadable and wrong (a count, a word cut in two) while hiding nothing a pattern does not.

Pure: no logging, no configuration read here; the log store builds one Masker per process.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from topicstreams.config.route_table import DIRECT

MASK = "***"

MIN_SECRET_LENGTH = 4
"""Configured secrets shorter than this are not masked as plain strings (see the module docstring)."""

_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://(?P<user>[^\s/?#@:'\"<>]*)):(?P<password>[^\s/?#@'\"<>]*)@"
)
"""``scheme://user:password@``: the password ends at the last character a URL's user part can hold."""

_AUTHORIZATION = re.compile(
    r"(?i)\b(?P<scheme>Bearer|(?<=Authorization: )Basic|(?<=Authorization:)Basic)"
    r"(?P<gap>\s+)[A-Za-z0-9\-._~+/]+=*"
)
"""``Bearer X`` anywhere; ``Basic X`` after ``Authorization:``."""

SECRET_NAMES = (
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth",
    "auth_token",
    "apikey",
    "api_key",
    "key",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "sig",
    "signature",
    "session",
)
"""Names whose value, in ``name=value``, is a secret (case ignored)."""

_NAMED_VALUE = re.compile(
    r"(?i)(?:(?<![\w\-])|(?<=%3F)|(?<=%26))(?P<name>"
    + "|".join(sorted(SECRET_NAMES, key=len, reverse=True))
    + r")(?P<sep>=|%3D)(?P<value>(?:(?!%26)[^&\s#;,'\"<>)\]}])+)"
)
"""``token=X`` (or ``token%3DX`` in a URL inside a URL): the value ends at the next separator of a query (``&``,
``%26`` when encoded) or of prose."""


class Masker:
    """Masks a message (:meth:`mask`); built once with the configuration's secrets, then only read (thread-safe)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if not isinstance(secret, str) or len(secret) < MIN_SECRET_LENGTH:
                continue
            forms.update((secret, quote(secret, safe=""), quote_plus(secret, safe="")))
        # Longest first: a secret that contains another is masked whole, not around the shorter one.
        self._secrets = (
            re.compile("|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))) if forms else None
        )

    def mask(self, message: str) -> str:
        """*message* with its secrets replaced by ``***``."""
        if self._secrets is not None:
            message = self._secrets.sub(MASK, message)
        if "@" in message:
            message = _URL_PASSWORD.sub(_masked_password, message)
        if "=" in message or "%3D" in message or "%3d" in message:
            message = _NAMED_VALUE.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", message)
        message = _AUTHORIZATION.sub(lambda m: f"{m['scheme']}{m['gap']}{MASK}", message)
        return message


def _masked_password(match: re.Match[str]) -> str:
    return f"{match['head']}:{MASK}@"


def mask(message: str, secrets: Iterable[str] = ()) -> str:
    """*message* masked with a one-off :class:`Masker` (a caller that masks many builds one and keeps it)."""
    return Masker(secrets).mask(message)


SECRET_TOKENS = ("admin_token", "metrics_token")
"""The ``web.*`` keys that hold secrets (masked by ``config show``)."""


def mask_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (the user name is kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:{MASK}@{netloc}").geturl()


_USER_PART = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#@'\"<>]*@")
"""``scheme://user:password@`` (or ``scheme://user@``): the user part of a URL in a text."""


def shown_reason(reason: str) -> str:
    """A failure's text as any surface shows it (a route's reason): a URL's user part dropped, and anything else that
    reads as a secret masked (:func:`mask`)."""
    return mask(_USER_PART.sub(lambda match: match["scheme"], reason))


def shown_proxy(url: str) -> str:
    """A proxy as it may be shown anywhere (a table, a page, a metric's label, an alert): ``direct``, or its scheme,
    host and port, never its credentials, path or query (``http://user:pw@proxy.test:3128`` is
    ``http://proxy.test:3128``); ``***`` for text that is no such URL."""
    if url.strip().lower() == DIRECT:
        return DIRECT
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return MASK
    host = parts.hostname
    if not parts.scheme or not host:
        return MASK
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def mask_webhook(url: str) -> str:
    """A webhook URL without its secret: the scheme and host are kept, the path and query (the token) masked."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return MASK
    if not (parts.path.strip("/") or parts.query or parts.fragment or parts.username or parts.password):
        return url
    return f"{parts.scheme}://{parts.hostname or ''}{f':{port}' if port else ''}/{MASK}"


def masked_config(data: Mapping[str, Any]) -> dict[str, Any]:
    """A validated configuration with its secrets (proxy and database passwords, the routes' proxies' too, the
    webhook's token, the Apprise URLs' secrets, the web tokens) masked, for printing."""
    masked: dict[str, Any] = copy.deepcopy(dict(data))
    proxy = masked["anti_detection"]["proxy"]
    proxy["proxies"] = [mask_url(p) for p in proxy["proxies"]]
    for route in masked.get("routes") or ():
        route["proxy"] = mask_url(route["proxy"])
    masked["database"]["url"] = mask_url(masked["database"]["url"])
    alerting = masked["alerting"]
    if alerting["webhook_url"]:
        alerting["webhook_url"] = mask_webhook(alerting["webhook_url"])
    if alerting["urls"] or alerting["digests"]:
        from topicstreams.config.apprise_urls import masked as masked_apprise

        alerting["urls"] = [masked_apprise(url) for url in alerting["urls"]]
        for each in alerting["digests"]:
            each["urls"] = [masked_apprise(url) for url in each["urls"]]
    for name in SECRET_TOKENS:
        if masked["web"][name]:
            masked["web"][name] = MASK
    return masked


def config_secrets(data: Mapping[str, Any]) -> list[str]:
    """The secret values of a validated configuration as they could appear in a log line: the tokens, the webhook
    URL, the Apprise URLs' secret parts, proxy (the routes' too) and database passwords (for a :class:`Masker`)."""
    found: list[str] = [data["web"][name] for name in SECRET_TOKENS]
    found.append(data["alerting"]["webhook_url"])
    urls = [
        *data["alerting"]["urls"],
        *(url for each in data["alerting"]["digests"] for url in each["urls"]),
    ]
    if urls:
        from topicstreams.config.apprise_urls import secret_parts

        found.extend(part for url in urls for part in secret_parts(url))
    routes = [route["proxy"] for route in data.get("routes") or ()]
    for url in [*data["anti_detection"]["proxy"]["proxies"], *routes, data["database"]["url"]]:
        try:
            found.append(urlsplit(url).password or "")
        except ValueError:
            continue
    return [value for value in found if value]
