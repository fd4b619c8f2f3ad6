"""Engine creation, schema migration on start-up, and transactional sessions.

SQLite (the embedded default) is used in WAL mode with a process-wide writer lock, so threads of
one process never race for the write lock; PostgreSQL uses ordinary transactions and row locks.
"""

from __future__ import annotations

import select
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Dialect, Engine, create_engine, event, inspect, text
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.orm import Session, sessionmaker

from regua.errors import StorageError
from service.storage.files import PRIVATE_FILE, private_dir, private_file, tighten

try:  # PostgreSQL's driver; an install for SQLite only may lack it
    import psycopg
    from psycopg import pq
except ImportError:  # then no connection is a psycopg one: every pre-ping is the real one
    HAVE_PSYCOPG = False
else:
    HAVE_PSYCOPG = True

_SQLITE_WRITE_LOCK = threading.RLock()
MIGRATION_LOCK_KEY = 0x726567  # "reg"


def migrations_config(engine: Engine) -> Config:
    """An Alembic config pointing at the migrations bundled in ``service/storage/migrations``."""
    cfg = Config()
    script_location = resources.files("service.storage") / "migrations"
    cfg.set_main_option("script_location", str(script_location))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent; runs on every start-up)."""
    cfg = migrations_config(engine)
    with _SQLITE_WRITE_LOCK, engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # several processes may start at once
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "heads")


class Database:
    """One engine plus session factories; the only way service code reaches the database."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        """Open the database at ``url``; with ``migrate`` bring its schema up to date."""
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {"pool_recycle": 1800}
        if self.is_sqlite:
            path = url.removeprefix("sqlite:///")
            if path and path != ":memory:":
                _private_sqlite(Path(path))
            kwargs["connect_args"] = {"timeout": 60, "check_same_thread": False}
        else:
            kwargs["pool_size"] = 20
            kwargs["max_overflow"] = 20
        try:
            self.engine = create_engine(url, **kwargs)
        except Exception as exc:  # bad URL, missing driver
            raise StorageError(f"cannot open database {url!r}: {exc}") from exc
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:  # a server restart leaves dead pooled connections: checked before use
            event.listen(self.engine, "checkout", pre_ping(self.engine.dialect))
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # A Database dropped without dispose() (a caller's error path, a failed migration below)
        # closes its pooled connections when it is collected, instead of leaving open driver
        # connections to the garbage collector.
        self._closer = weakref.finalize(self, self.engine.dispose)
        if migrate:
            try:
                upgrade(self.engine)
            except BaseException:
                self.dispose()
                raise

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading; closing it ends the transaction, loaded objects stay usable."""
        with self._sessions() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose work is committed as one transaction, or not at all."""
        lock = _SQLITE_WRITE_LOCK if self.is_sqlite else None
        if lock is not None:
            lock.acquire()
        try:
            with self._sessions() as session, session.begin():
                yield session
        finally:
            if lock is not None:
                lock.release()

    def table_names(self) -> list[str]:
        """The tables present in the database (for diagnostics and tests)."""
        return sorted(inspect(self.engine).get_table_names())

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def pre_ping(dialect: Dialect) -> Callable[[Any, Any, Any], None]:
    """The pool's pre-ping (a ``checkout`` listener), skipping the round trip on a quiet socket.

    A server that restarts or terminates a backend sends it an error and closes its end, which
    leaves the socket readable; an idle pooled connection with nothing to read and a healthy
    transaction state is alive as far as a ping could tell, so only the others are pinged with
    the dialect's ping. A ping that finds the connection gone has the pool drop its connections
    older than now and check out a new one (as ``pool_pre_ping`` does); any other error is
    raised.
    """

    def checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if quiet_connection(dbapi_connection):
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as err:
            if dialect.is_disconnect(err, dbapi_connection, None):
                raise InvalidatePoolError(f"pre-ping: the connection is gone ({err})") from err
            raise

    return checkout


def quiet_connection(dbapi_connection: Any) -> bool:
    """Whether a psycopg connection (sync or async) is open, idle, with nothing to read.

    A server that restarts or terminates a backend leaves its socket readable; such a
    connection (or a broken one) is not quiet and deserves a real check before use.
    """
    kinds = (psycopg.Connection, psycopg.AsyncConnection) if HAVE_PSYCOPG else ()
    if not kinds or not isinstance(dbapi_connection, kinds):
        return False
    try:
        if dbapi_connection.broken:
            return False
        pgconn = dbapi_connection.pgconn
        if pgconn.status != pq.ConnStatus.OK:
            return False
        if pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return False
        poller = select.poll()
        poller.register(pgconn.socket, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except Exception:  # no poll() here, a closed socket: let the real ping decide
        return False


def _private_sqlite(path: Path) -> None:
    """Create the SQLite file ``0600`` before SQLite does (its journal files copy its mode)."""
    if not path.parent.exists():
        private_dir(path.parent)
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(path.with_name(path.name + suffix), PRIVATE_FILE)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.close()
