"""Alembic migrations of the topicstreams database (run by :func:`topicstreams.storage.migrate.upgrade`)."""
