"""Alembic environment of topicstreams.

:func:`topicstreams.storage.migrate.upgrade` passes an open connection, already inside the
transaction that holds the migration lock, as ``config.attributes["connection"]``. Without one
(e.g. ``python -m topicstreams.storage.migrate revision``), the database URL comes from the
``sqlalchemy.url`` option or the ``TOPICSTREAMS_DATABASE_URL`` environment variable.
"""

from __future__ import annotations

import os
from typing import Any

from alembic import context
from sqlalchemy.engine import make_url

from topicstreams.storage.models import Base, UTCDateTime
from topicstreams.storage.search import include_name

config = context.config
target_metadata = Base.metadata


def _render_item(type_: str, obj: Any, autogen_context: Any) -> str | bool:
    # Migrations must not depend on application types: UTCDateTime is a DateTime(timezone=True).
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _options(dialect_name: str) -> dict[str, Any]:
    return {
        "target_metadata": target_metadata,
        # SQLite cannot ALTER most things: batch mode recreates the table instead.
        "render_as_batch": dialect_name == "sqlite",
        "render_item": _render_item,
        "compare_type": True,
        # The search index is made by hand (FTS5 on SQLite), not described by the models: left alone.
        "include_name": include_name,
    }


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("TOPICSTREAMS_DATABASE_URL", "")
    if not url:
        raise RuntimeError("no database: set sqlalchemy.url or TOPICSTREAMS_DATABASE_URL")
    return url


def run_migrations_offline() -> None:
    url = _url()
    context.configure(url=url, literal_binds=True, **_options(make_url(url).get_backend_name()))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, **_options(connection.dialect.name))
        with context.begin_transaction():
            context.run_migrations()
        return

    from sqlalchemy.pool import NullPool

    from topicstreams.storage.db import make_database

    db = make_database(_url(), foreign_keys=False, poolclass=NullPool)
    try:
        with db.begin() as connection:
            context.configure(connection=connection, **_options(connection.dialect.name))
            with context.begin_transaction():
                context.run_migrations()
    finally:
        db.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
