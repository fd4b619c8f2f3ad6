"""A deterministic generator of experiment cases, registered through the Generator protocol.

It stands in for a model provider while the generation runner is not wired in: each case's
reply is decided by a table (arm model, item, repeat) → pass | fail, latency and cost follow
fixed formulas, and it keeps the runner's promise — a case key it already generated returns
that run (found by the key stored in the run's ``model_params``) without a second "call".
``calls`` counts the calls per case key, across every service context that used it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select

from service.context import ServiceContext
from service.experiments.generator import GenerationFacts
from service.experiments.spec import ModelParams
from service.pipeline.submit import Submission
from service.storage import Run
from tasks import TaskRegistry, TaskSpec, bundled_registry

GOOD = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">'
    '<rect x="40" y="40" width="200" height="120" fill="#336699"/></svg>'
)
BAD = "I would rather not draw that."
FAMILY = "exp-mini"


def mini_tasks(n: int = 10, pending_last: bool = True) -> list[TaskSpec]:
    """``exp-mini-0..n-1@1``: the static pelican task with criterion F1 only (the static rules
    decide it), the last one also with P1 (nobody on the static-only panel can, so: pending)."""
    base = bundled_registry().get("pelican-bicycle-static@1").model_dump(mode="json")
    criteria = base["criteria"]
    specs = []
    for i in range(n):
        doc: dict[str, Any] = {**base, "id": f"exp-mini-{i}", "family": FAMILY}
        keep = ("F1", "P1") if pending_last and i == n - 1 else ("F1",)
        doc["criteria"] = [c for c in criteria if c["id"] in keep]
        specs.append(TaskSpec.model_validate(doc))
    return specs


def register_tasks(registry: TaskRegistry, specs: Sequence[TaskSpec]) -> None:
    """Register the mini tasks in a service's registry (before it serves)."""
    for spec in specs:
        registry.register(spec)


Decide = Callable[[str, str, int], bool]
"""(model, task ref, repeat) → does the reply pass."""
Measure = Callable[[str, str, int], tuple[float, float, bool]]
"""(model, task ref, repeat) → (latency ms, cost usd, timed out)."""


class ScriptedGenerator:
    """Deterministic replies by table; idempotent by case key."""

    name = "scripted-test"

    def __init__(self, decide: Decide, measure: Measure, delay_s: float = 0.0) -> None:
        self.decide, self.measure, self.delay_s = decide, measure, delay_s
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _existing(self, ctx: ServiceContext, label: str) -> dict[str, str]:
        with ctx.db.read() as s:
            rows = s.execute(select(Run.id, Run.model_params).where(Run.model_label == label)).all()
        return {p["case_key"]: rid for rid, p in rows if p and "case_key" in p}

    def generate(
        self,
        ctx: ServiceContext,
        task_ref: str,
        params: ModelParams,
        repeats: int,
        *,
        token_id: int | None,
        prompt: str | None,
        panel: str | None,
        case_keys: Sequence[str],
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        assert len(case_keys) == repeats
        label = params.label or params.model
        existing = self._existing(ctx, label)
        sent = prompt if prompt is not None else ctx.registry.get(task_ref).prompt
        digest = hashlib.sha256(sent.encode("utf-8")).hexdigest()
        ids: list[str] = []
        for repeat, key in enumerate(case_keys):
            if key in existing:
                ids.append(existing[key])
                continue
            with self._lock:
                self.calls[key] += 1
            time.sleep(self.delay_s)  # the "provider" takes a moment
            latency, cost, timed_out = self.measure(params.model, task_ref, repeat)
            reply = GOOD if self.decide(params.model, task_ref, repeat) else BAD
            meta = {
                "case_key": key,
                "latency_ms": latency,
                "cost_usd": cost,
                "timed_out": timed_out,
                "prompt_sha256": digest,
            }
            sub = Submission(task_ref, label, reply, params.api, meta, panel)
            ids.extend(ctx.submit([sub], token_id))
            if on_progress is not None:
                on_progress(repeat + 1, repeats)
        return ids

    def facts(self, ctx: ServiceContext, run_ids: Sequence[str]) -> Mapping[str, GenerationFacts]:
        with ctx.db.read() as s:
            rows = s.execute(select(Run.id, Run.model_params).where(Run.id.in_(run_ids))).all()
        return {
            rid: GenerationFacts(
                rid, p["latency_ms"], p["cost_usd"], p["timed_out"], p["prompt_sha256"]
            )
            for rid, p in rows
        }
