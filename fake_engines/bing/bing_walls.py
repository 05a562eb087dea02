"""The fake Bing's block and consent pages: the Turing challenge and the cookie notice.

See :mod:`fake_engines.consent_pages` for how the walls are put in front of results and answered.
"""

from __future__ import annotations

from urllib.parse import urlencode

from fake_engines.markup import INVALID_HOST, esc

CAPTCHA_PATH = "/turing/captcha/challenge"
CAPTCHA_SENTENCE = "Please solve the challenge below to continue"

CONSENT_PATH = "/cookieconsent"
"""The cookie notice on the consent host: ``/cookieconsent?ru=<results URL>&setlang=…``."""
CONSENT_SAVE_PATH = "/cookieconsent/save"
CONSENT_COOKIE = "BCP"
CONSENT_LANGUAGES = ("en", "fr")

_CAPTCHA = """\
<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex, nofollow">
<title>Bing</title>
<script src="{invalid}/rp/turing-challenge.js" async defer></script>
</head>
<body>
<div id="b_captcha" class="captcha">
  <img src="/thumbs/bing-logo.png" alt="Bing" width="60" height="24">
  <h1 class="captcha_header">One last step</h1>
  <p class="captcha_text">Please solve the challenge below to continue</p>
  <div id="turingcaptcha" class="turing-challenge" data-iid="captcha.challenge" data-vid="{vid}"></div>
  <form id="turingcaptchaform" action="/turing/captcha/verify" method="post">
    <input type="hidden" name="iid" value="captcha.challenge">
    <input type="hidden" name="vid" value="{vid}">
    <input type="hidden" name="redirect" value="{redirect}">
    <button type="submit" id="turing_submit">Continue</button>
  </form>
</div>
</body>
</html>
"""

_CONSENT_TEXTS = {
    "en": {
        "title": "Bing",
        "heading": "We value your privacy",
        "text": "Microsoft and its partners use cookies and similar technologies to deliver, maintain and improve "
        "Bing, to keep it safe and, with your permission, to personalise the ads you see and measure how "
        "they perform.",
        "choose": "Choose \u201cAccept\u201d to allow these optional cookies, or \u201cReject\u201d to refuse them. "
        "You can change your choice at any time in the settings.",
        "reject": "Reject",
        "accept": "Accept",
        "privacy": "Privacy Statement",
        "manage": "Manage preferences",
    },
    "fr": {
        "title": "Bing",
        "heading": "Votre vie privée compte pour nous",
        "text": "Microsoft et ses partenaires utilisent des cookies et des technologies similaires pour fournir, "
        "maintenir et améliorer Bing, pour le sécuriser et, avec votre accord, pour personnaliser les "
        "publicités que vous voyez et en mesurer l'efficacité.",
        "choose": "Choisissez \u00ab\u00a0Accepter\u00a0\u00bb pour autoriser ces cookies facultatifs, ou "
        "\u00ab\u00a0Refuser\u00a0\u00bb pour les refuser. Vous pouvez modifier votre choix à tout "
        "moment dans les paramètres.",
        "reject": "Refuser",
        "accept": "Accepter",
        "privacy": "Déclaration de confidentialité",
        "manage": "Gérer les préférences",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style type="text/css">
body{{margin:0;font-family:'Fake Segoe',Arial,Helvetica,sans-serif;font-size:14px;color:#444;background:#f5f5f5}}
.bnp_cookie_banner{{max-width:720px;margin:10vh auto;padding:24px 28px;background:#fff;border-radius:8px}}
.bnp_title{{font-size:20px;font-weight:600;margin:12px 0}}
.bnp_btn_row{{display:flex;gap:12px;margin-top:20px}}
.bnp_btn_row button{{min-width:160px;height:36px;border:1px solid #174ae4;border-radius:18px;background:#fff}}
#bnp_btn_accept{{background:#174ae4;color:#fff}}
</style>
</head>
<body class="b_consent">
<div id="bnp_container" class="bnp_cookie_banner" role="dialog" aria-modal="true" aria-labelledby="bnp_title">
  <img src="/thumbs/bing-logo.png" alt="Bing" width="60" height="24">
  <div id="bnp_title" class="bnp_title">{heading}</div>
  <p id="bnp_text">{text}</p>
  <p>{choose} <a href="{invalid}/privacystatement">{privacy}</a></p>
  <form id="bnp_form" method="post" action="{action}">
    <input type="hidden" name="ru" value="{ru}">
    <input type="hidden" name="setlang" value="{lang}">
    <div class="bnp_btn_row">
      <button type="submit" id="bnp_btn_reject" class="bnp_btn" name="choice" value="reject">{reject}</button>
      <button type="submit" id="bnp_btn_accept" class="bnp_btn" name="choice" value="accept">{accept}</button>
    </div>
  </form>
  <a id="bnp_btn_preference" href="{manage_href}">{manage}</a>
</div>
</body>
</html>
"""


def render_consent(ru: str, lang: str = "en") -> str:
    """The cookie notice alone (no cards): back to ``ru`` once answered, in ``lang`` (en, fr)."""
    manage = f"{CONSENT_PATH}?{urlencode({'ru': ru, 'setlang': lang, 'manage': '1'})}"
    return _CONSENT.format(
        lang=lang,
        action=CONSENT_SAVE_PATH,
        ru=esc(ru),
        invalid=INVALID_HOST,
        manage_href=esc(manage),
        **{key: esc(value) for key, value in _CONSENT_TEXTS[lang].items()},
    )


def render_captcha(redirect: str, vid: str) -> str:
    """The Turing challenge page (served with 200) for a blocked ``redirect`` URL."""
    return _CAPTCHA.format(invalid=INVALID_HOST, vid=esc(vid), redirect=esc(redirect))
