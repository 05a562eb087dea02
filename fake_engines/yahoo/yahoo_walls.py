"""The fake Yahoo's consent interstitials: the ``collectConsent`` wall and the older GUCE page.

See :mod:`fake_engines.consent_pages` for how the walls are put in front of results and answered.
"""

from __future__ import annotations

from urllib.parse import quote

from fake_engines.markup import esc, token

CONSENT_PATH = "/v2/collectConsent"
CONSENT_TITLE = "Yahoo is part of the Yahoo family of brands"
GUCE_PATH = "/consent"
GUCE_TITLE = "Yahoo is now part of Yahoo Inc."
CONSENT_COOKIE = "A1"
GUCE_COOKIE = "GUC"
CONSENT_LANGUAGES = ("en", "it")


# -- consent interstitials ------------------------------------------------------------------------------

_CONSENT_TEXTS = {
    "en": {
        "lang": "en-US",
        "title": CONSENT_TITLE,
        "brands": "The sites and apps that we own and operate, including Yahoo and AOL, and our digital advertising "
        "service, Yahoo Advertising. Yahoo family of brands.",
        "cookies": "When you use our sites and apps, we use cookies to provide our sites and apps to you, "
        "authenticate users, apply security measures, and prevent spam and abuse, and measure your use of "
        "our sites and apps.",
        "choices": "If you click '<strong>Accept all</strong>', we and our partners will store and/or access "
        "information on a device and use precise geolocation data and other personal data. If you click "
        "'<strong>Reject all</strong>', we and our partners will not use cookies and personal data for "
        "these additional purposes.",
        "reject": "Reject all",
        "accept": "Accept all",
        "manage": "Manage privacy settings",
        "family": "Yahoo family of brands",
    },
    "it": {
        "lang": "it-IT",
        "title": "Yahoo fa parte della famiglia di brand Yahoo",
        "brands": "I siti e le app che possediamo e gestiamo, tra cui Yahoo e AOL, e il nostro servizio di "
        "pubblicità digitale, Yahoo Advertising, formano la famiglia di brand Yahoo.",
        "cookies": "Quando usi i nostri siti e le nostre app, usiamo i cookie per fornirteli, per riconoscere gli "
        "utenti, per proteggerli, per prevenire spam e abusi e per capire come li usi.",
        "choices": "Se fai clic su '<strong>Accetta tutto</strong>', noi e i nostri partner memorizzeremo "
        "informazioni sul tuo dispositivo e/o vi accederemo, e useremo dati di geolocalizzazione precisi "
        "e altri dati personali. Se fai clic su '<strong>Rifiuta tutto</strong>', noi e i nostri partner "
        "non useremo cookie e dati personali per questi scopi ulteriori.",
        "reject": "Rifiuta tutto",
        "accept": "Accetta tutto",
        "manage": "Gestisci le impostazioni della privacy",
        "family": "Famiglia di brand Yahoo",
    },
}
"""The visible texts of the collectConsent wall; ``choices`` is markup, every other entry plain text."""

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" class="no-js">
<head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title></head>
<body class="consent-page">
<div class="con-wizard" role="dialog" aria-labelledby="consent-title">
  <img src="/thumbs/logo-yahoo-family.png" alt="{family}" width="120" height="30">
  <h2 id="consent-title" class="title">{title}</h2>
  <p>{brands}</p>
  <p>{cookies}</p>
  <p>{choices}</p>
  <p class="host">consent.yahoo.com (fake)</p>
  <form class="consent-form" action="{action}" method="post">
    <input type="hidden" name="csrfToken" value="{csrf}">
    <input type="hidden" name="sessionId" value="{session}">
    <input type="hidden" name="originalDoneUrl" value="{done}">
    <input type="hidden" name="namespace" value="yahoo">
    <div class="actions couple">
      <button type="submit" class="btn secondary reject-all" name="reject" value="reject">{reject}</button>
      <button type="submit" class="btn primary accept-all" name="agree" value="agree">{accept}</button>
    </div>
    <a class="btn secondary manage-settings" href="{action}&amp;manage=1">{manage}</a>
  </form>
</div>
</body>
</html>
"""


def render_consent(session: str, done: str, lang: str = "en") -> str:
    """The ``collectConsent`` wall of ``session`` (back to ``done`` once answered), in ``lang`` (en, it)."""
    texts = {key: (value if key == "choices" else esc(value)) for key, value in _CONSENT_TEXTS[lang].items()}
    action = f"{CONSENT_PATH}?sessionId={quote(session, safe='')}"
    return _CONSENT.format(
        action=esc(action), csrf=esc(token("csrf", session, length=12)), session=esc(session), done=esc(done), **texts
    )


_GUCE = """\
<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="UTF-8"><title>Yahoo is now part of Yahoo Inc.</title></head>
<body class="guce">
<div class="consent-container" role="dialog">
  <h1>Yahoo is now part of Yahoo Inc.</h1>
  <p>We and our partners use cookies and similar technologies on our sites and apps to provide our services,
     to understand how you use them and to personalise content and ads.</p>
  <p class="host">guce.yahoo.com (fake)</p>
  <form class="consent-form" action="{action}" method="post">
    <input type="hidden" name="gcrumb" value="{gcrumb}">
    <input type="hidden" name="done" value="{done}">
    <button type="submit" class="btn primary agree" name="agree" value="agree">I agree</button>
    <button type="submit" class="btn secondary" name="manage" value="manage">Manage options</button>
  </form>
</div>
</body>
</html>
"""


def render_guce(action: str, gcrumb: str, done: str) -> str:
    """The older GUCE consent page: its form posts to ``action`` and goes back to ``done`` once agreed."""
    return _GUCE.format(action=esc(action), gcrumb=esc(gcrumb), done=esc(done))
