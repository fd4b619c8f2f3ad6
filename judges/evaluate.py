"""``judges.evaluate``: run a panel's judges on every applicable criterion, then the jury."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from judges.base import JudgeRegistry, registry
from judges.jury import Eligibility, decide_criterion, decide_outcome, is_eligible
from judges.measure_memo import MeasurementMemo
from judges.model import (
    CriterionOutcome,
    FrameImage,
    JudgeFailure,
    JudgeInput,
    MaskImage,
    PanelResult,
    Verdict,
)
from judges.panel import JudgePanel
from regua.settings import Settings
from tasks import TaskSpec


def evaluate(
    task: TaskSpec,
    frames: Sequence[FrameImage],
    masks: Sequence[MaskImage],
    checks: Mapping[str, Any],
    render: Mapping[str, Any] | None,
    panel: JudgePanel,
    eligibility: Eligibility = None,
    *,
    human_verdicts: Sequence[Verdict] = (),
    incomplete_cause: str | None = None,
    settings: Settings | None = None,
    judge_registry: JudgeRegistry | None = None,
    measurements: MeasurementMemo | None = None,
) -> PanelResult:
    """Run every judge of ``panel`` on each applicable criterion, then the jury and the outcome.

    ``checks`` is ``CheckReport.to_dict()``; ``render`` is ``render.json`` (``None`` or ``{}``
    when rendering did not happen — pass ``incomplete_cause`` then). ``human_verdicts`` (from
    review, profile kind ``human``) decide their criteria. A judge that raises is recorded as a
    :class:`JudgeFailure` with cause ``judge_crashed``; nothing here raises for a judge's sake.
    ``measurements`` (optional) is a memo of mask measurements the geometry judge reads and
    fills: verdicts are the same without it; store ``measurements.to_doc()`` when
    ``measurements.added`` is not 0 and pass it back (``MeasurementMemo.from_doc``) to re-score.
    """
    reg = judge_registry or registry()
    # a judge may complete its profile (e.g. the model from settings) and then votes under
    # that effective id; the panel still names the registered profile
    by_id = {pid: reg.create(pid, settings) for pid in panel.profile_ids()}
    kinds = {j.profile.id: j.profile.kind for j in by_id.values()}
    for h in human_verdicts:
        kinds.setdefault(h.judge_profile_id, "human")
    verdicts: list[Verdict] = []
    failures: list[JudgeFailure] = []
    outcomes: list[CriterionOutcome] = []
    for criterion in task.criteria:
        mine_v: list[Verdict] = []
        mine_f: list[JudgeFailure] = []
        if criterion.applicable:
            inp = JudgeInput(
                task, criterion, tuple(frames), tuple(masks), checks, render or {}, measurements
            )
            for pid in panel.profiles_for(criterion.id):
                judge = by_id[pid]
                if not judge.answers(task, criterion):
                    continue
                started = time.perf_counter()
                try:
                    result = judge.judge(inp)
                except Exception as exc:  # a broken judge is a machinery failure, not a verdict
                    ms = (time.perf_counter() - started) * 1000.0
                    detail = f"{type(exc).__name__}: {exc}"
                    result = JudgeFailure(criterion.id, pid, "judge_crashed", detail, ms)
                if isinstance(result, Verdict):
                    mine_v.append(result)
                elif isinstance(result, JudgeFailure):
                    mine_f.append(result)
        humans = [h for h in human_verdicts if h.criterion == criterion.id]

        def eligible(pid: str, cid: str = criterion.id) -> bool:
            return is_eligible(eligibility, pid, kinds.get(pid, ""), cid, task.family)

        outcomes.append(decide_criterion(criterion, mine_v, mine_f, eligible, humans=humans))
        verdicts += mine_v
        failures += mine_f
    return PanelResult(
        task_ref=task.ref,
        panel=panel.to_dict(),
        verdicts=tuple(verdicts) + tuple(human_verdicts),
        failures=tuple(failures),
        criteria=tuple(outcomes),
        outcome=decide_outcome(outcomes, incomplete_cause=incomplete_cause),
    )
