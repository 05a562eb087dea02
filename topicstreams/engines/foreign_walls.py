"""Walls that are not the engine's own: a consent or login form standing where the results should be. Pure.

An engine's own consent wall is recognised by its markers (:mod:`topicstreams.engines.consent_walls`) and may be
answered. But a results URL can be answered by someone else: a hotel's Wi-Fi portal, a company proxy, another
engine's or a publisher's consent dialog, a login form. None of them is news, and none is ours to answer. The reader
asks :func:`find_foreign_wall` about a page without result items of the engine's known layouts (a page with them is
never a wall) that is neither the engine's "no results" page nor a challenge already; the page is such a wall, class
``challenge``, when it holds:

* status 511 (Network Authentication Required: a captive portal's answer): reason :data:`WALL`;
* a password field (a login form): reason :data:`WALL`;
* any engine's consent wall (each engine's ``consent_walls``), or the dialog of a widespread consent manager
  (:data:`CONSENT_MANAGERS`, ids and classes): reason :data:`~topicstreams.engines.consent_walls.CONSENT`;
* a question put to the visitor — a form that is not a search form, a dialog — with a button, whose words say what
  it asks: a login or network access (:data:`LOGIN_WORDS`, reason :data:`WALL`), or consent (:data:`CONSENT_WORDS`,
  reason ``consent``). The words are read in the names of its attributes' values (ids, classes, field names: often
  English whatever the page's language) and in its text, in several languages. On a short page (a wall's page is
  short; a results page is not) the whole page's text counts, for a form whose words stand beside it, and so do a
  banner named for consent (``<div id="cookie-notice">``) and a button in no form that asks to log in.

Extending it means adding a word or an id to a table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from parsel import Selector

from topicstreams.engines.classify import WALL
from topicstreams.engines.consent_walls import CONSENT, ConsentWall, find_wall

NETWORK_AUTHENTICATION_REQUIRED = 511

CONSENT_MANAGERS = (
    "onetrust-banner-sdk",
    "onetrust-consent-sdk",
    "cybotcookiebotdialog",
    "didomi-notice",
    "didomi-popup",
    "qc-cmp2-container",
    "truste-consent",
    "usercentrics-root",
    "sp_message_container",
    "cmpbox",
    "iubenda-cs-banner",
    "fc-consent-root",
    "osano-cm-window",
)
"""Lowercase substrings of the ids and classes of widespread consent managers' dialogs."""

CONSENT_WORDS = re.compile(
    r"\b(?:cookie\w*|consent\w*|consenso|consentimiento|consentimento|einwillig\w*|zustimm\w*|toestemming"
    r"|samtyk\w*|samtyc\w*|zgod\w*|ciasteczk\w*|souhlas\w*|gdpr|dsgvo|rgpd|tcf)\b|同意|クッキー"
)
"""What a consent form says, in several languages (matched in lowercase text, punctuation as spaces)."""

LOGIN_WORDS = re.compile(
    r"\b(?:log ?in|sign ?in|log ?on|wi ?fi|wlan|hotspot|captive|voucher|anmelden|einloggen|connexion|se connecter"
    r"|accedi|iniciar sesi[oó]n|iniciar sess[aã]o|inloggen|zaloguj\w*|internet access)\b"
)
"""What a login form or a network's portal says, in several languages (lowercase text, punctuation as spaces)."""

SHORT_PAGE = 4000
"""A page with at most this many characters of text besides its links is short: a wall, not a page of results."""

TEXTS = ".//text()[normalize-space()][not(ancestor::script or ancestor::style or ancestor::noscript)]"
PROSE = ".//text()[normalize-space()][not(ancestor::script or ancestor::style or ancestor::noscript or ancestor::a)]"
BUTTONS = ".//button | .//input[@type='submit' or @type='button' or @type='image']"
QUESTIONS = "//form | //dialog | //*[@role='dialog' or @role='alertdialog' or @aria-modal='true']"
SEARCH = "@role='search' or .//input[@type='search'] or .//input[@name='q' or @name='p' or @name='query']"
"""What makes a form a search form (an engine's own, or a portal's): never a question."""
ATTRIBUTES = ("id", "class", "name", "value", "action", "aria-label", "title")


@dataclass(frozen=True)
class ForeignWall:
    """A wall found: the reason of its ``challenge`` (``consent`` or ``wall``) and what it is, for a person."""

    reason: str
    what: str


EngineWalls = tuple[tuple[ConsentWall, ...], Callable[[str], bool]]
"""One engine's consent walls and its :meth:`~topicstreams.engines.base.Engine.owns_host`."""

LOGIN_FORM = ForeignWall(WALL, "a login or network access form")
CONSENT_FORM = ForeignWall(CONSENT, "a consent form")


def _words(text: str) -> str:
    """``text`` lowercased, every run of punctuation and space made one space."""
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())


def _text(element: Selector, xpath: str = TEXTS) -> str:
    return _words(" ".join(element.xpath(xpath).getall()))


def _names(element: Selector, xpath: str = "descendant-or-self::*") -> str:
    """The values of the naming attributes of ``element`` and of what it holds, as words (camelCase split)."""
    values = []
    for node in element.xpath(xpath):
        for attribute in ATTRIBUTES:
            value = node.attrib.get(attribute)
            if value:
                values.append(re.sub(r"([a-z])([A-Z])", r"\1 \2", value))
    return _words(" ".join(values))


def _buttons(scope: Selector) -> list[Selector]:
    """The buttons in ``scope`` that are not a search form's."""
    return [button for button in scope.xpath(BUTTONS) if not button.xpath(f"ancestor::form[{SEARCH}]")]


def _asks_to_log_in(buttons: Iterable[Selector]) -> bool:
    """Whether a button's text or names say "log in" (to a site, to a network)."""
    return any(LOGIN_WORDS.search(f"{_text(button)} {_names(button, 'self::*')}") for button in buttons)


def _question(scope: Selector, beside: str) -> ForeignWall | None:
    """What the question ``scope`` (a form, a dialog, a consent banner) asks, by its words and ``beside`` (the
    words of a short page around it; empty on a long page)."""
    buttons = _buttons(scope)
    if not buttons:
        return None
    if _asks_to_log_in(buttons):
        return LOGIN_FORM
    said = f"{_names(scope)} {_text(scope)} {beside}"
    if CONSENT_WORDS.search(said):
        return CONSENT_FORM
    if LOGIN_WORDS.search(said):
        return LOGIN_FORM
    return None


def _questions(page: Selector, short: bool) -> list[Selector]:
    """The forms (but search forms) and the dialogs of the page; on a short page, the consent banners too (elements
    named so, ``<div id="cookie-notice">``: on a long page such a name may be a footer's settings button)."""
    questions = [question for question in page.xpath(QUESTIONS) if not question.xpath(f"self::form[{SEARCH}]")]
    if short:
        named = page.xpath("//*[@id or @class]")
        questions += [node for node in named if CONSENT_WORDS.search(_names(node, "self::*"))]
    return questions


def find_foreign_wall(
    page: Selector, *, url: str, html: str, status: int, engines: Iterable[EngineWalls] = ()
) -> ForeignWall | None:
    """The wall the page at ``url`` (parsed: ``page``; as text: ``html``; its ``status``) is, or None.

    Only for a page without result items of the engine's known layouts. ``engines``: every engine's consent walls
    and host rule (another engine's wall is recognised as surely as the engine's own)."""
    if status == NETWORK_AUTHENTICATION_REQUIRED:
        return ForeignWall(WALL, "HTTP 511: the network asks to log in")
    if page.xpath("//input[translate(@type, 'PASWORD', 'pasword')='password']"):
        return ForeignWall(WALL, "a login form")
    for walls, owns_host in engines:
        wall = find_wall(walls, url=url, html=html, owns_host=owns_host, has_results=lambda _: False, selector=page)
        if wall is not None:
            return ForeignWall(CONSENT, f"the consent wall of {wall.name}")
    for node in page.xpath("//*[@id or @class]"):
        named = f"{node.attrib.get('id', '')} {node.attrib.get('class', '')}".lower()
        if any(marker in named for marker in CONSENT_MANAGERS):
            return ForeignWall(CONSENT, "a consent manager's dialog")
    prose = _text(page, PROSE)
    short = len(prose) <= SHORT_PAGE
    beside = prose if short else ""
    for question in _questions(page, short):
        found = _question(question, beside)
        if found is not None:
            return found
    # a short page whose button, in no form, asks to log in (a portal's "Log in to Wi-Fi")
    return LOGIN_FORM if short and _asks_to_log_in(_buttons(page)) else None
