"""Report assembly: families, pools, versions, repeats, criteria, judges and provenance."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest

import regua
from service.reports import JudgeVote, ReportConfig, ReportRow, build_report
from service.review.outcome import AuditRecord
from tests.helpers.report_sample import synthetic_rows
from tests.helpers.reports import counts, runs


def _family_rows() -> list[ReportRow]:
    # family "big": three variant tasks, all pass; family "small": one task, all fail
    rows: list[ReportRow] = []
    for variant in ("a", "b", "c"):
        rows += runs("m", ["pass"] * 10, task_ref=f"big-{variant}@1", family="big")
    rows += runs("m", ["fail"] * 10, task_ref="small@1", family="small")
    return rows


def test_families_are_weighted_equally_by_default() -> None:
    (agg,) = build_report(_family_rows())["aggregates"]
    (model,) = agg["models"]
    assert model["overall"]["lower"] == pytest.approx(0.5)  # not 30/40 = 0.75
    assert model["overall"]["decided_rate"] == pytest.approx(0.5)
    assert {f["family"]: f["lower"] for f in model["families"]} == {"big": 1.0, "small": 0.0}


def test_family_weighting_is_configurable() -> None:
    by_runs = build_report(_family_rows(), ReportConfig(family_weights="runs"))
    assert by_runs["aggregates"][0]["models"][0]["overall"]["lower"] == pytest.approx(0.75)
    custom = build_report(_family_rows(), ReportConfig(family_weights={"big": 1, "small": 3}))
    assert custom["aggregates"][0]["models"][0]["overall"]["lower"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="family_weights"):
        build_report(_family_rows(), ReportConfig(family_weights="bogus"))


def test_pool_ranking_weights_families_and_never_pairs_across_tasks() -> None:
    rows = []
    for variant in ("a", "b", "c"):  # family "big": x passes, y fails on every item
        ref = f"big-{variant}@1"
        rows += runs("x", ["pass"] * 20, task_ref=ref, family="big")
        rows += runs("y", ["fail"] * 20, task_ref=ref, family="big")
    rows += runs("x", ["fail"] * 30, task_ref="small@1", family="small")  # the reverse, once
    rows += runs("y", ["pass"] * 30, task_ref="small@1", family="small")
    equal = build_report(rows)["aggregates"][0]["bradley_terry"]
    by = {m["model"]: m for m in equal["models"]}
    assert by["x"]["log_strength"] == pytest.approx(0.0, abs=1e-9)  # families balance out
    assert by["x"]["technical_tie"]
    by_runs = build_report(rows, ReportConfig(family_weights="runs"))["aggregates"][0]
    ranked = by_runs["bradley_terry"]["models"]
    assert ranked[0]["model"] == "x" and ranked[0]["log_strength"] > 0
    # 30 items of "small" carry half the weight; the weights sum to the 90 slots
    assert by["x"]["wins"] == pytest.approx(45.0) and by["x"]["losses"] == pytest.approx(45.0)


def test_pools_are_reported_separately() -> None:
    rows = runs("m", ["pass"] * 4, pool="core") + runs(
        "m", ["fail"] * 4, task_ref="crab-kite@1", family="animals", pool="rotating"
    )
    aggs = {a["pool"]: a for a in build_report(rows)["aggregates"]}
    assert set(aggs) == {"core", "rotating"}
    assert aggs["core"]["models"][0]["overall"]["lower"] == 1.0
    assert aggs["rotating"]["models"][0]["overall"]["lower"] == 0.0


def test_task_versions_are_side_by_side_never_merged() -> None:
    rows = runs("m", ["pass"] * 6, task_ref="t@1") + runs("m", ["fail"] * 4, task_ref="t@2")
    report = build_report(rows)
    versions = {tv["task_ref"]: tv for tv in report["task_versions"]}
    assert set(versions) == {"t@1", "t@2"}
    assert versions["t@1"]["groups"][0]["counts"]["runs"] == 6
    assert versions["t@2"]["groups"][0]["counts"]["runs"] == 4
    (agg,) = report["aggregates"]
    assert agg["task_versions"] == ["t@1", "t@2"]  # every version counts, none superseded
    (model,) = agg["models"]
    assert model["versions"] == [
        {"task_ref": "t@1", "runs": 6, "incomplete": 0},
        {"task_ref": "t@2", "runs": 4, "incomplete": 0},
    ]
    assert model["families"][0]["counts"]["runs"] == 10


def test_repeats_by_hand() -> None:
    # item 0: pass, pass · item 1: pass, fail · item 2: fail, fail · item 3: pass, pending
    rows = runs("m", ["pass", "pass", "pass", "fail", "fail", "fail", "pass", "pending"], repeats=2)
    rep = build_report(rows)["task_versions"][0]["groups"][0]["repeats"]
    assert rep["items_with_repeats"] == 3  # item 3 has a single decided repeat
    assert rep["pass_all_repeats_rate"] == pytest.approx(1 / 3)
    assert rep["mean_consistency"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert rep["consistently_wrong"] == 1
    assert rep["consistently_wrong_items"] == ["item-2"]
    single = build_report(runs("m", ["pass", "fail"]))["task_versions"][0]["groups"][0]
    assert single["repeats"] is None


def test_bootstrap_resamples_whole_items_with_their_repeats() -> None:
    # every item passes on one repeat and fails on the other: the item-level ratio never moves
    rows = runs("m", ["pass", "fail"] * 30, repeats=2)
    ci = build_report(rows)["task_versions"][0]["groups"][0]["ci"]
    assert ci["items"] == 30
    assert ci["interval"] == [0.5, 0.5]


def test_per_criterion_counts_and_ranges() -> None:
    crit = [
        {"C1": "pass", "C2": "pass"},
        {"C1": "fail", "C2": "uncertain"},
        {"C1": "pass", "C2": "not_applicable"},
        {},
    ]
    base = runs("m", ["pass", "fail", "pass", "incomplete"])
    rows = [r._replace(criteria=c) for r, c in zip(base, crit, strict=True)]
    tv = build_report(rows)["task_versions"][0]
    assert tv["criteria"] == ["C1", "C2"]
    c1, c2 = tv["groups"][0]["criteria"]
    assert (c1["pass"], c1["fail"], c1["uncertain"], c1["missing"]) == (2, 1, 0, 1)
    assert (c2["pass"], c2["uncertain"], c2["not_applicable"], c2["missing"]) == (1, 1, 1, 1)
    assert (c2["lower"], c2["upper"]) == (0.5, 1.0)  # uncertain as fail / as pass
    other = runs("m", ["pass"], task_ref="other@1")[0]._replace(criteria={"Z9": "pass"})
    both = build_report([*rows, other])["task_versions"]
    assert [tv["criteria"] for tv in both] == [["Z9"], ["C1", "C2"]]  # never another task's
    with pytest.raises(ValueError, match="unknown status"):
        build_report([base[0]._replace(criteria={"C1": "maybe"})])


def test_unknown_outcome_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown outcome"):
        build_report(runs("m", ["passed"]))


def test_judge_view_by_hand() -> None:
    votes = [
        JudgeVote("r1", "t@1", "C1", "geo", "pass"),
        JudgeVote("r1", "t@1", "C1", "vlm", "fail"),
        JudgeVote("r2", "t@1", "C1", "geo", "pass"),
        JudgeVote("r2", "t@1", "C1", "vlm", "pass"),
        JudgeVote("r3", "t@1", "C1", "geo", "uncertain"),  # vlm absent: not compared
        JudgeVote("r1", "t@1", "C2", "geo", "pass"),
        JudgeVote("r1", "t@1", "C2", "vlm", "pass"),
    ]
    audits = [
        AuditRecord("C1", ("geo", "vlm"), "fail"),
        AuditRecord("C1", ("geo",), "pass"),
        AuditRecord("C2", ("geo",), "uncertain"),
    ]
    judges = build_report(runs("m", ["pass"]), audits=audits, votes=votes)["judges"]
    dis = {(d["criterion"], d["judge_a"], d["judge_b"]): d for d in judges["disagreement"]}
    assert dis[("C1", "geo", "vlm")]["compared"] == 2
    assert dis[("C1", "geo", "vlm")]["rate"] == 0.5
    assert dis[("C2", "geo", "vlm")]["rate"] == 0.0
    aud = {a["judge_profile_id"]: a for a in judges["audits"]}
    assert (aud["geo"]["audited"], aud["geo"]["overturned"], aud["geo"]["unconfirmed"]) == (3, 1, 1)
    assert aud["geo"]["overturn_rate"] == pytest.approx(1 / 3)
    assert aud["vlm"]["overturn_rate"] == 1.0


def test_provenance_records_what_the_report_was_computed_from() -> None:
    rows = runs("m", counts(2, 1, 1))
    when = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    prov = build_report(rows, ReportConfig(seed=99), now=when, task_hashes={"x@1": "ab"})[
        "provenance"
    ]
    ids = sorted(r.evaluation_id for r in rows if r.evaluation_id)
    assert prov["regua_version"] == regua.__version__
    assert prov["generated_at"] == when.isoformat()
    assert prov["seed"] == 99 and prov["resamples"] == 1000
    assert prov["task_versions"] == ["pelican-bicycle@1"]
    assert prov["judge_panels"] == ["panel-1"]
    assert prov["evaluation_ids"] == ids
    assert prov["evaluation_ids_sha256"] == hashlib.sha256("\n".join(ids).encode()).hexdigest()


def test_same_inputs_and_seed_reproduce_the_same_report() -> None:
    rows = synthetic_rows(models=4, items=30)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    first = json.dumps(build_report(rows, now=when), allow_nan=False)
    assert first == json.dumps(build_report(list(reversed(rows)), now=when), allow_nan=False)


def test_group_by_provider() -> None:
    rows = runs("m1", ["pass"], provider="acme") + runs("m2", ["fail"], provider="acme")
    report = build_report(rows, ReportConfig(group_by="provider"))
    (group,) = report["task_versions"][0]["groups"]
    assert group["model"] == "acme" and group["counts"]["runs"] == 2
    with pytest.raises(ValueError, match="group_by"):
        build_report(rows, ReportConfig(group_by="colour"))


def test_adding_a_model_leaves_other_models_intervals_unchanged() -> None:
    rows = synthetic_rows(models=3, items=20)
    more = rows + [r._replace(model="zz-new", run_id=r.run_id + "-new") for r in rows[:40]]

    def intervals(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
        out = {}
        for tv in report["task_versions"]:
            for g in tv["groups"]:
                out[(tv["task_ref"], g["model"])] = g["ci"]["interval"]
        for agg in report["aggregates"]:
            for m in agg["models"]:
                out[(agg["pool"], m["model"])] = m["overall"]["ci"]
        return out

    before, after = intervals(build_report(rows)), intervals(build_report(more))
    assert before and all(after[key] == value for key, value in before.items())
