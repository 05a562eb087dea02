"""Consent walls: the interstitial an engine puts in front of a new browser profile's first search. Pure.

From an exit IP in the EU, Google ("Before you continue to Google"), Yahoo (its GUCE and ``collectConsent``
pages), Bing and Brave first ask for consent. A wall is recognised by what does not depend on the visitor's
language, wherever it is served (at the results URL itself, behind a redirect, through a proxy that rewrites):

* the form a person answers: its hidden field names and values, its buttons' names and ids
  (:attr:`ConsentWall.xpath`, looked for only when a cheap substring of it, :attr:`ConsentWall.hints`, is in the
  page);
* a URL on the engine's consent host (``consent.google.de``, ``consent.yahoo.com``, ``guce.yahoo.com``: the host's
  first label is one of :data:`CONSENT_HOST_LABELS` and the engine owns the host), or a consent path of the engine
  (:attr:`ConsentWall.url_markers`).

A page with result items of the engine's known layouts is never a wall (an engine may lay a banner over its
results: those still parse). A wall is class ``challenge`` with reason :data:`CONSENT`: nothing from it is stored,
and the structural fallback never reads it. Each engine declares its walls (``consent_walls`` on its class in
:mod:`topicstreams.engines`); :attr:`ConsentWall.buttons` names the button a person presses for each choice of
``browser.consent``, which the consent middleware (:mod:`topicstreams.middlewares.consent_answers`) presses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from parsel import Selector

CONSENT = "consent"
"""The reason of a consent wall's verdict (its class is ``challenge``), and of the health reports it shows in."""

ANSWERS = ("reject", "accept")
"""The values of ``browser.consent`` that answer walls (the button a person presses)."""
CHOICES = (*ANSWERS, "none")
"""The values of ``browser.consent``: an answer given to a wall, or ``none`` to leave walls unanswered."""


def answers_walls(choice: str | None) -> bool:
    """Whether ``browser.consent`` (``TOPICSTREAMS_CONSENT``) ``choice`` answers walls."""
    return choice in ANSWERS


CONSENT_HOST_LABELS = frozenset({"consent", "guce"})
"""The first label of an engine's consent hosts (``consent.google.com``, ``guce.yahoo.com``)."""


@dataclass(frozen=True)
class ConsentWall:
    """One engine's consent wall, by language-independent markers.

    ``hints``: lowercase substrings of the HTML, one of which a wall always holds (a cheap first look); ``xpath``:
    what then marks the wall on the parsed page (its form, its buttons); ``url_markers``: lowercase substrings of
    the final URL (query values blanked) that mark it whatever the page holds; ``buttons``: for ``reject`` and
    ``accept``, the CSS selector (Playwright's, ``:has()`` included) of the button a person presses. A choice
    missing from ``buttons`` cannot be given on this wall.
    """

    name: str
    hints: tuple[str, ...] = ()
    xpath: str = ""
    url_markers: tuple[str, ...] = ()
    buttons: Mapping[str, str] = field(default_factory=dict)

    def button(self, choice: str) -> str | None:
        """The selector of the button for ``choice``, or None when this wall offers no such button."""
        return self.buttons.get(choice)


CONSENT_HOST_WALL = ConsentWall("consent host")
"""A page on an engine's consent host that no known wall matches: a wall still, with no button known."""


def blank_query_values(url: str) -> str:
    """The URL with its query values blanked (``?q=&tbm=``): a topic echoed in the query is not a marker."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    keys = "&".join(f"{key}=" for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(query=keys, fragment=""))


def on_consent_host(url: str, owns_host: Callable[[str], bool]) -> bool:
    """Whether ``url`` is on a consent host of the engine whose domains ``owns_host`` tells."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    return host.split(".", 1)[0] in CONSENT_HOST_LABELS and owns_host(host)


def find_wall(
    walls: tuple[ConsentWall, ...],
    *,
    url: str,
    html: str,
    owns_host: Callable[[str], bool],
    has_results: Callable[[Selector], bool],
    selector: Selector | None = None,
) -> ConsentWall | None:
    """The consent wall the page at ``url`` is, or None.

    ``owns_host``: whether a host is the engine's; ``has_results``: whether a parsed page holds result items of
    the engine's known layouts (such a page is never a wall); ``selector``: the page already parsed, if it is.
    """
    lowered_url = blank_query_values(url).lower()
    for wall in walls:
        if any(marker in lowered_url for marker in wall.url_markers):
            return wall
    lowered = html.lower()
    hinted = [wall for wall in walls if any(hint in lowered for hint in wall.hints)]
    host_wall = on_consent_host(url, owns_host)
    if not hinted and not host_wall:
        return None
    page = selector if selector is not None else Selector(text=html or "<html></html>")
    if has_results(page):
        return None
    for wall in hinted:
        if not wall.xpath or page.xpath(wall.xpath):
            return wall
    return CONSENT_HOST_WALL if host_wall else None
