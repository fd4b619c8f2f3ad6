"""Macro-F1 and kappa intervals from a stratified bootstrap (issue 14 item 19).

Before, ``macro-F1 0.658 [0.64, 1.00]``: a status the judge said once (``uncertain``) counted
as a class of its own, and appeared or vanished between resamples, so the interval jumped to
1.00 and did not describe the point value. Now each resample keeps every reference status with
its count, macro-F1 averages over the labels' statuses, and the interval contains the point.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.calibration.estimates import (
    cohen_kappa,
    encode,
    f1_estimate,
    kappa_estimate,
    per_class_f1,
    stratified_indices,
)
from judges.calibration.sets import STATUSES

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)

STATUS = st.sampled_from(["pass", "fail", "uncertain"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(STATUS, STATUS), min_size=1, max_size=40), st.integers(0, 2**16))
def test_the_interval_contains_the_point_and_every_class_is_in_every_resample(
    pairs: list[tuple[str, str]], seed: int
) -> None:

    ref = [a for a, _ in pairs]
    pred = [b for _, b in pairs]
    est = f1_estimate(ref, pred, seed=seed, n_boot=200)
    assert est.value is not None and est.ci_low is not None and est.ci_high is not None
    assert est.ci_low <= est.value <= est.ci_high
    codes = encode(ref)
    counts = np.bincount(codes, minlength=len(STATUSES))
    rng = np.random.default_rng(seed)
    for _ in range(50):
        idx = stratified_indices(codes, rng)
        assert len(idx) == len(codes)
        assert (np.bincount(codes[idx], minlength=len(STATUSES)) == counts).all()
    for status, e in per_class_f1(ref, pred, seed=seed, n_boot=100).items():
        assert status in set(ref) | set(pred)
        assert e.ci_low is not None and e.ci_high is not None and e.value is not None
        assert e.ci_low <= e.value <= e.ci_high


def test_one_uncertain_answer_no_longer_drags_the_interval_to_one() -> None:
    """The reported case: a near-perfect judge that said ``uncertain`` once."""
    ref = ["pass"] * 93 + ["fail"] * 18
    pred = ["pass"] * 93 + ["fail"] * 17 + ["uncertain"]
    est = f1_estimate(ref, pred, seed=0, n_boot=1000)
    # over the labels' statuses: pass F1 = 1, fail F1 = 34/35
    assert est.value == pytest.approx((1 + 34 / 35) / 2)
    assert est.ci_low is not None and est.ci_high is not None
    assert est.ci_high <= 1.0 and est.ci_high - est.ci_low < 0.1
    classes = per_class_f1(ref, pred, seed=0, n_boot=200)
    assert set(classes) == {"pass", "fail", "uncertain"}
    assert classes["uncertain"].value == 0.0  # reported apart, with its own interval


def _one_by_one(ref: list[str], pred: list[str], seed: int, n_boot: int) -> list[float]:
    """Kappa's interval as first written: one resample at a time, a ``choice`` per status."""
    r, p = encode(ref), encode(pred)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = np.concatenate(
            [rng.choice(np.flatnonzero(r == c), size=int((r == c).sum())) for c in np.unique(r)]
        )
        kappa = cohen_kappa([STATUSES[i] for i in r[idx]], [STATUSES[i] for i in p[idx]])
        if kappa is not None:
            values.append(kappa)
    return [float(x) for x in np.percentile(np.array(values), [2.5, 97.5])] if values else []


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(STATUS, STATUS), min_size=1, max_size=30), st.integers(0, 2**16))
def test_the_resamples_drawn_at_once_are_those_drawn_one_by_one(
    pairs: list[tuple[str, str]], seed: int
) -> None:
    """The bootstrap draws all its resamples in one call: same seed, same interval as a loop."""
    ref = [a for a, _ in pairs]
    pred = [b for _, b in pairs]
    est = kappa_estimate(ref, pred, seed=seed, n_boot=60)
    loop = _one_by_one(ref, pred, seed, 60)
    if not loop:
        assert est.ci_low is None and est.ci_high is None
        return
    lo, hi = loop
    if est.value is not None:
        lo, hi = min(lo, est.value), max(hi, est.value)
    assert (est.ci_low, est.ci_high) == (lo, hi)
    codes = encode(ref)
    rng, again = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        by_status = [
            rng.choice(np.flatnonzero(codes == c), size=int((codes == c).sum()))
            for c in np.unique(codes)
        ]
        assert (stratified_indices(codes, again) == np.concatenate(by_status)).all()
