"""Secrets taken out of a log message before it is stored (``scraper_logs``) and shown to whoever reads the logs.

A crawl's log lines carry URLs and headers, and some of those carry secrets: a proxy URL with its credentials, a
webhook or a notification URL with a token in its query, an ``Authorization`` header. The log store keeps what a
person needs to follow a crawl, never what would let them act as it, so every message goes through a
:class:`Masker` first:

* a URL with ``user:password@`` (any scheme: ``http``, ``socks5``, ``postgresql+psycopg``) keeps its user and loses
  its password, as :func:`topicstreams.config.loading.mask_url` writes it (``http://user:***@proxy:3128``);
* ``Authorization: Bearer X`` / ``Bearer X`` / ``Authorization: Basic X`` keep the scheme: ``Bearer ***``;
* ``token=X``-style pairs (a query value, or a ``key=value`` in prose) of the usual secret names keep the name:
  ``token=***``;
* every secret the configuration holds (:meth:`topicstreams.config.loading.Config.secrets`: the web tokens, the webhook
  URL, proxy and database passwords), wherever it appears, as it is or URL-encoded, is ``***``. A secret shorter
  than :data:`MIN_SECRET_LENGTH` characters is left to the patterns above: masking every ``ab`` of a log would make
  it unreadable and wrong (a count, a word cut in two) while hiding nothing a pattern does not.

Pure: no logging, no configuration read here; the log store builds one Masker per process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

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


def _masked_password(match: re.Match) -> str:
    return f"{match['head']}:{MASK}@"


def mask(message: str, secrets: Iterable[str] = ()) -> str:
    """*message* masked with a one-off :class:`Masker` (a caller that masks many builds one and keeps it)."""
    return Masker(secrets).mask(message)
