"""Round-trip counters for ``benchmarks/scale.py --trace`` (imported by every fleet process).

Active only when ``REGUA_PROBE_DIR`` is set: counts the SQL statements, commits and S3 calls
this process makes and writes them as JSON to ``REGUA_PROBE_DIR/<pid>.json`` every 0.2 s, so
the benchmark can take per-run differences. Measurement only: nothing the service does changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

_DIR = os.environ.get("REGUA_PROBE_DIR")
COUNTS: Counter[str] = Counter()
_LOCK = threading.Lock()


def _count(key: str) -> None:
    with _LOCK:
        COUNTS[key] += 1


_TEXTS = bool(os.environ.get("REGUA_PROBE_SQL"))


def _what(args: tuple[Any, ...]) -> str:
    query = args[1] if len(args) > 1 else ""
    text = query if isinstance(query, str) else getattr(query, "_obj", None) or repr(query)
    # an empty query is a round trip too: psycopg_pool's connection check sends one
    return " ".join(str(text).split())[:70] or "<empty query: a pool's connection check>"


def _wrap(owner: Any, name: str, key: str, label: str | None = None) -> None:
    """Count calls of ``owner.name`` under ``key``; with texts, under ``label`` or the query."""
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        _count(key)
        if _TEXTS:
            _count(f"q:{label or _what(args)}")
        return original(*args, **kwargs)

    setattr(owner, name, counted)


def _wrap_async(owner: Any, name: str, key: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    async def counted(*args: Any, **kwargs: Any) -> Any:
        _count(key)
        if _TEXTS:
            _count(f"aq:{_what(args)}")
        return await original(*args, **kwargs)

    setattr(owner, name, counted)


def _install() -> None:
    import psycopg

    _wrap(psycopg.Cursor, "execute", "sql")
    _wrap(psycopg.Cursor, "executemany", "sql")
    _wrap(psycopg.Connection, "commit", "commit", "<commit>")
    _wrap_async(psycopg.AsyncCursor, "execute", "sql_async")
    _wrap_async(psycopg.AsyncCursor, "executemany", "sql_async")
    try:
        import botocore.client
    except ImportError:
        pass
    else:
        original = botocore.client.BaseClient._make_api_call

        def api_call(self: Any, operation: str, params: Any) -> Any:
            _count(f"s3.{operation}")
            return original(self, operation, params)

        botocore.client.BaseClient._make_api_call = api_call  # type: ignore[method-assign]
    path = os.path.join(str(_DIR), f"{os.getpid()}.json")

    def dump() -> None:
        tick = threading.Event()
        while not tick.wait(0.2):
            with _LOCK:
                text = json.dumps({"argv": sys.argv[1:3], **COUNTS})
            tmp = f"{path}.tmp"
            try:
                with open(tmp, "w") as handle:
                    handle.write(text)
                os.replace(tmp, path)
            except OSError:  # a process that cannot write there counts for nobody
                return

    threading.Thread(target=dump, name="regua-probe", daemon=True).start()


if _DIR:
    with contextlib.suppress(ImportError):  # not a service process (a sandboxed renderer)
        _install()
