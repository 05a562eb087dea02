"""Scraped text that would spoof what a reader sees (Unicode bidirectional overrides and isolates), in a feed database:
one row as an older version stored it, one stored by today's pipelines."""

from __future__ import annotations

from tests.support.feed_data import article, store, write_rows

SPOOF = "Harmless \u202egpj.exe"
"""Shows as "Harmless exe.jpg" where the override is kept."""

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""The embeddings, overrides and isolates: none may reach a reader."""

SHOWN = [
    ("Harmless gpj.exe", "Daily Trusted News", "Read this"),
    ("Legacy Harmless gpj.exe", "swen yliad", "Open the attachment"),
]
"""(title, source, snippet) of :func:`store_spoofed`'s two events as every view shows them, newest first."""


def store_spoofed(db: str) -> str:
    """*db* with an event an older version stored (its controls kept: written as it is), then one stored by the
    project's pipelines (which drop them); both of the topic ``climate``."""
    write_rows(
        db,
        [
            {
                "news_id": "a" * 32,
                "url": "https://news.example/legacy",
                "topic": "climate",
                "engine": "google",
                "title": f"Legacy {SPOOF}",
                "source": "\u202eswen yliad",
                "snippet": "Open \u2067the\u2069 attachment",
                "published_at": None,
            }
        ],
    )
    store(db, [article("fresh", title=SPOOF, source="Daily \u202eTrusted\u202c News", snippet="Read \u202athis")])
    return db
