"""The scale-out queue: procrastinate's schema and the fleet-wide slot table.

On PostgreSQL this applies procrastinate's own schema (its job, worker, event and periodic
tables and SQL functions, as shipped in the installed package) and creates ``regua_slots``, the
lease table that bounds judge and generation calls in flight across every worker. On SQLite
(the embedded default, which never uses procrastinate) it does nothing.

Revision ID: 0800_queue
Revises: 0710_task_pools
"""

from __future__ import annotations

from alembic import op
from procrastinate.schema import SchemaManager

revision = "0800_queue"
down_revision = "0710_task_pools"

SLOTS_DDL = """
CREATE TABLE IF NOT EXISTS regua_slots (
    key varchar(200) NOT NULL,
    slot integer NOT NULL,
    holder varchar(200),
    expires_at timestamp with time zone,
    PRIMARY KEY (key, slot)
)
"""


def upgrade() -> None:
    """Apply procrastinate's schema and create ``regua_slots`` (PostgreSQL only)."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    present = bind.exec_driver_sql("SELECT to_regclass('procrastinate_jobs')").scalar()
    if present is None:
        # the schema holds several statements and dollar-quoted functions: one simple query
        raw = bind.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        try:
            cursor.execute(SchemaManager.get_schema())
        finally:
            cursor.close()
    op.execute(SLOTS_DDL)


def downgrade() -> None:
    """Drop ``regua_slots`` and procrastinate's tables, functions and types (PostgreSQL only)."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute("DROP TABLE IF EXISTS regua_slots")
    for table in ("procrastinate_events", "procrastinate_periodic_defers", "procrastinate_jobs"):
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    op.execute("DROP TABLE IF EXISTS procrastinate_workers CASCADE")
    functions = bind.exec_driver_sql(
        "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "WHERE starts_with(p.proname, 'procrastinate_')"
    ).scalars()
    for signature in list(functions):
        op.execute(f"DROP FUNCTION IF EXISTS {signature} CASCADE")
    for typ in ("procrastinate_job_to_defer_v1", "procrastinate_job_event_type"):
        op.execute(f"DROP TYPE IF EXISTS {typ} CASCADE")
    op.execute("DROP TYPE IF EXISTS procrastinate_job_status CASCADE")
