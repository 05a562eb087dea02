"""The fake Brave's block and consent pages: the proof-of-work CAPTCHA, the rate limit, the privacy notice.

See :mod:`fake_engines.consent_pages` for how the walls are put in front of results and answered.
"""

from __future__ import annotations

from fake_engines.brave.brave_kit import UNDEFINED, kit_script
from fake_engines.catalogue import digest, number
from fake_engines.markup import esc, token

POW_TITLES = ("PoW Captcha", "Brave Search - PoW Captcha")
"""The proof-of-work page's title, one of these per topic."""
POW_MESSAGE = "Confirm you're a human being"
RATELIMIT_TITLE = "Too Many Requests"

CONSENT_PATH = "/privacy-notice"
"""The privacy notice on the consent host: ``/privacy-notice?redirect=<results URL>&lang=…``."""
CONSENT_SAVE_PATH = "/privacy-notice/save"
CONSENT_COOKIE = "brave_consent"
CONSENT_LANGUAGES = ("en", "es")

_POW = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style>
body{{margin:0;font-family:system-ui,sans-serif;background:#f3f4f8;color:#1a1a1f}}
.captcha-page{{max-width:420px;margin:12vh auto;padding:32px;background:#fff;border-radius:16px;text-align:center}}
.captcha-box{{display:flex;align-items:center;gap:12px;justify-content:center;margin:24px 0}}
</style>
</head>
<body>
<div style="display: contents">
<main class="captcha-page">
  <img src="/thumbs/brave-logo.png" alt="Brave Search" width="104" height="28">
  <h1 class="captcha-title">{message}</h1>
  <p>We detected unusual activity from your network. Your browser solves a small puzzle to continue to your search.</p>
  <div id="pow-captcha" class="captcha-box">
    <button id="pow-start" type="button" disabled>I'm not a robot</button>
    <span class="captcha-status" aria-live="polite">Verifying your browser…</span>
  </div>
  <noscript>Please enable JavaScript to continue.</noscript>
</main>
{script}</div>
</body>
</html>
"""

RATELIMIT_PAGE = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Too Many Requests</title></head>
<body><h1>Too Many Requests</h1><p>You have sent too many requests. Please wait a moment and try again.</p></body>
</html>
"""

_CONSENT_TEXTS = {
    "en": {
        "title": "Brave Search - Privacy notice",
        "heading": "Your privacy on Brave Search",
        "text": "Brave Search does not track you or build a profile of you. A few cookies keep your settings, and "
        "optional ones help us count, anonymously, how the service is used.",
        "choose": "Accept them all, or reject the optional ones: you can change your mind at any time in Settings.",
        "reject": "Reject all",
        "accept": "Accept all",
        "privacy": "Privacy policy",
        "settings": "Settings",
    },
    "es": {
        "title": "Brave Search - Aviso de privacidad",
        "heading": "Tu privacidad en Brave Search",
        "text": "Brave Search no te rastrea ni crea un perfil sobre ti. Algunas cookies guardan tus ajustes, y otras "
        "opcionales nos ayudan a contar, de forma anónima, cómo se usa el servicio.",
        "choose": "Acéptalas todas o rechaza las opcionales: puedes cambiar de opinión en cualquier momento en "
        "Ajustes.",
        "reject": "Rechazar todo",
        "accept": "Aceptar todo",
        "privacy": "Política de privacidad",
        "settings": "Ajustes",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style>
body{{margin:0;font-family:system-ui,sans-serif;background:#f3f4f8;color:#1a1a1f}}
.privacy-notice{{max-width:480px;margin:12vh auto;padding:32px;background:#fff;border-radius:16px}}
.notice-actions{{display:flex;gap:12px;margin:24px 0 8px}}
.notice-actions button{{flex:1;height:40px;border-radius:20px;border:1px solid #3f39e8;background:#fff}}
.notice-actions button[data-consent=accept]{{background:#3f39e8;color:#fff}}
</style>
</head>
<body>
<div style="display: contents">
<main id="notice">
<div class="privacy-notice" data-notice="consent" role="dialog" aria-modal="true" aria-labelledby="notice-title">
  <img src="/thumbs/brave-logo.png" alt="Brave Search" width="104" height="28">
  <h1 id="notice-title" class="notice-title">{heading}</h1>
  <p>{text}</p>
  <p>{choose}</p>
  <form method="post" action="{action}">
    <input type="hidden" name="redirect" value="{redirect}">
    <input type="hidden" name="lang" value="{lang}">
    <div class="notice-actions">
      <button type="submit" name="choice" value="reject" data-consent="reject">{reject}</button>
      <button type="submit" name="choice" value="accept" data-consent="accept">{accept}</button>
    </div>
  </form>
  <p class="notice-links"><a href="/help/privacy">{privacy}</a> <a href="/settings">{settings}</a></p>
</div>
</main>
</div>
</body>
</html>
"""


def render_consent(redirect: str, lang: str = "en") -> str:
    """The privacy notice alone (no results): back to ``redirect`` once answered, in ``lang`` (en, es)."""
    return _CONSENT.format(
        lang=lang,
        action=CONSENT_SAVE_PATH,
        redirect=esc(redirect),
        **{key: esc(value) for key, value in _CONSENT_TEXTS[lang].items()},
    )


def render_pow(continue_path: str, topic: str, now: float) -> str:
    """The proof-of-work CAPTCHA page for a blocked ``continue_path``."""
    seed = digest("pow", continue_path, int(now))
    challenges = [
        {
            "salt": token("salt", seed, i, length=24),
            "target": "0000" + token("target", seed, i, length=12),
            "nonce_len": 8,
        }
        for i in range(3)
    ]
    data = {
        "challengeSet": {
            "id": token("pow-id", seed, length=22),
            "algorithm": "SHA-256",
            "difficulty": 16,
            "issued_at": int(now),
            "expires_at": int(now) + 300,
            "challenges": challenges,
            "signature": token("sig", seed, length=43),
        },
        "redirect": continue_path,
        "error": UNDEFINED,
    }
    nonce = token("nonce", seed, length=16)
    title = POW_TITLES[number("pow-title", topic) % len(POW_TITLES)]
    return _POW.format(title=esc(title), message=esc(POW_MESSAGE), script=kit_script(nonce, data, 9))
