"""A judge that says ``pass`` to every geometry criterion, registered through the judge
registry (the extension point every plugin uses): the lax judge the gate must refuse."""

from __future__ import annotations

import judges
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, TaskSpec

KIND = "pass-everything-test"
PROFILE = JudgeProfile(f"{KIND}@1", KIND, description="says pass to everything")
CRITERIA = ("B1", "B2", "R1", "R2", "R3")


class PassEverything:
    """Passes every geometry criterion, whatever the drawing."""

    def __init__(self, profile: JudgeProfile) -> None:
        self.profile = profile

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        del task
        return criterion.id in CRITERIA

    def judge(self, inp: judges.JudgeInput) -> Verdict | JudgeFailure | None:
        evidence = Evidence(None, None, "looks fine")
        return Verdict(inp.criterion.id, VerdictStatus.PASS, evidence, self.profile.id)


def _factory(profile: JudgeProfile, settings: Settings | None) -> PassEverything:
    del settings
    return PassEverything(profile)


def register() -> JudgeProfile:
    """Register the kind and its profile (idempotent) and return the profile."""
    judges.register_judge_kind(KIND, _factory, replace=True)
    return judges.register_profile(PROFILE)
