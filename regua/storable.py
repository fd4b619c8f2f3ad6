"""The one text validator for documents users give regua before anything of them is stored.

A document (a task spec, an experiment file, a request body) is storable when:

- every string, key included, is Unicode text (no lone surrogate such as ``U+D800``: it
  cannot be encoded as UTF-8, so storing or answering it fails) of at most ``max_chars``
  characters;
- every integer lies within ``±`` :data:`MAX_INT` (what every database column and JSON reader
  keeps exactly); every float is finite;
- it nests at most :data:`MAX_DEPTH` deep.

:func:`check_storable` raises :class:`NotStorableError` (a ``ValueError``) naming the first
offending field (``arms[1].name``), which each caller turns into its own error (422 through the
error hierarchy, a CLI message).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT", "MAX_TEXT", "NotStorableError", "check_storable", "check_text"]

MAX_INT = 2**53
"""The largest magnitude of a stored integer (exact in JSON doubles and 64-bit columns)."""
MAX_TEXT = 100_000
"""The default longest string."""
MAX_DEPTH = 64
"""The deepest nesting of a document."""

Loc = tuple[str | int, ...]


class NotStorableError(ValueError):
    """A value that cannot be stored; ``loc`` is its field path, ``problem`` the reason."""

    def __init__(self, loc: Loc, problem: str) -> None:
        """Name the field and the problem."""
        self.loc = loc
        self.problem = problem
        super().__init__(f"{problem} at {self.path!r}" if loc else problem)

    @property
    def field(self) -> str:
        """The dotted field path (``arms.1.name``), as validation errors name fields."""
        return ".".join(str(p) for p in self.loc)

    @property
    def path(self) -> str:
        """The JSON key path (``arms[1].name``)."""
        out = ""
        for part in self.loc:
            out += f"[{part}]" if isinstance(part, int) else f".{part}"
        return out.lstrip(".")


def text_problem(value: str, max_chars: int = MAX_TEXT) -> str | None:
    """Why ``value`` is not storable text (None: it is)."""
    if len(value) > max_chars:
        return f"text of {len(value)} characters (at most {max_chars})"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"not valid Unicode text: lone surrogate {value[exc.start]!r} at character {exc.start}"
        )
    return None


def check_text(value: str, *, max_chars: int = MAX_TEXT, loc: Loc = ()) -> str:
    """``value`` when it is storable text; :class:`NotStorableError` otherwise."""
    problem = text_problem(value, max_chars)
    if problem is not None:
        raise NotStorableError(loc, problem)
    return value


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int) and abs(value) > MAX_INT:
        return "integer out of range (at most 2^53 in magnitude)"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a JSON number (NaN and Infinity are refused)"
    return None


def check_storable(value: Any, loc: Loc = (), *, max_chars: int = MAX_TEXT) -> Any:
    """``value`` when it is a storable document (see the module); :class:`NotStorableError`."""
    if len(loc) > MAX_DEPTH:
        raise NotStorableError(loc[:MAX_DEPTH], f"nested more than {MAX_DEPTH} deep")
    if isinstance(value, str):
        check_text(value, max_chars=max_chars, loc=loc)
    elif isinstance(value, dict):
        for key, item in value.items():
            name = str(key)
            check_text(name, max_chars=min(max_chars, 1000), loc=loc)
            check_storable(item, (*loc, name), max_chars=max_chars)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_storable(item, (*loc, index), max_chars=max_chars)
    else:
        problem = _scalar_problem(value)
        if problem is not None:
            raise NotStorableError(loc, problem)
    return value
