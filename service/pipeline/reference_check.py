"""``reference-drawing``: a task's reference drawing passes its own criteria.

The drawing goes through the static checks, is rendered in the sandbox (real pool) and every
criterion the geometry judge answers is measured on its masks with ``geometry@1`` (the profile
that answers every geometric criterion itself, with no veto-only list). Criteria that need a
recognising judge (a vision model or a person) are listed as not checked here; they never make
the check pass or fail.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import judges
from checks import check_reply
from judges.geometry.judge import GeometryJudge
from judges.static import StaticJudge
from regua.settings import Settings, load_settings
from sandbox import WorkerPool
from service.pipeline.render_client import create_pool, render_artifact
from tasks import TaskSpec
from tasks.acceptance import (
    AcceptanceSubject,
    CheckOutcome,
    needs_spec,
    register_acceptance_check,
)

PROFILE_ID = "geometry@1"
STATIC_PROFILE_ID = "static@1"


class ReferenceDrawing:
    """Render the reference drawing and judge its geometric criteria.

    ``pool`` is used when given (tests pass the shared one); otherwise a one-worker pool is
    started from ``settings`` (default: the environment's) for the check and closed after it.
    """

    id = "reference-drawing"

    def __init__(self, pool: WorkerPool | None = None, settings: Settings | None = None) -> None:
        """Bind the check to a render pool, or to the settings one is started from."""
        self._pool = pool
        self._settings = settings

    def _pool_scope(self) -> AbstractContextManager[WorkerPool]:
        if self._pool is not None:
            return nullcontext(self._pool)
        return create_pool(self._settings or load_settings(), size=1)

    def run(self, subject: AcceptanceSubject) -> CheckOutcome:
        """Fail on a failed static check, an incomplete render or a geometric verdict not pass."""
        task = subject.spec
        if task is None:
            return needs_spec(self.id, subject) or CheckOutcome(self.id, "skip", "no spec")
        if subject.reference_svg is None:
            return CheckOutcome(self.id, "skip", "no reference drawing given (--reference SVG)")
        report = check_reply(subject.reference_svg, task)
        if report.status != "pass":
            failed = ", ".join(report.failed) or report.status
            return CheckOutcome(self.id, "fail", f"static checks fail: {failed}")
        with self._pool_scope() as pool:
            output = render_artifact(subject.reference_svg, task, pool)
        if output.status != "ok":
            return CheckOutcome(self.id, "fail", f"render {output.status}: {output.cause}")
        log = output.log
        if log.blocked_requests or log.script_executed:
            why = (
                f"{len(log.blocked_requests)} blocked request(s), script ran: {log.script_executed}"
            )
            return CheckOutcome(self.id, "fail", f"the render broke a delivery rule: {why}")
        return _judged(self.id, task, output.frames(), output.masks())


def _judged(
    check: str,
    task: TaskSpec,
    frames: tuple[judges.FrameImage, ...],
    masks: tuple[judges.MaskImage, ...],
) -> CheckOutcome:
    judge = GeometryJudge(judges.get_profile(PROFILE_ID))
    static = StaticJudge(judges.get_profile(STATIC_PROFILE_ID))
    # the delivery rules (F1): the static checks passed and the render fetched and ran nothing
    verdicts = {c.id: "pass" for c in task.criteria if c.applicable and static.answers(task, c)}
    reasons: list[str] = []
    for criterion in task.criteria:
        if not criterion.applicable or criterion.id in verdicts:
            continue
        if not judge.answers(task, criterion):
            continue
        result = judge.judge(judges.JudgeInput(task, criterion, frames, masks))
        if isinstance(result, judges.Verdict):
            verdicts[criterion.id] = result.status.value
            if result.status is not judges.VerdictStatus.PASS:
                reasons.append(
                    f"{criterion.id} {result.status.value}: {result.evidence.description}"
                )
        elif result is not None:
            reasons.append(f"{criterion.id}: judge failure {result.cause}: {result.detail}")
    skipped = [c.id for c in task.criteria if c.applicable and c.id not in verdicts]
    note = (
        f"; not checked here (needs a recognising judge): {', '.join(skipped)}" if skipped else ""
    )
    if reasons:
        return CheckOutcome(check, "fail", "; ".join(reasons) + note)
    passed = ", ".join(verdicts) or "none"
    return CheckOutcome(check, "pass", f"the reference drawing passes {passed}{note}")


register_acceptance_check(ReferenceDrawing())
