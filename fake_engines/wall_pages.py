"""Walls that are no engine's own: pages a results URL may get from someone else. Written for this project.

A hotel's Wi-Fi portal, a company proxy, a publisher's consent dialog or a login form can stand where an engine's
results should be (the portal or proxy answers every request in place of the engine). None of them is news, and the
crawl must not answer them. Each page here is served as a step's raw ``body`` (``fakes.route(engine, topic,
{"body": vendor_consent("pl")})``), at any engine's results URL; each has a link or two a naive parser could take
for a result (the site's home page, its privacy or terms page).

* :func:`vendor_consent` — a consent dialog of a consent manager that is not an engine's ("Tidy Consent", made up),
  on a publisher's page; ``plain=True`` leaves no id, class or name that says "consent" or "cookie": only its words do;
* :func:`login_form` — "sign in to continue", a user name and a password;
* :func:`captive_portal` — a guest Wi-Fi portal: terms to accept and a "Log in to Wi-Fi" button, no password;
* :func:`proxy_notice` — a company proxy's acceptable-use notice with a "Continue" button;
* :func:`home_link_page` — a page whose one link is to a site's home page.

Languages: ``LANGUAGES`` of each page ("en" first); the words change, the markup does not.
"""

from __future__ import annotations

from fake_engines.markup import esc

PUBLISHER = "https://www.dailyledger.example"
HOTEL = "https://www.harbourhotel.example"
COMPANY = "https://intranet.northwind.example"

_PAGE = """\
<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body{{margin:0;font-family:Arial,Helvetica,sans-serif;color:#222;background:#eef1f4}}
.box{{max-width:560px;margin:12vh auto;padding:24px;background:#fff;border-radius:10px}}
.row{{display:flex;gap:10px;margin-top:16px}}
button,.btn{{padding:8px 18px;border-radius:6px;border:1px solid #245;background:#fff}}
</style>
</head>
<body>
{body}
</body>
</html>
"""

_CONSENT_WORDS = {
    "en": {
        "title": "The Daily Ledger",
        "heading": "We value your privacy",
        "text": "We and our 214 partners store and access information on your device, such as cookies, to show you "
        "personalised ads and content, to measure them and to improve our services.",
        "accept": "Accept all",
        "reject": "Reject all",
        "manage": "Manage options",
        "privacy": "Read our privacy policy",
        "home": "The Daily Ledger",
    },
    "pl": {
        "title": "Dziennik Przykładowy",
        "heading": "Szanujemy Twoją prywatność",
        "text": "My i nasi partnerzy (214) przechowujemy informacje na Twoim urządzeniu, takie jak pliki cookie, i "
        "uzyskujemy do nich dostęp, aby wyświetlać spersonalizowane reklamy i treści oraz mierzyć ich skuteczność.",
        "accept": "Zaakceptuj wszystko",
        "reject": "Odrzuć wszystko",
        "manage": "Więcej opcji",
        "privacy": "Przeczytaj naszą politykę prywatności",
        "home": "Dziennik Przykładowy",
    },
}

_CONSENT = """\
<header><a href="{home_url}/"><h2>{home}</h2></a></header>
<div class="{dialog_class}" role="dialog" aria-modal="true" aria-labelledby="t1">
  <div class="box">
    <h3 id="t1">{heading}</h3>
    <p>{text}</p>
    <p><a href="{home_url}/privacy-policy">{privacy}</a></p>
    <form method="post" action="{action}">
      <input type="hidden" name="{field}" value="{state}">
      <div class="row">
        <button type="submit" name="{button}" value="1" class="{accept_class}">{accept}</button>
        <button type="submit" name="{button}" value="0" class="{reject_class}">{reject}</button>
        <button type="button" class="{manage_class}">{manage}</button>
      </div>
    </form>
  </div>
</div>"""


def vendor_consent(lang: str = "en", *, plain: bool = False) -> str:
    """A publisher's page under a consent dialog of "Tidy Consent" (not an engine's), in ``lang`` (en, pl).

    ``plain``: the dialog's classes, field names and form action are meaningless tokens, so only the words on it
    (in its language) say it asks for consent."""
    words = _CONSENT_WORDS[lang]
    if plain:
        names = {"dialog_class": "m3k q9", "action": "/_/r7", "field": "z", "state": "a1f", "button": "b"}
        names |= {"accept_class": "q1", "reject_class": "q2", "manage_class": "q3"}
    else:
        names = {
            "dialog_class": "tidyconsent-overlay tidyconsent-cmp",
            "action": "/tidyconsent/v2/save",
            "field": "consent_state",
            "state": "tcf-v2",
            "button": "consent_choice",
            "accept_class": "tidyconsent-accept",
            "reject_class": "tidyconsent-reject",
            "manage_class": "tidyconsent-manage",
        }
    body = _CONSENT.format(home_url=PUBLISHER, **names, **{key: esc(value) for key, value in words.items()})
    return _PAGE.format(lang=lang, title=esc(words["title"]), body=body)


_LOGIN_WORDS = {
    "en": {
        "title": "Sign in",
        "heading": "Sign in to continue",
        "text": "This service is for members only. Sign in with the account your organisation gave you.",
        "user": "User name",
        "password": "Password",
        "submit": "Sign in",
        "forgot": "Forgot your password?",
        "home": "Back to the Northwind home page",
    },
    "de": {
        "title": "Anmelden",
        "heading": "Bitte melden Sie sich an, um fortzufahren",
        "text": "Dieser Dienst steht nur Mitgliedern offen. Melden Sie sich mit dem Konto Ihrer Organisation an.",
        "user": "Benutzername",
        "password": "Kennwort",
        "submit": "Anmelden",
        "forgot": "Kennwort vergessen?",
        "home": "Zurück zur Startseite von Northwind",
    },
}

_LOGIN = """\
<div class="box">
  <h2>{heading}</h2>
  <p>{text}</p>
  <form method="post" action="/session">
    <input type="hidden" name="return_to" value="{return_to}">
    <label>{user} <input type="text" name="user" autocomplete="username"></label>
    <label>{password} <input type="password" name="pw" autocomplete="current-password"></label>
    <div class="row"><button type="submit">{submit}</button></div>
  </form>
  <p><a href="{home_url}/account/reset">{forgot}</a></p>
  <p><a href="{home_url}/">{home}</a></p>
</div>"""


def login_form(lang: str = "en", return_to: str = "/") -> str:
    """A login form in ``lang`` (en, de): a user name and a password, back to ``return_to`` after."""
    words = _LOGIN_WORDS[lang]
    body = _LOGIN.format(
        home_url=COMPANY, return_to=esc(return_to), **{key: esc(value) for key, value in words.items()}
    )
    return _PAGE.format(lang=lang, title=esc(words["title"]), body=body)


_PORTAL_WORDS = {
    "en": {
        "title": "Harbour Hotel Guest Wi-Fi",
        "heading": "Welcome to the Harbour Hotel",
        "text": "Free Wi-Fi for our guests. Please accept the terms of use to get online.",
        "terms": "I accept the terms of use",
        "submit": "Log in to Wi-Fi",
        "terms_link": "Terms of use",
        "home": "Harbour Hotel",
    },
    "fr": {
        "title": "Wi-Fi invités de l'Hôtel du Port",
        "heading": "Bienvenue à l'Hôtel du Port",
        "text": "Wi-Fi gratuit pour nos clients. Veuillez accepter les conditions d'utilisation pour vous connecter.",
        "terms": "J'accepte les conditions d'utilisation",
        "submit": "Se connecter au Wi-Fi",
        "terms_link": "Conditions d'utilisation",
        "home": "Hôtel du Port",
    },
}

_PORTAL = """\
<div class="box">
  <a href="{home_url}/"><h2>{home}</h2></a>
  <h3>{heading}</h3>
  <p>{text}</p>
  <form method="post" action="/guest/accept">
    <input type="hidden" name="redirurl" value="{redirect}">
    <label><input type="checkbox" name="terms" value="yes"> {terms}</label>
    <div class="row"><button type="submit">{submit}</button></div>
  </form>
  <p><a href="{home_url}/wifi/terms">{terms_link}</a></p>
</div>"""


def captive_portal(lang: str = "en", redirect: str = "/") -> str:
    """A hotel's guest Wi-Fi portal in ``lang`` (en, fr): terms to accept and a "Log in to Wi-Fi" button."""
    words = _PORTAL_WORDS[lang]
    body = _PORTAL.format(home_url=HOTEL, redirect=esc(redirect), **{key: esc(value) for key, value in words.items()})
    return _PAGE.format(lang=lang, title=esc(words["title"]), body=body)


_PROXY = """\
<div class="box">
  <h2>Northwind web gateway</h2>
  <p>You are about to visit a site outside the Northwind network. Your visit is subject to the acceptable use
  policy, and it may be recorded.</p>
  <form method="get" action="/gateway/continue">
    <input type="hidden" name="url" value="{url}">
    <div class="row"><button type="submit">Continue</button></div>
  </form>
  <p><a href="{home_url}/policies/acceptable-use">Read the acceptable use policy</a></p>
</div>"""


def proxy_notice(url: str = "/") -> str:
    """A company proxy's notice before a visit to ``url``: a "Continue" button and a link to its policy."""
    return _PAGE.format(lang="en", title="Northwind web gateway", body=_PROXY.format(url=esc(url), home_url=COMPANY))


def home_link_page(home: str = PUBLISHER + "/") -> str:
    """A page whose one link is to the home page ``home``, with a heading and text around it as a result has."""
    body = (
        f'<div class="box"><h3><a href="{esc(home)}">The Daily Ledger</a></h3>'
        "<p>This address has moved. Our new front page has every story of the day, and more.</p></div>"
    )
    return _PAGE.format(lang="en", title="Moved", body=body)


LANGUAGES = {
    "vendor_consent": tuple(_CONSENT_WORDS),
    "login_form": tuple(_LOGIN_WORDS),
    "captive_portal": tuple(_PORTAL_WORDS),
}
"""The languages of each page that has more than English."""
