"""The demo's MOCK vision judge, piece by piece: declared truth, the HTTP server a real
``vision-llm`` judge talks to, and the declared (never calibrated) gate decisions.

What the user sees: a drawing the mock does not know is ``uncertain`` (a person must look), never
a pass; the mock's votes count only by decisions whose gate says ``mock-``, and the run view says
so; the decisions are stored once however often the demo starts.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path

from judges.calibration.sets import STATUSES
from service.demo.mock_judge import (
    MOCK_GATE_ID,
    MOCK_PANEL_ID,
    MOCK_PROFILE_ID,
    VISUAL,
    MockJudgeServer,
    declare_trust,
    register_mock,
)
from service.demo.mock_truth import declared_truth
from service.demo.samples import default_samples_dir, load_samples
from service.evaluation.gate import gate_table
from service.reports.votes import _basis
from service.storage import Database, GateDecisionRow
from tests.helpers.httpclient import Http

PNG_A = b"\x89PNG frame a"
PNG_B = b"\x89PNG frame b"


def _body(criterion: str, *pngs: bytes) -> dict[str, object]:
    images = [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(p).decode()},
        }
        for p in pngs
    ]
    text = {"type": "text", "text": f"Criterion {criterion} (necessary): is it so?"}
    return {"model": "regua-demo-mock", "messages": [{"role": "user", "content": [text, *images]}]}


def test_every_bundled_sample_declares_a_truth_the_mock_can_answer() -> None:
    samples = load_samples(default_samples_dir())
    kinds = {s.intent.partition(":")[0] for s in samples}
    assert kinds == {"good", "fail", "uncertain"}
    for sample in samples:
        truth = declared_truth(sample)
        assert set(truth) == set(VISUAL) and set(truth.values()) <= set(STATUSES)
        kind, _, criterion = sample.intent.partition(":")
        if kind == "good":
            assert set(truth.values()) == {"pass"}
        elif criterion in VISUAL:
            assert truth[criterion] == kind
            assert {v for c, v in truth.items() if c != criterion} == {"pass"}


def test_the_mock_answers_known_frames_from_their_truth_and_others_uncertain() -> None:
    server = MockJudgeServer().start()
    try:
        sha_a = hashlib.sha256(PNG_A).hexdigest()
        server.model.learn([sha_a], {"R2": "fail", "P1": "pass"})
        with Http(base_url=server.url, timeout=10) as http:
            said = http.post("/v1/chat/completions", json=_body("R2", PNG_A)).json()
            unknown = http.post("/v1/chat/completions", json=_body("R2", PNG_B)).json()
            bad = http.post("/v1/chat/completions", content=b"not json")
        answer = said["choices"][0]["message"]["content"]
        assert '"status": "fail"' in answer and "MOCK" in answer
        other = unknown["choices"][0]["message"]["content"]
        assert '"status": "uncertain"' in other and "MOCK" in other
        assert bad.status_code == 400
        assert server.model.asked == [
            ("R2", (sha_a,)),
            ("R2", (hashlib.sha256(PNG_B).hexdigest(),)),
        ]
    finally:
        server.stop()


def test_the_mock_learns_frames_it_does_not_know_from_what_recognises_them() -> None:
    """The demo renders nothing for the mock: frames missing from its table are looked up once
    (the demo looks them up in the service's store), and frames nobody recognises stay
    ``uncertain``."""
    sha_a, sha_b = (hashlib.sha256(p).hexdigest() for p in (PNG_A, PNG_B))
    looked_up: list[list[str]] = []

    def recognise(shas: Sequence[str]) -> dict[str, dict[str, str]]:
        looked_up.append(list(shas))
        return {s: {"R2": "fail", "P1": "pass"} for s in shas if s == sha_a}

    server = MockJudgeServer().start()
    server.model.recognise = recognise
    try:
        with Http(base_url=server.url, timeout=10) as http:
            said = [
                http.post("/v1/chat/completions", json=_body(c, *pngs)).json()
                for c, pngs in (("R2", (PNG_A,)), ("P1", (PNG_A,)), ("R2", (PNG_B, PNG_A)))
            ]
            unknown = http.post("/v1/chat/completions", json=_body("R2", PNG_B)).json()
        answers = [a["choices"][0]["message"]["content"] for a in said]
        assert '"status": "fail"' in answers[0] and '"status": "pass"' in answers[1]
        assert '"status": "fail"' in answers[2]  # the first frame the table knows decides
        assert '"status": "uncertain"' in unknown["choices"][0]["message"]["content"]
        assert looked_up == [[sha_a], [sha_b], [sha_b]]  # a frame learnt is never looked up again
        assert server.model.truth == {sha_a: {"R2": "fail", "P1": "pass"}}
    finally:
        server.stop()


def test_declared_trust_is_marked_mock_stored_once_and_lets_the_mock_vote(tmp_path: Path) -> None:
    profile, panel = register_mock()
    assert profile.id == MOCK_PROFILE_ID and panel.id == MOCK_PANEL_ID
    db = Database(f"sqlite:///{tmp_path / 'regua.sqlite3'}")
    try:
        assert declare_trust(db, profile) == len(VISUAL)
        assert declare_trust(db, profile) == 0  # a second start of the demo adds nothing
        with db.read() as s:
            table = gate_table(s)
            rows = s.query(GateDecisionRow).all()
        assert {r.criterion for r in rows} == set(VISUAL)
        assert all(r.gate_id == MOCK_GATE_ID and "MOCK" in r.reasons[0] for r in rows)
        assert all(table(profile, c, "pelican-bicycle") for c in VISUAL)
        assert not table(profile, "F1", "pelican-bicycle")
        basis, gate = _basis("vision-llm", None, rows[:1])
        assert basis == "MOCK judge: trusted by the demo's declaration, not by a calibration"
        assert gate is not None and gate.gate_id == MOCK_GATE_ID

    finally:
        db.dispose()
