"""The demo's MOCK vision judge, on the fake model server of :mod:`regua.llm.testing`.

It is not a model. It answers each criterion from the *declared truth* of the bundled samples
(``samples/outputs/manifest.json``: the ``intent`` of each sample, or its ``truth``), keyed by
the sha256 of the rendered frame PNGs it is shown, so it sees exactly what a vision model would
see over HTTP (prompt text and images) and nothing else: no run id, no model label, no file name.
It learns those hashes from the frames the service itself rendered and stored: a frame it does not
know yet is looked up in the store, by its sha256, and is a sample's when the SVG it was rendered
from is that sample's extracted SVG, on the sample's task (:mod:`service.demo.mock_truth`). So no
drawing is rendered twice. A frame of no bundled sample gets ``uncertain``.

Everything about it says *mock*: the profile ``vision-llm-mock@1`` (model
``regua-demo-mock``), the panel ``pelican-bicycle-mock@1``, every evidence line starts with
``MOCK``, and its gate decisions are the demo's declaration (gate ``mock-demo-declaration@1``),
not a calibration: the run view reads them as "MOCK judge: trusted by the demo's declaration".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import judges
from judges.builtin import vision_profile
from judges.calibration import GateDecision
from judges.panel import ALL_CRITERIA, JudgePanel, register_panel
from regua.llm.testing import FakeModelServer, FrameTruth
from service.evaluation.gate import store_decisions
from service.storage import Database

MOCK_PROFILE_ID = "vision-llm-mock@1"
MOCK_MODEL = "regua-demo-mock"
MOCK_PANEL_ID = "pelican-bicycle-mock@1"
MOCK_GATE_ID = "mock-demo-declaration@1"
"""Gate id of the demo's declared decisions (the run view names any ``mock-`` gate as mock)."""
MOCK_SET_ID = "demo-samples-declared-truth (mock, no calibration)"
FAMILY = "pelican-bicycle"
VISUAL = ("P1", "B1", "B2", "R1", "R2", "R3", "A1", "A2", "Q1")
"""Criteria the mock answers (F1 stays with the static rules)."""

MOCK_PROFILE = vision_profile(
    MOCK_PROFILE_ID,
    "openai",
    "MOCK vision judge of the demo (not a model): answers from the bundled "
    "samples' declared truth, keyed by the sha256 of the frames it is shown.",
    model=MOCK_MODEL,
)


def register_mock() -> tuple[judges.JudgeProfile, JudgePanel]:
    """Register the mock profile and its panel in the process-wide registries (idempotent)."""
    profile = judges.register_profile(MOCK_PROFILE)
    panel = register_panel(
        JudgePanel(
            id=MOCK_PANEL_ID,
            family=FAMILY,
            assignments={ALL_CRITERIA: ("static@1", MOCK_PROFILE_ID), "F1": ("static@1",)},
            description="MOCK: the demo's panel: the static rules on F1, the demo's mock vision "
            "judge on every visual criterion.",
        )
    )
    return profile, panel


def _mock_evidence(criterion: str, status: str, known: bool) -> str:
    if known:
        return f"MOCK: the sample's declared truth says {criterion} {status}"
    return f"MOCK: these frames are not a bundled sample's; {criterion} unknown"


Recognise = Callable[[Sequence[str]], dict[str, dict[str, str]]]
"""Frame sha256s → the declared truth of those that are a bundled sample's (the others left out)."""


@dataclass
class MockTruth(FrameTruth):
    """The truth table keyed by frame sha256, learning the frames it does not know yet.

    Before answering about frames missing from the table it asks ``recognise`` (when set) and
    learns what that recognises; frames nobody recognises stay ``uncertain``.
    """

    recognise: Recognise | None = None

    def status(self, criterion: str, shas: list[str]) -> tuple[str, bool]:
        """The status for these frames (and whether the table knew it), after learning them."""
        if self.recognise is not None:
            with self.lock:
                unknown = [s for s in shas if s not in self.truth]
            for sha, statuses in (self.recognise(unknown) if unknown else {}).items():
                self.learn([sha], statuses)
        return super().status(criterion, shas)


def mock_model() -> MockTruth:
    """The mock: a truth table keyed by frame sha256, ``uncertain`` for frames it never saw."""
    return MockTruth(evidence=_mock_evidence, usage=(0, 0))


class MockJudgeServer(FakeModelServer[MockTruth]):
    """The mock on an ephemeral loopback port, on a daemon thread (the one fake model server)."""

    def __init__(self) -> None:
        """Bind the port (nothing answers until :meth:`start`)."""
        super().__init__(mock_model(), name=MOCK_MODEL)


def declare_trust(db: Database, profile: judges.JudgeProfile) -> int:
    """Store the demo's gate decisions letting the mock vote, marked as a declaration.

    These are not a calibration: the mock answers from the very truth it would be calibrated
    against, so calibrating it would prove nothing. The decisions say so in their gate id, set
    id and reasons. Returns how many were stored (none when they are already there).
    """
    from sqlalchemy import select

    from service.storage import GateDecisionRow

    with db.write() as s:
        have = s.scalars(
            select(GateDecisionRow.criterion)
            .where(GateDecisionRow.profile_id == profile.id)
            .where(GateDecisionRow.gate_id == MOCK_GATE_ID)
            .where(GateDecisionRow.profile_hash == profile.content_hash())
        ).all()
        now = datetime.now(UTC).isoformat()
        reason = (
            "MOCK: declared trusted by the demo, not calibrated; the mock judge answers from "
            "the bundled samples' declared truth"
        )
        decisions = [
            GateDecision(
                profile_id=profile.id,
                criterion=c,
                task_family=FAMILY,
                passed=True,
                reasons=(reason,),
                metrics={},
                thresholds={},
                gate_id=MOCK_GATE_ID,
                set_id=MOCK_SET_ID,
                split_seed=None,
                decided_at=now,
                profile_hash=profile.content_hash(),
                status="trusted",
            )
            for c in VISUAL
            if c not in set(have)
        ]
        store_decisions(s, decisions)
    return len(decisions)
