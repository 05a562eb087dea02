"""Consent: how many of a stored health window's challenges were consent walls (``health_windows.consent_walls``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 18:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "health_windows", sa.Column("consent_walls", sa.Integer(), server_default=sa.text("0"), nullable=False)
    )


def downgrade() -> None:
    with op.batch_alter_table("health_windows") as batch:
        batch.drop_column("consent_walls")
