"""A content-keyed memo of mask measurements, kept with a run and reused when it is re-scored.

Judges with a memo look every measurement up by a key derived from the measured content (for
masks: the sha256 of the PNG bytes and the mask threshold) and compute it only on a miss. The
memo holds nothing but numbers a judge would compute again from the same bytes, so verdicts are
identical with and without it; a new profile (other band thresholds) re-scores a stored run
without decoding a mask. Pure: no I/O, standard library only.

The stored form (:meth:`MeasurementMemo.to_doc`) is plain JSON: ``{"version": ..., "values":
{key: value}}`` where a value is ``null``, a boolean, an integer, a finite float, a string or a
list of those. Python's ``json`` writes floats with ``repr``, so they load back bit-identical.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

MEASURE_VERSION: Final = "geometry-measure/1"
"""Version of the measurement algorithms behind the stored values.

Bump it whenever a measurement's algorithm changes (decoding, cropping, contours, Shapely
buffering, moments, ellipse or rectangle fits, key layout): a memo stored under another version
loads empty, so every value is measured again with the new code."""


class _Missing:
    """Type of :data:`MISSING` (a falsy singleton)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""What :meth:`MeasurementMemo.get` returns for a key it does not hold.

A stored ``None`` (an empty region has no centroid) is returned as ``None``: test with
``value is MISSING``.
"""


def _json_value(value: Any) -> Any:
    """``value`` as plain JSON data (tuples become lists), or :data:`MISSING`.

    :data:`MISSING` means it is not storable: a non-finite float, or a type JSON has no exact
    form for.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else MISSING
    if isinstance(value, list | tuple):
        items = [_json_value(v) for v in value]
        return MISSING if any(v is MISSING for v in items) else items
    return MISSING


class MeasurementMemo:
    """Measurements by content key, with hit/miss counters.

    One memo serves one evaluation at a time (it is not locked; do not share it between
    threads). ``hits`` and ``misses`` count :meth:`get` calls; ``added`` counts the values
    :meth:`put` stored or changed since the memo was created or loaded — 0 means the stored
    document is already complete and need not be written again.
    """

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        """An empty memo, or one holding ``values`` (plain JSON data, as :meth:`to_doc` gives)."""
        self._values: dict[str, Any] = dict(values or {})
        self.hits = 0
        self.misses = 0
        self.added = 0

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> MeasurementMemo:
        """Load a stored document; never raises.

        ``None``, another :data:`MEASURE_VERSION` or a malformed document gives an empty memo;
        entries that are not plain JSON data are dropped.
        """
        try:
            if not isinstance(doc, Mapping) or doc.get("version") != MEASURE_VERSION:
                return cls()
            values = doc.get("values")
            if not isinstance(values, Mapping):
                return cls()
            kept: dict[str, Any] = {}
            for key, value in values.items():
                plain = _json_value(value)
                if isinstance(key, str) and plain is not MISSING:
                    kept[key] = plain
            return cls(kept)
        except Exception:  # a broken document is a cache miss, never an error
            return cls()

    def to_doc(self) -> dict[str, Any]:
        """The stored form: ``{"version": MEASURE_VERSION, "values": {key: value}}``."""
        return {"version": MEASURE_VERSION, "values": dict(self._values)}

    def get(self, key: str) -> Any:
        """The value stored under ``key`` (possibly ``None``), or :data:`MISSING`."""
        value = self._values.get(key, MISSING)
        if value is MISSING:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> bool:
        """Store a measured value under ``key``; returns True when the value is stored.

        ``value`` is ``None``, bool, int, float, str or nested lists/tuples of those (tuples are
        stored as lists). A non-finite float is not stored: it is measured again next time.
        Raises ``TypeError`` for other types.
        """
        plain = _json_value(value)
        if plain is MISSING:
            if _is_nonfinite(value):
                return False
            raise TypeError(f"measurement {key!r} is not plain JSON data: {value!r}")
        if key not in self._values or self._values[key] != plain:
            self.added += 1
        self._values[key] = plain
        return True

    def __len__(self) -> int:
        """Number of stored measurements."""
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        """Whether a measurement is stored under ``key``."""
        return key in self._values

    def __repr__(self) -> str:
        """Size and hit/miss counters, for logs and debugging."""
        return (
            f"MeasurementMemo({len(self._values)} values, hits={self.hits}, "
            f"misses={self.misses}, added={self.added})"
        )


def _is_nonfinite(value: Any) -> bool:
    """True when ``value`` is, or contains, a NaN or infinite float."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list | tuple):
        return any(_is_nonfinite(v) for v in value)
    return False
