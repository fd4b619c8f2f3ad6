"""Outcomes of built-in checks, and the results shared between documents.

Most checks pass most documents with the same words. An outcome made by :func:`constant` (or
kept by :func:`memoized`) is never dropped, so its identity can stand for one immutable
:class:`CheckResult` per check, built once (:func:`result_of`) instead of once per document.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from checks.types import CheckResult, CheckStatus, Evidence

Outcome = tuple[CheckStatus, tuple[Evidence, ...]]
K = TypeVar("K", bound=Hashable)

MEMO_MAX = 1024
_KEPT_IDS: set[int] = set()
_RESULTS: dict[tuple[str, str, int], CheckResult] = {}
_CONSTANTS: dict[Outcome, Outcome] = {}


def result_of(check_id: str, version: str, outcome: Outcome) -> CheckResult:
    """The check's result for ``outcome``: one shared object for a kept outcome."""
    if id(outcome) not in _KEPT_IDS:
        return CheckResult(check_id, version, *outcome)
    key = (check_id, version, id(outcome))
    result = _RESULTS.get(key)
    if result is None:
        result = _RESULTS[key] = CheckResult(check_id, version, *outcome)
    return result


def memoized(memo: dict[K, Outcome], key: K, compute: Callable[[], Outcome]) -> Outcome:
    """The outcome for ``key`` (a check's every input), computed once while ``memo`` has room.

    Past :data:`MEMO_MAX` keys an outcome is computed each time (and not kept).
    """
    found = memo.get(key)
    if found is None:
        found = compute()
        if len(memo) < MEMO_MAX:
            memo[key] = found
            _KEPT_IDS.add(id(found))
    return found


def constant(status: CheckStatus, message: str) -> Outcome:
    """An outcome that never varies (one message, no location), made once and kept."""
    outcome: Outcome = (status, (Evidence(message),))
    kept = _CONSTANTS.setdefault(outcome, outcome)
    _KEPT_IDS.add(id(kept))
    return kept
