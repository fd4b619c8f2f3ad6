"""Validation of text and JSON values in request bodies: what cannot be stored and shown back.

A lone surrogate (a JSON escape such as ``ud800`` with its backslash) is a valid Python string
but not Unicode text: it cannot be encoded as UTF-8, so storing or answering it fails. ``NaN`` and
``Infinity`` are not JSON at all (RFC 8259), however lenient parsers accept them. Both are refused
with 422 naming the field.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import AfterValidator

from regua.storable import MAX_INT, check_storable

SURROGATE = re.compile("[\ud800-\udfff]")


def no_lone_surrogates(value: str) -> str:
    """``value`` when it is encodable Unicode text; raises ``ValueError`` naming the position."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"not valid Unicode text: lone surrogate {value[exc.start]!r} at character {exc.start}"
        ) from exc
    return value


def strict_json(value: Any, path: str = "") -> Any:
    """``value`` when it is a storable JSON document (:func:`regua.storable.check_storable`).

    Every key and string is text, every number finite and every integer within 2^53; raises
    ``ValueError`` naming the offending key path.
    """
    del path
    return check_storable(value)


Text = Annotated[str, AfterValidator(no_lone_surrogates)]
"""A string field that must be storable Unicode text."""
StorableJson = Annotated[dict[str, Any], AfterValidator(strict_json)]
"""A JSON object field that is stored as sent: storable text and numbers throughout."""


def displayable(value: Any) -> Any:
    """``value`` with lone surrogates replaced by U+FFFD and NaN/Infinity by None.

    For JSON stored before such input was refused, so that answering it cannot fail.
    """
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {displayable(str(k)): displayable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [displayable(v) for v in value]
    return value


RowId = Annotated[int, Path(ge=0, le=MAX_INT, description="a stored row's number")]
"""A numeric id in a path: a number no row can have (``2^70``) is refused with 422, not 500."""
Offset = Annotated[int, Query(ge=0, le=MAX_INT, description="rows to skip")]
"""How many rows a listing skips (bounded: no database keeps a larger offset)."""
SEED_MAX = 2**32 - 1
"""The largest bootstrap seed (a seed is a non-negative 32-bit number)."""
EvaluationQ = Annotated[
    int | None, Query(ge=0, le=MAX_INT, description="an evaluation of the run (default: latest)")
]
"""Which evaluation of a run a page shows."""
