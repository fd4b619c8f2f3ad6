"""Short forms of the DDL the revision scripts write: columns, tables and indexes from specs.

A column spec is ``"NAME TYPE"`` or ``"NAME TYPE null"``, TYPE one of ``int``, ``float``,
``bool``, ``text``, ``json``, ``datetime`` (with time zone) or ``str(N)``; without ``null`` the
column is ``NOT NULL``. A key spec (a table's constraints besides its primary key, in the order
they are created, which is the order SQLite keeps them in) is ``"COLUMN -> TABLE"`` (a foreign
key to ``TABLE.id``) or ``"unique COLUMN..."``, optionally ``"... as NAME"``; without a name,
the metadata's naming convention names it, as Alembic's autogenerate would. An index spec is
``"COLUMN..."``, optionally ``"... as NAME"``.

The helpers build exactly the constructs the revisions were first written with, so the schema
they create is the same to the byte on SQLite and PostgreSQL: rewrite a revision with them only
when a dump of the schema before and after is identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

TYPES: dict[str, Callable[[], sa.types.TypeEngine[Any]]] = {
    "int": sa.Integer,
    "float": sa.Float,
    "bool": sa.Boolean,
    "text": sa.Text,
    "json": sa.JSON,
    "datetime": lambda: sa.DateTime(timezone=True),
}
_STRING = re.compile(r"str\((\d+)\)")


def column_type(word: str) -> sa.types.TypeEngine[Any]:
    """The SQL type a spec's TYPE word stands for."""
    string = _STRING.fullmatch(word)
    if string is not None:
        return sa.String(length=int(string.group(1)))
    if word not in TYPES:
        raise ValueError(f"unknown column type {word!r}")
    return TYPES[word]()


def column(spec: str, server_default: str | sa.ColumnElement[Any] | None = None) -> sa.Column[Any]:
    """The column of ``"NAME TYPE [null]"``, with its ``server_default`` if one is given."""
    words = spec.split()
    if len(words) not in (2, 3) or words[2:] not in ([], ["null"]):
        raise ValueError(f"bad column spec {spec!r}")
    return sa.Column(
        words[0], column_type(words[1]), nullable=len(words) == 3, server_default=server_default
    )


def _named(spec: str) -> tuple[list[str], str | None]:
    """The words of a key or index spec and the name given after ``as`` (or None)."""
    words, _, name = spec.partition(" as ")
    return words.split(), name.strip() or None


def key(table: str, spec: str) -> sa.Constraint:
    """The constraint of ``"COLUMN -> TABLE"`` or ``"unique COLUMN..."`` on ``table``."""
    words, name = _named(spec)
    if len(words) == 3 and words[1] == "->":
        local, _, target = words
        fk_name = name or f"fk_{table}_{local}_{target}"
        return sa.ForeignKeyConstraint([local], [f"{target}.id"], name=op.f(fk_name))
    if words[0] == "unique" and len(words) > 1:
        return sa.UniqueConstraint(*words[1:], name=op.f(name or f"uq_{table}_{words[1]}"))
    raise ValueError(f"bad key spec {spec!r}")


def create_table(
    name: str,
    *columns: str | sa.Column[Any],
    keys: tuple[str, ...] = (),
    primary: str = "id",
    indexes: tuple[str, ...] = (),
) -> None:
    """Create table ``name``: its columns, primary key ``primary``, ``keys``, then ``indexes``."""
    op.create_table(
        name,
        *(column(c) if isinstance(c, str) else c for c in columns),
        sa.PrimaryKeyConstraint(primary, name=op.f(f"pk_{name}")),
        *(key(name, spec) for spec in keys),
    )
    create_indexes(name, *indexes)


def create_indexes(table: str, *specs: str) -> None:
    """Create an index on ``table`` per ``"COLUMN... [as NAME]"`` (named ``ix_TABLE_COLUMN``)."""
    for spec in specs:
        columns, name = _named(spec)
        op.create_index(op.f(name or f"ix_{table}_{columns[0]}"), table, columns, unique=False)


def drop_tables(*names: str) -> None:
    """Drop the tables in this order (their indexes go with them)."""
    for name in names:
        op.drop_table(name)


def dropping_tables(*names: str) -> Callable[[], None]:
    """The ``downgrade`` of a revision that only creates tables: drop ``names`` in this order."""

    def downgrade() -> None:
        """Drop the tables the revision created."""
        drop_tables(*names)

    return downgrade


def add_columns(table: str, *columns: str | sa.Column[Any]) -> None:
    """Add the columns (specs or built columns) to ``table``, in batch mode for SQLite."""
    with op.batch_alter_table(table) as batch:
        for c in columns:
            batch.add_column(column(c) if isinstance(c, str) else c)


def drop_columns(table: str, *names: str) -> None:
    """Drop the columns from ``table`` in this order, in batch mode for SQLite."""
    with op.batch_alter_table(table) as batch:
        for name in names:
            batch.drop_column(name)


def adding_columns(
    table: str, *columns: str | sa.Column[Any], fill: str | None = None
) -> tuple[Callable[[], None], Callable[[], None]]:
    """``upgrade`` and ``downgrade`` of a revision that only adds ``columns`` to ``table``.

    The upgrade adds them, then runs ``fill`` (SQL that gives the existing rows their values) if
    given; the downgrade drops them, the last added first.
    """
    names = [c.split()[0] if isinstance(c, str) else c.name for c in columns]

    def upgrade() -> None:
        """Add the columns (and fill them)."""
        add_columns(table, *columns)
        if fill is not None:
            op.execute(fill)

    def downgrade() -> None:
        """Drop the columns."""
        drop_columns(table, *reversed(names))

    return upgrade, downgrade
