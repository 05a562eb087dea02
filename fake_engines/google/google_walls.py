"""The fake Google's block and consent pages: the CAPTCHA ("sorry") page and the "Before you continue" wall.

See :mod:`fake_engines.consent_pages` for how the walls are put in front of results and answered.
"""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote, urlencode

from fake_engines.markup import INVALID_HOST, esc, token

_SORRY = """\
<!DOCTYPE html>
<html>
<head>
<meta http-equiv="content-type" content="text/html; charset=utf-8">
<meta name="viewport" content="initial-scale=1">
<title>{url}</title>
</head>
<body style="margin:0;font-family:arial,sans-serif">
<div style="max-width:400px;margin:20px auto;padding:0 12px">
  <form id="captcha-form" action="/sorry/index" method="post">
    <script src="{invalid}/recaptcha/api.js" async defer></script>
    <div id="recaptcha" class="g-recaptcha" data-sitekey="{sitekey}" data-callback="submitCallback" data-s="{data_s}"></div>
    <input type="hidden" name="q" value="{q}">
    <input type="hidden" name="continue" value="{url}">
  </form>
  <hr noshade size="1" style="color:#ccc;background-color:#ccc">
  <div style="font-size:13px">
    <b>About this page</b><br><br>
    Our systems have detected unusual traffic from your computer network. This page checks to see if it's
    really you sending the requests, and not a robot.
    <a href="#" onclick="document.getElementById('infoDiv').style.display='block';">Why did this happen?</a><br><br>
    <div id="infoDiv" style="display:none;background-color:#eee;padding:10px;margin:0 0 15px 0;line-height:1.4em">
      This page appears when automated requests are detected from your computer network. The block will
      expire shortly after those requests stop.
    </div>
    IP address: {ip}<br>Time: {time}<br>URL: {url}<br>
  </div>
</div>
</body>
</html>
"""

CONSENT_PATH = "/ml"
"""The wall on the consent host (``consent.google.com/ml?continue=…`` on the real one)."""
LEGACY_CONSENT_PATH = "/consent"
"""The wall on the results host, where the ``consent`` page kind sends a client."""
CONSENT_SAVE_PATHS = ("/save", "/consent/save")
"""Where the wall's forms post (``/save``; the older ``/consent/save`` still answers)."""
CONSENT_COOKIE = "SOCS"
CONSENT_LANGUAGES = ("en", "de")

_WALL_TEXTS = {
    "en": {
        "title": "Before you continue to Google",
        "lead": "Google uses cookies and data to run its services, to keep them working and to protect them and "
        "the people who use them against spam, fraud and abuse.",
        "choices": "If you choose \u201cAccept all\u201d, cookies and data are also used to build new services, to "
        "measure how ads perform and to show content and ads tailored to you. If you choose \u201cReject "
        "all\u201d, they are not used for these extra purposes.",
        "more_text": "Select \u201cMore options\u201d to read more, including how to manage your privacy settings.",
        "reject": "Reject all",
        "accept": "Accept all",
        "more": "More options",
        "privacy": "Privacy Policy",
        "terms": "Terms of Service",
        "language": "English",
    },
    "de": {
        "title": "Bevor Sie zu Google weitergehen",
        "lead": "Google verwendet Cookies und Daten, um seine Dienste zu betreiben, ihren Betrieb zu sichern und "
        "sie und ihre Nutzer vor Spam, Betrug und Missbrauch zu schützen.",
        "choices": "Wenn Sie \u201eAlle akzeptieren\u201c wählen, werden Cookies und Daten auch verwendet, um neue "
        "Dienste zu entwickeln, die Wirkung von Werbung zu messen und auf Sie zugeschnittene Inhalte und "
        "Werbung zu zeigen. Wenn Sie \u201eAlle ablehnen\u201c wählen, werden sie für diese zusätzlichen "
        "Zwecke nicht verwendet.",
        "more_text": "Unter \u201eWeitere Optionen\u201c erfahren Sie mehr, auch darüber, wie Sie Ihre "
        "Datenschutzeinstellungen verwalten.",
        "reject": "Alle ablehnen",
        "accept": "Alle akzeptieren",
        "more": "Weitere Optionen",
        "privacy": "Datenschutzerklärung",
        "terms": "Nutzungsbedingungen",
        "language": "Deutsch",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script nonce="{nonce}">(function(){{window.consentBump={{host:'consent.google.com',gl:'DE',hl:'{lang}',pc:'n',
origin:'{origin_js}'}};window.WIZ_global_data={{Im6cmf:'/_/ConsentUi',cfb2h:'consent.google.com'}};}})();</script>
<style>
body{{margin:0;font-family:'Fake Sans Text',arial,sans-serif;color:#202124;background:#fff}}
.consent-bump{{max-width:600px;margin:48px auto;padding:0 24px}}
.consent-bump h1{{font-size:24px;font-weight:400;margin:16px 0 20px}}
.consent-bump p{{line-height:22px}}
.answers{{display:flex;gap:8px;margin:24px 0}}
.answers button{{min-width:140px;height:36px;border:0;border-radius:4px;background:#1a73e8;color:#fff;font-size:14px}}
.VtwTSb{{display:inline-block}}
.links a{{color:#5f6368;font-size:12px;margin-right:16px}}
</style>
</head>
<body>
<div class="consent-bump" role="dialog" aria-modal="true" aria-labelledby="consent-title">
  <img src="/thumbs/logo.png" alt="Google" width="75" height="24">
  <h1 id="consent-title">{title}</h1>
  <p>{lead}</p>
  <p>{choices}</p>
  <p>{more_text}</p>
  <div class="answers">
{forms}  </div>
  <a class="more-options" href="{more_href}">{more}</a>
  <div class="links">
    <span class="language">{language}</span>
    <a href="{invalid}/policies/privacy?hl={lang}">{privacy}</a>
    <a href="{invalid}/policies/terms?hl={lang}">{terms}</a>
  </div>
</div>
</body>
</html>
"""

_CONSENT_FORM = """\
    <form action="{action}" method="POST" class="VtwTSb">
      <input type="hidden" name="gl" value="DE">
      <input type="hidden" name="m" value="0">
      <input type="hidden" name="pc" value="n">
      <input type="hidden" name="continue" value="{cont}">
      <input type="hidden" name="hl" value="{lang}">
      <input type="hidden" name="src" value="1">
      <input type="hidden" name="cm" value="2">
      <input type="hidden" name="set_eom" value="{set_eom}">
      <button type="submit" class="tHlp8d" aria-label="{label}">{label}</button>
    </form>
"""


def render_sorry(continue_url: str, query: str, now: float, ip: str = "127.0.0.1") -> str:
    """The CAPTCHA ("sorry") page for a blocked ``continue_url``."""
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _SORRY.format(
        url=esc(continue_url),
        invalid=INVALID_HOST,
        sitekey=token("sitekey", length=40),
        data_s=token("s", continue_url, length=64),
        q=esc(query),
        ip=esc(ip),
        time=stamp,
    )


def render_consent(continue_url: str, origin: str = "", lang: str = "en") -> str:
    """The "Before you continue to Google" wall: a reject form (``set_eom=true``) and an accept form
    (``set_eom=false``), both posting to ``{origin}/save``, in ``lang`` (see :data:`CONSENT_LANGUAGES`)."""
    texts = _WALL_TEXTS[lang]
    forms = "".join(
        _CONSENT_FORM.format(
            action=esc(f"{origin}/save"), cont=esc(continue_url), lang=lang, set_eom=set_eom, label=esc(texts[choice])
        )
        for choice, set_eom in (("reject", "true"), ("accept", "false"))
    )
    more = f"{CONSENT_PATH}?{urlencode({'continue': continue_url, 'gl': 'DE', 'm': 1, 'pc': 'n', 'hl': lang})}"
    return _CONSENT.format(
        lang=lang,
        nonce=token("consent-nonce", continue_url),
        origin_js=origin.replace("'", ""),
        forms=forms,
        more_href=esc(more),
        invalid=INVALID_HOST,
        **{key: esc(value) for key, value in texts.items()},
    )


def consent_location(origin: str, continue_url: str, lang: str, path: str = CONSENT_PATH) -> str:
    """Where a results request is sent to meet the wall: ``{origin}/ml?continue=…&gl=DE&m=0&pc=n&cm=2&hl=…&src=1``."""
    return f"{origin}{path}?continue={quote(continue_url, safe='')}&gl=DE&m=0&pc=n&cm=2&hl={lang}&src=1"
