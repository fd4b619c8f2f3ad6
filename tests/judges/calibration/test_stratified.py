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

from judges.calibration.estimates import encode, f1_estimate, per_class_f1, stratified_indices
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
