"""A smaller set never demotes a trusted judge by accident (issue 22 point 4), over HTTP.

Runs computed with a plain verdict function (no rendering) are imported through
``POST /v1/calibrations {"run": …}``, the same store every calibration goes through: a trusted
decision on 12 labelled items is not overturned by one measured on 4 unless ``"replace": true``
(409 ``would_demote`` naming both sets and sizes, nothing stored); a set as large may.
"""

from __future__ import annotations

from judges.calibration.runner import CalibrationRun, run_calibration
from judges.calibration.sets import CalibrationItem, CalibrationSet, Label
from judges.model import Evidence, JudgeProfile, Verdict, VerdictStatus
from tests.service.conftest import Api

T = "pelican-bicycle-structured@1"
JUDGE = JudgeProfile("guarded-geo@1", "geometry", params={"x": 1})


def _run(set_id: str, n: int, *, truthful: bool, at: str) -> CalibrationRun:
    """R2 labels, half pass and half fail; the judge agrees with them or says the opposite."""
    statuses = ["pass", "fail"] * (n // 2)
    items = [CalibrationItem(f"{set_id}-{i}", f"{i:064x}", "R2", T) for i in range(n)]
    labels = [Label(i.item_id, "ann", s, "t") for i, s in zip(items, statuses, strict=True)]
    truth = dict(zip([i.item_id for i in items], statuses, strict=True))

    def judge(item: CalibrationItem, _repeat: int) -> Verdict:
        said = (
            truth[item.item_id]
            if truthful
            else {"pass": "fail", "fail": "pass"}[truth[item.item_id]]
        )
        return Verdict(item.criterion, VerdictStatus(said), Evidence(None, None, "x"), JUDGE.id)

    cal = CalibrationSet(set_id, T, tuple(items), tuple(labels))
    return run_calibration(
        "geometry", JUDGE, cal, judge, split="all", repeats=1, n_boot=100, clock=lambda: at
    )


def _import(api: Api, run: CalibrationRun, **extra: object) -> tuple[int, dict[str, object]]:
    res = api.client.post(
        "/v1/calibrations", json={"run": run.to_dict(), **extra}, headers=api.h("admin")
    )
    body: dict[str, object] = res.json()
    return res.status_code, body


def _statuses(api: Api) -> list[tuple[str, str, int]]:
    params = {"history": "true", "judge": JUDGE.id}
    got = api.client.get("/v1/gate", params=params, headers=api.h("admin")).json()
    return [(d["set_id"], d["status"], d["set_size"]) for d in got["decisions"]]


def test_a_smaller_set_demotes_only_when_asked_to_replace(api: Api) -> None:
    earned = _run("big", 12, truthful=True, at="2026-01-01T00:00:00Z")
    assert earned.decision("R2").status == "trusted"
    assert _import(api, earned)[0] == 201
    small = _run("small", 4, truthful=False, at="2026-01-02T00:00:00Z")
    code, body = _import(api, small)
    assert code == 409 and body["error"] == "would_demote", body
    assert body["detail"] == (
        "calibration not stored: a smaller set would demote a trusted judge (guarded-geo@1 on R2 "
        "(family pelican-bicycle): trusted since 2026-01-01T00:00:00Z on set 'big' (12 labelled "
        "items), would become not_trusted on set 'small' (4 labelled items)). Measure on at "
        'least as many labelled items, or give --replace (HTTP: "replace": true) to store it '
        "anyway"
    )
    assert _statuses(api) == [("big", "trusted", 12)]
    code, body = _import(api, small, replace=True)
    assert code == 201, body
    assert _statuses(api) == [("big", "trusted", 12), ("small", "not_trusted", 4)]
    latest = api.client.get("/v1/gate", params={"judge": JUDGE.id}, headers=api.h("admin"))
    (decision,) = latest.json()["decisions"]
    assert decision["reasons"][-1] == (
        "replaces (--replace) the trusted decision of 2026-01-01T00:00:00Z on set 'big' "
        "(12 labelled items)"
    )


def test_a_set_as_large_may_demote_and_an_untrusted_judge_is_not_guarded(api: Api) -> None:
    assert _import(api, _run("first", 8, truthful=True, at="2026-01-01T00:00:00Z"))[0] == 201
    assert _import(api, _run("second", 8, truthful=False, at="2026-01-02T00:00:00Z"))[0] == 201
    assert _import(api, _run("third", 2, truthful=True, at="2026-01-03T00:00:00Z"))[0] == 201
    assert [s for s, _st, _n in _statuses(api)] == ["first", "second", "third"]
