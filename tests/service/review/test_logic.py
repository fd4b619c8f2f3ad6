"""Pure review logic: queue items, audit sampling, blinding labels, resolution, kappa, outcome."""

from __future__ import annotations

import pytest

from judges.calibration import Label as _Label
from judges.calibration.metrics import cohen_kappa
from service.review.agreement import pairwise_agreement, resolve, simple_agreement
from service.review.blinding import forbidden_keys_in, opaque_run_label, unit_draw
from service.review.outcome import AuditRecord, overturns_by_judge
from service.review.queue import (
    CriterionState,
    QueuePolicy,
    RunSnapshot,
    Vote,
    build_items,
    is_audited,
    items_for_run,
    order_for_reviewer,
)

GEO = Vote("geometry@1", "geometry", "pass")


def Label(who: str, status: str, adjudication: bool = False) -> _Label:  # noqa: N802
    """A reviewer's label on item ``x`` (adjudication: the adjudicator's decision)."""
    return _Label("x", who, status, "t", role="adjudicator" if adjudication else "annotator")


def snapshot(run_id: str, outcome: str, **statuses: str) -> RunSnapshot:
    """A run whose necessary criteria have the given jury statuses (each voted by geometry)."""
    criteria = tuple(
        CriterionState(cid, "necessary", st, (Vote("geometry@1", "geometry", st),))
        for cid, st in statuses.items()
    )
    return RunSnapshot(run_id, f"ev-{run_id}", outcome, criteria)


def test_uncertain_necessary_criteria_of_pending_runs_become_items() -> None:
    policy = QueuePolicy(seed=5, audit_rate=0.0)
    snap = snapshot("r1", "pending", P1="pass", R1="uncertain", R2="uncertain")
    items = items_for_run(snap, policy)
    assert sorted(i.criterion_id for i in items) == ["R1", "R2"]
    assert {i.kind for i in items} == {"uncertain"}
    assert {i.reviews_needed for i in items} == {1}
    optional = RunSnapshot(
        "r2", "pending", "pending", (CriterionState("Q1", "optional", "uncertain"),)
    )
    assert items_for_run(optional, policy) == []


def test_human_reviewed_criteria_are_not_queued_again() -> None:
    snap = snapshot("r1", "pending", R1="uncertain")
    done = RunSnapshot(snap.run_id, "ev2", "pending", snap.criteria, frozenset({"R1"}))
    assert items_for_run(done, QueuePolicy(seed=5, audit_rate=0.0)) == []


def test_audit_sample_rate_is_close_to_the_configured_rate_and_reproducible() -> None:
    policy = QueuePolicy(seed=7, audit_rate=0.05)
    runs = [snapshot(f"run-{i}", "pass", P1="pass", B1="pass") for i in range(4000)]
    items = build_items(runs, policy)
    assert all(i.kind == "audit" and i.reviews_needed == 2 for i in items)
    assert all(i.audited_judges == ("geometry@1",) for i in items)
    assert 0.04 < len(items) / 8000 < 0.06
    assert [i.item_id for i in build_items(runs, policy)] == [i.item_id for i in items]
    other = build_items(runs, QueuePolicy(seed=8, audit_rate=0.05))
    assert {i.item_id for i in other} != {i.item_id for i in items}


def test_audit_rate_one_audits_every_automatic_pass_except_in_incomplete_runs() -> None:
    policy = QueuePolicy(seed=5, audit_rate=1.0)
    assert is_audited(policy, "x", "P1")
    assert len(items_for_run(snapshot("r", "pass", P1="pass", B1="pass"), policy)) == 2
    (audit,) = items_for_run(snapshot("r", "fail", P1="pass", B1="fail"), policy)
    assert (audit.criterion_id, audit.kind) == ("P1", "audit")
    assert items_for_run(snapshot("r", "incomplete", P1="pass"), policy) == []
    uncalibrated = RunSnapshot(
        "r",
        "e",
        "pass",
        (
            CriterionState(
                "P1", "necessary", "pass", (Vote("v@1", "auto", "pass", eligible=False),)
            ),
        ),
    )
    assert items_for_run(uncalibrated, policy) == []  # nobody decided it automatically


def test_opaque_labels_are_stable_distinct_and_unrelated_to_order() -> None:
    ids = [f"run-{i:04d}" for i in range(200)]
    labels = [opaque_run_label(42, r) for r in ids]
    assert len(set(labels)) == len(labels)
    assert labels == [opaque_run_label(42, r) for r in ids]
    assert sorted(labels) != labels
    assert all("run" not in lab for lab in labels)
    assert opaque_run_label(43, ids[0]) != labels[0]
    assert 0.0 <= unit_draw(1, "a") < 1.0


def test_reviewer_order_is_shuffled_per_reviewer() -> None:
    ids = [f"it_{i}" for i in range(50)]
    a = order_for_reviewer(ids, 1, "alice")
    b = order_for_reviewer(ids, 1, "bob")
    assert sorted(a) == sorted(ids) and a != b


def test_forbidden_keys_found_anywhere() -> None:
    assert forbidden_keys_in({"a": [{"model": "x"}], "b": {"provider": 1}}) == ["model", "provider"]
    assert forbidden_keys_in({"question": "q", "frames": []}) == []


def test_resolution_open_disputed_resolved_and_adjudicated() -> None:
    assert resolve([], 1).state == "open"
    assert resolve([Label("a", "fail")], 1) == resolve([Label("a", "fail")], 1)
    assert resolve([Label("a", "fail")], 1).label == "fail"
    assert resolve([Label("a", "fail")], 2).state == "open"
    agreed = resolve([Label("a", "fail"), Label("b", "fail")], 2)
    assert (agreed.state, agreed.label) == ("resolved", "fail")
    disputed = resolve([Label("a", "fail"), Label("b", "pass")], 2)
    assert (disputed.state, disputed.label) == ("disputed", None)
    adjudicated = resolve([Label("a", "fail"), Label("b", "pass"), Label("c", "pass", True)], 2)
    assert (adjudicated.state, adjudicated.label) == ("resolved", "pass")


def test_kappa_matches_a_hand_worked_example() -> None:
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15 (Wikipedia's example)
    pairs = [("pass", "pass")] * 20 + [("pass", "fail")] * 5 + [("fail", "pass")] * 10
    pairs += [("fail", "fail")] * 15
    assert simple_agreement(pairs) == pytest.approx(0.7)
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5 → kappa = (0.7-0.5)/0.5 = 0.4
    assert cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]) == pytest.approx(0.4)
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["pass"] * 3, ["pass"] * 3) is None
    assert cohen_kappa(["pass", "fail"], ["fail", "pass"]) == pytest.approx(-1.0)


def test_pairwise_agreement_ignores_adjudications() -> None:
    table = pairwise_agreement(
        {
            "i1": [Label("a", "pass"), Label("b", "pass")],
            "i2": [Label("a", "fail"), Label("b", "pass"), Label("c", "fail", True)],
        }
    )
    assert len(table) == 1
    row = table[0]
    assert (row.reviewer_a, row.reviewer_b, row.items, row.agreement) == ("a", "b", 2, 0.5)


def test_overturned_passes_are_counted_per_judge_profile() -> None:
    stats = overturns_by_judge(
        [
            AuditRecord("P1", ("geometry@1", "vision@1"), "fail"),
            AuditRecord("B1", ("geometry@1",), "pass"),
            AuditRecord("R1", ("geometry@1",), "uncertain"),
        ]
    )
    geo, vis = stats
    assert (geo.judge_profile_id, geo.audited, geo.confirmed, geo.overturned) == (
        "geometry@1",
        3,
        1,
        1,
    )
    assert geo.unconfirmed == 1 and geo.overturn_rate == pytest.approx(1 / 3)
    assert (vis.audited, vis.overturned) == (1, 1)


def test_only_counted_votes_are_charged_by_an_audit() -> None:
    from service.review.intake import _counted

    stored = [
        {"judge_profile_id": "geometry@1", "status": "pass", "eligible": True},
        {"judge_profile_id": "vision@1", "status": "pass", "eligible": False},
    ]
    assert _counted(stored, "geometry@1") and not _counted(stored, "vision@1")
    assert _counted({"pass": 1}, "static-checks@1")  # the static jury's count form
    assert _counted(None, "x")
