"""Signals: parser health, canary mismatches and cost on engine_status; page yield and missing fields on
health_windows; the window's health counts on scraper_cycles.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 23:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EMPTY_LIST = sa.text("'[]'")
CYCLE_COUNTS = ("requests", "ok", "hard_blocks", "challenges", "soft_blocks", "errors", "cooldowns")


def _count(name: str) -> sa.Column:
    return sa.Column(name, sa.Integer(), server_default=sa.text("0"), nullable=False)


def upgrade() -> None:
    op.add_column("engine_status", sa.Column("parser_score", sa.Integer(), nullable=True))
    op.add_column("engine_status", sa.Column("parser_reasons", sa.JSON(), server_default=EMPTY_LIST, nullable=False))
    op.add_column("engine_status", sa.Column("canary_mismatches", sa.JSON(), server_default=EMPTY_LIST, nullable=False))
    op.add_column("engine_status", sa.Column("cost", sa.JSON(), nullable=True))
    op.add_column("health_windows", _count("result_pages"))
    op.add_column("health_windows", _count("yielding_pages"))
    op.add_column("health_windows", sa.Column("missing_fields", sa.JSON(), nullable=True))
    for name in CYCLE_COUNTS:
        op.add_column("scraper_cycles", _count(name))
    op.create_index("ix_scraper_cycles_window_end", "scraper_cycles", ["window_end"])


def downgrade() -> None:
    op.drop_index("ix_scraper_cycles_window_end", table_name="scraper_cycles")
    with op.batch_alter_table("scraper_cycles") as batch:
        for name in CYCLE_COUNTS:
            batch.drop_column(name)
    with op.batch_alter_table("health_windows") as batch:
        for name in ("missing_fields", "yielding_pages", "result_pages"):
            batch.drop_column(name)
    with op.batch_alter_table("engine_status") as batch:
        for name in ("cost", "canary_mismatches", "parser_reasons", "parser_score"):
            batch.drop_column(name)
