"""The engines' own domains: which hosts are Google's, Bing's, Yahoo's or Brave's (pure).

A host belongs to an engine by its *registrable domain*: its public suffix and the one label before it
(``news.google.co.uk`` → ``google`` + ``co.uk``). The suffixes are those of the ICANN section of the Public Suffix
List as tldextract's bundled snapshot has it: never fetched, never cached on disk. The private section
(``blogspot.com``, ``appspot.com``…) is not used, so ``google.blogspot.com`` is a blog on ``blogspot.com``.

Each engine's rule (:data:`RULES`), subdomains always included:

* ``google`` — ``google`` under any ICANN suffix (google.com, google.de, google.co.uk, google.com.ng…);
  gstatic.com, googleusercontent.com, g.co; its brand top-level domains ``.google`` and ``.goog`` (about.google);
* ``bing`` — bing.com (www.bing.com, cn.bing.com…), bing.net; its brand top-level domain ``.bing``;
* ``yahoo`` — ``yahoo`` under any ICANN suffix (yahoo.com with it.yahoo.com, uk.news.yahoo.com,
  r.search.yahoo.com…; yahoo.co.jp, yahoo.it…); yimg.com; its brand top-level domain ``.yahoo``;
* ``brave`` — brave.com (search.brave.com, imgs.search.brave.com…).

A publisher whose name merely holds an engine's (``googleblog.example``, ``notyahoo.com``, ``yahoo-fans.example``)
is no engine's. Neither is an IP address, nor a name under no public suffix (``localhost``, ``engine.example``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import tldextract

_HOST_RE = re.compile(r"[\w-]+(?:\.[\w-]+)*")
"""A host name: dot-separated labels of letters, digits, ``-`` and ``_`` (any script); no port, no brackets."""


@cache
def _extractor() -> tldextract.TLDExtract:
    """The process's one extractor: the snapshot shipped with tldextract (no URL to fetch, no disk cache), ICANN
    suffixes only."""
    return tldextract.TLDExtract(
        cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True, include_psl_private_domains=False
    )


def registered_domain(host: str) -> tuple[str, str]:
    """The registrable domain of ``host`` as ``(label, suffix)`` (``www.google.com.ng`` → ``("google", "com.ng")``),
    lowercased, a trailing dot ignored; ``("", "")`` when it has none (an IP address, ``localhost``, a name under
    no public suffix, a bare suffix, anything that is not a host name)."""
    if not isinstance(host, str):
        return "", ""
    return _registered(host.strip().lower().removesuffix("."))


@lru_cache(maxsize=4096)
def _registered(host: str) -> tuple[str, str]:
    if not _HOST_RE.fullmatch(host):
        return "", ""
    extracted = _extractor()(host)
    if not extracted.domain or not extracted.suffix:
        return "", ""
    return extracted.domain, extracted.suffix


@dataclass(frozen=True)
class DomainRule:
    """One engine's domains: a host is the engine's when its registrable domain (see :func:`registered_domain`)
    matches, its subdomains included."""

    labels: frozenset[str] = frozenset()
    """Labels owned under any ICANN public suffix (``google``: google.com, google.de, google.com.ng…)."""
    domains: frozenset[str] = frozenset()
    """Registrable domains owned as they are (``bing.com``); each must be one (``search.brave.com`` is not)."""
    tlds: frozenset[str] = frozenset()
    """Public suffixes owned whole: the engine's brand top-level domains (``google``: about.google)."""

    def owns(self, host: str) -> bool:
        """Whether ``host`` (a host name, any case, a trailing dot or not) is one of this rule's; False for garbage."""
        label, suffix = registered_domain(host)
        if not label:
            return False
        return label in self.labels or f"{label}.{suffix}" in self.domains or suffix in self.tlds


RULES: dict[str, DomainRule] = {
    "google": DomainRule(
        labels=frozenset({"google"}),
        domains=frozenset({"gstatic.com", "googleusercontent.com", "g.co"}),
        tlds=frozenset({"google", "goog"}),
    ),
    "bing": DomainRule(domains=frozenset({"bing.com", "bing.net"}), tlds=frozenset({"bing"})),
    "yahoo": DomainRule(labels=frozenset({"yahoo"}), domains=frozenset({"yimg.com"}), tlds=frozenset({"yahoo"})),
    "brave": DomainRule(domains=frozenset({"brave.com"})),
}
"""Each engine's domains by engine name: the rules of the module docstring."""


def owns(engine: str, host: str) -> bool:
    """Whether ``host`` is one of the engine ``engine``'s (False for an engine with no rule)."""
    rule = RULES.get(engine)
    return rule is not None and rule.owns(host)


def any_engine_owns(host: str) -> bool:
    """Whether ``host`` is one of any engine's."""
    return any(rule.owns(host) for rule in RULES.values())
