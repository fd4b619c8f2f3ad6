"""The revision scripts' DDL short forms build the columns, keys and indexes their specs say."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import Operations

from service.storage.migrations.ddl import (
    adding_columns,
    column,
    create_table,
    dropping_tables,
)
from service.storage.models import Base


@pytest.fixture
def connection() -> Iterator[sa.Connection]:
    """A SQLite connection under an Alembic context with the models' naming convention."""
    engine = sa.create_engine("sqlite://")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE runs (id VARCHAR(32) NOT NULL PRIMARY KEY)"))
        context = MigrationContext.configure(conn, opts={"target_metadata": Base.metadata})
        with Operations.context(context):
            yield conn
    engine.dispose()


def test_a_column_spec_gives_its_type_and_nullability() -> None:
    name = column("name str(200)")
    assert (name.name, name.type.compile(), name.nullable) == ("name", "VARCHAR(200)", False)
    seen = column("seen_at datetime null")
    assert isinstance(seen.type, sa.DateTime) and seen.type.timezone and seen.nullable
    assert column("flag bool", server_default=sa.false()).server_default is not None


@pytest.mark.parametrize("spec", ["name", "name varchar(10)", "name int maybe", "name str(x)"])
def test_a_bad_column_spec_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="column"):
        column(spec)


def test_create_table_names_its_keys_in_the_order_given(connection: sa.Connection) -> None:
    create_table(
        "flags",
        "id int",
        "run_id str(32)",
        "kind str(16) null",
        keys=("unique run_id kind", "run_id -> runs", "unique kind as uq_flags_once"),
        indexes=("run_id", "kind run_id as ix_flags_pair"),
    )
    sql = connection.execute(
        sa.text("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'flags' ORDER BY rowid")
    ).all()
    table = sql[0][1]
    constraints = [line.strip().rstrip(",") for line in table.splitlines() if "CONSTRAINT" in line]
    assert constraints == [
        "CONSTRAINT pk_flags PRIMARY KEY (id)",
        "CONSTRAINT uq_flags_run_id UNIQUE (run_id, kind)",
        "CONSTRAINT fk_flags_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (id)",
        "CONSTRAINT uq_flags_once UNIQUE (kind)",
    ]
    assert "kind VARCHAR(16)," in table and "run_id VARCHAR(32) NOT NULL" in table
    indexes = [name for name, _ in sql if name.startswith("ix_")]
    assert indexes == ["ix_flags_run_id", "ix_flags_pair"]


@pytest.mark.usefixtures("connection")
def test_a_bad_key_spec_is_refused() -> None:
    with pytest.raises(ValueError, match="key spec"):
        create_table("flags", "id int", keys=("run_id runs",))


def test_a_revision_that_adds_columns_fills_them_and_drops_them_last_first(
    connection: sa.Connection,
) -> None:
    connection.execute(sa.text("INSERT INTO runs (id) VALUES ('r1')"))
    upgrade, downgrade = adding_columns(
        "runs", "lane str(8) null", "cost float null", fill="UPDATE runs SET lane = 'cheap'"
    )
    upgrade()
    assert connection.execute(sa.text("SELECT id, lane, cost FROM runs")).all() == [
        ("r1", "cheap", None)
    ]
    downgrade()
    assert [c["name"] for c in sa.inspect(connection).get_columns("runs")] == ["id"]


def test_a_revision_that_creates_tables_drops_them_in_the_order_given(
    connection: sa.Connection,
) -> None:
    create_table("flags", "id int", "run_id str(32)", keys=("run_id -> runs",))
    dropping_tables("flags", "runs")()
    assert sa.inspect(connection).get_table_names() == []
