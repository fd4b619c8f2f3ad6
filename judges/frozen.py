"""Freezing and canonical serialisation of the JSON-like data the judge types carry.

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NoReturn


class FrozenDict(dict[str, Any]):
    """A read-only dict: what frozen judge data holds instead of a dict.

    Unlike ``types.MappingProxyType`` it pickles, so verdicts cross to judging processes.
    """

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("frozen judge data cannot be changed")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        """Pickle as the class called with a plain copy (not item by item)."""
        return (FrozenDict, (dict(self),))


def freeze(value: Any) -> Any:
    """Deep-freeze JSON-like data: dicts become read-only mappings, lists become tuples."""
    if isinstance(value, Mapping):
        return FrozenDict({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def plain(value: Any) -> Any:
    """Turn frozen data back into plain JSON-able dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


def canonical_json(value: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces) used for content hashes."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"))
