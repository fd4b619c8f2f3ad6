"""The ``human`` judge kind: verdicts that come from review.

A human judge is never run by a panel; its verdicts are built from reviews (the review queue
lives in ``service/review``) and passed to :func:`judges.evaluate` as ``human_verdicts``, where
they decide their criterion.
"""

from __future__ import annotations

from judges.inputs import JudgeInput
from judges.model import Evidence, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, TaskSpec

HUMAN_PROFILE_ID = "human@1"


class HumanJudge:
    """Placeholder judge for the ``human`` kind: answers nothing automatically."""

    def __init__(self, profile: JudgeProfile) -> None:
        """Bind the placeholder judge to its profile."""
        self.profile = profile

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """Never: human verdicts come from reviews, not from running the judge."""
        del task, criterion  # Judge protocol; the answer is the same for every criterion
        return False

    def judge(self, inp: JudgeInput) -> None:
        """Human judges are not run automatically; abstain."""
        del inp  # Judge protocol; a human judge never looks at the input
        return None


def create_human_judge(profile: JudgeProfile, settings: Settings | None = None) -> HumanJudge:
    """Factory registered for kind ``human``."""
    del settings  # JudgeFactory signature; the human judge needs no settings
    return HumanJudge(profile)


def human_verdict(
    criterion: str,
    status: VerdictStatus | str,
    description: str,
    *,
    artifact_ref: str | None = None,
    time_s: float | None = None,
    profile_id: str = HUMAN_PROFILE_ID,
    latency_ms: float = 0.0,
) -> Verdict:
    """Build the verdict of a review (the reviewer's identity stays in the review record)."""
    return Verdict(
        criterion=criterion,
        status=VerdictStatus(status),
        evidence=Evidence(artifact_ref, time_s, description),
        judge_profile_id=profile_id,
        latency_ms=latency_ms,
    )
