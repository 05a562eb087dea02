"""The page data of the fake Brave's inline SvelteKit script: a JavaScript object literal, not JSON."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from fake_engines.brave.brave_layout import IMAGES_HOST, INVALID_HOST, Result, brave_age
from fake_engines.markup import token

# -- a JavaScript object literal (what SvelteKit's devalue writes) --------------------------------------


class _Undefined:
    """Written as ``void 0``."""


UNDEFINED = _Undefined()
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def js_literal(value: Any) -> str:
    """``value`` as a JavaScript literal: unquoted identifier keys, ``void 0`` for :data:`UNDEFINED`."""
    if value is UNDEFINED:
        return "void 0"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = key if _IDENT.fullmatch(key) else js_literal(key)
            items.append(f"{name}:{js_literal(item)}")
        return "{" + ",".join(items) + "}"
    raise TypeError(f"no JavaScript literal for {value!r}")


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%S")


def result_data(result: Result, now: float) -> dict[str, Any]:
    a = result.article
    data: dict[str, Any] = {
        "title": a.title,
        "url": result.url,
        "is_source_local": False,
        "is_source_both": False,
        "description": a.snippet,
        "page_age": _iso(a.published_at(now)),
        "profile": {
            "name": a.source,
            "url": f"https://{result.host}/",
            "long_name": result.host,
            "img": f"{IMAGES_HOST}/{token('fav', result.host, length=16)}/favicon",
        },
        "family_friendly": True,
        "meta_url": {
            "scheme": "https",
            "netloc": result.host,
            "hostname": result.host,
            "favicon": f"{IMAGES_HOST}/{token('fav', result.host, length=16)}/favicon",
            "path": result.breadcrumb,
        },
        "age": brave_age(a.age_seconds),
        "extra_snippets": UNDEFINED,
    }
    if result.thumb:
        data["thumbnail"] = {"src": result.thumb, "original": UNDEFINED, "logo": False}
    return data


def query_data(topic: str, page: int) -> dict[str, Any]:
    return {
        "original": topic,
        "show_strict_warning": False,
        "is_navigational": False,
        "is_news_breaking": False,
        "spellcheck_off": True,
        "country": "us",
        "bad_results": False,
        "should_fallback": False,
        "postal_code": "",
        "city": "",
        "header_country": "",
        "state": "",
        "summary_key": UNDEFINED,
        "offset": page,
    }


def kit_script(nonce: str, page_data: dict[str, Any], node: int) -> str:
    payload = js_literal(
        {
            "node_ids": [0, 2, node],
            "data": [
                {
                    "type": "data",
                    "data": {
                        "country": "us",
                        "useLocation": False,
                        "theme": "system",
                        "safesearch": "moderate",
                        "ui_lang": "en-us",
                    },
                    "uses": {},
                },
                None,
                {"type": "data", "data": page_data, "uses": {"search_params": ["q", "offset", "tf", "source"]}},
            ],
            "form": None,
            "error": None,
        }
    )
    return f"""\
<script nonce="{nonce}">
  {{
    __sveltekit_{nonce[:6].lower().replace("-", "x").replace("_", "y")} = {{
      base: new URL(".", location).pathname.slice(0, -1),
      assets: "{INVALID_HOST}/serp/v2"
    }};
    const element = document.currentScript.parentElement;
    Promise.all([
      import("{INVALID_HOST}/serp/v2/_app/immutable/entry/start.{nonce[:8]}.js"),
      import("{INVALID_HOST}/serp/v2/_app/immutable/entry/app.{nonce[:8]}.js")
    ]).then(([kit, app]) => {{
      kit.start(app, element, {payload});
    }});
  }}
</script>
"""
