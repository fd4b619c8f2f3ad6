"""Alembic environment: uses the connection handed over by :func:`service.storage.upgrade`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from service.storage.models import Base

target_metadata = Base.metadata


def run() -> None:
    """Run migrations online (a connection is given) or against the configured URL."""
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()
        return
    engine = create_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=target_metadata)
        context.run_migrations()


run()
