"""Model calls recorded before they are sent (``model_calls``), in process: what a resumed job
does with a call a kill left recorded but not finished, and which ``Idempotency-Key`` each call
carries. (The same with a real ``kill -9``: ``tests/service/hardening/test_killed_*.py``.)
"""

from __future__ import annotations

from sqlalchemy import select

from regua.llm.testing import Reply, ScriptedServer
from service.context import ServiceContext
from service.generation.calls import CallSlot, idempotency_key, record_send, resent_calls
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs
from service.storage import ModelCallRow
from tests.service.generation.helpers import openai_body

TASK = "pelican-bicycle-structured@1"
JOB = "gen_calls"


def _sends(ctx: ServiceContext) -> list[tuple[str, int, bool, str | None]]:
    with ctx.db.read() as s:
        rows = s.execute(
            select(
                ModelCallRow.case_key,
                ModelCallRow.attempt,
                ModelCallRow.done_at.is_not(None),
                ModelCallRow.run_id,
            ).order_by(ModelCallRow.case_key, ModelCallRow.attempt)
        ).all()
    return [(str(k), int(a), bool(d), r) for k, a, d, r in rows]


def test_a_call_recorded_but_never_finished_is_sent_again_with_its_key_and_counted(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    params = GenerationParams(api="openai", model="m", base_url=f"{llm.url}/v1")
    keys = [f"{JOB}:1", f"{JOB}:2"]
    cut_off = CallSlot(JOB, keys[1])
    assert record_send(gen_ctx.db, cut_off) == 1  # sent by a process that died before its answer
    llm.script = [Reply(body=openai_body("a")), Reply(body=openai_body("b"))]

    ids = generate_runs(gen_ctx, TASK, params, 2, token_id=None, case_keys=keys, job=JOB)

    sent = sorted(r.headers["idempotency-key"] for r in llm.requests)
    assert sent == sorted(CallSlot(JOB, k).key for k in keys)  # each case once, its own key
    by_case = {k: run for k, _, _, run in _sends(gen_ctx) if run is not None}
    assert _sends(gen_ctx) == [
        (keys[0], 1, True, by_case[keys[0]]),
        (keys[1], 1, True, by_case[keys[1]]),  # the first send is done with its run too
        (keys[1], 2, True, by_case[keys[1]]),
    ]
    assert sorted(by_case.values()) == sorted(ids)
    with gen_ctx.db.read() as s:
        assert resent_calls(s, JOB) == 1 and resent_calls(s, "another-job") == 0

    again = generate_runs(gen_ctx, TASK, params, 2, token_id=None, case_keys=keys, job=JOB)
    assert again == ids and len(llm.requests) == 2  # stored cases: no call, nothing recorded
    assert len(_sends(gen_ctx)) == 3


def test_each_job_case_and_round_has_its_own_stable_key() -> None:
    keys = {
        idempotency_key(job, case, rnd)
        for job in ("gen_a", "gen_b")
        for case in ("gen_a:1", "gen_a:2")
        for rnd in (0, 1, 2)
    }
    assert len(keys) == 12 and all(k.startswith("regua-") and len(k) == 46 for k in keys)
    assert CallSlot("gen_a", "gen_a:1", 2).key == idempotency_key("gen_a", "gen_a:1", 2)
