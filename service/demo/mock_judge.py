"""The demo's MOCK vision judge: a local HTTP server speaking the OpenAI chat-completions API.

It is not a model. It answers each criterion from the *declared truth* of the bundled samples
(``samples/outputs/manifest.json``: the ``intent`` of each sample, or its ``truth``), keyed by
the sha256 of the rendered frame PNGs it is shown, so it sees exactly what a vision model would
see over HTTP (prompt text and images) and nothing else: no run id, no model label, no file name.
The demo learns those hashes by rendering each sample once before submitting it
(:mod:`service.demo.mock_truth`). A frame it does not know gets ``uncertain``.

Everything about it says *mock*: the profile ``vision-llm-mock@1`` (model
``regua-demo-mock``), the panel ``pelican-bicycle-mock@1``, every evidence line starts with
``MOCK``, and its gate decisions are the demo's declaration (gate ``mock-demo-declaration@1``),
not a calibration: the run view reads them as "MOCK judge: trusted by the demo's declaration".
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import judges
from judges.builtin import VISION_PARAMS, VISION_TEMPLATE_VERSION
from judges.calibration import GateDecision
from judges.panel import ALL_CRITERIA, JudgePanel, register_panel
from judges.vision.prompt import DEFAULT_TEMPLATE
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
CRITERION = re.compile(r"Criterion (\w+) \(")
IMAGE = re.compile(r"^data:image/png;base64,(.+)$")

MOCK_PROFILE = judges.JudgeProfile(
    id=MOCK_PROFILE_ID,
    kind="vision-llm",
    model=MOCK_MODEL,
    prompt_template=DEFAULT_TEMPLATE,
    prompt_version=VISION_TEMPLATE_VERSION,
    params={"api": "openai", **VISION_PARAMS},
    description="MOCK vision judge of the demo (not a model): answers from the bundled "
    "samples' declared truth, keyed by the sha256 of the frames it is shown.",
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


def criterion_and_frames(body: Any) -> tuple[str, list[str]]:
    """The criterion a chat-completions request asks about and the sha256 of each image sent.

    All a model server can know: the prompt text and the images (never the run or its model).
    """
    texts: list[str] = []
    shas: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            if part.get("type") == "text":
                texts.append(str(part.get("text")))
            elif part.get("type") == "image_url":
                found = IMAGE.match(str(part["image_url"]["url"]))
                if found:
                    shas.append(hashlib.sha256(base64.b64decode(found.group(1))).hexdigest())
    match = CRITERION.search("\n".join(texts))
    return (match.group(1) if match else "?"), shas


@dataclass
class MockModel:
    """What the mock knows (frame sha256 → criterion → status) and what it was asked."""

    truth: dict[str, dict[str, str]] = field(default_factory=dict)
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def learn(self, frame_shas: Iterable[str], statuses: dict[str, str]) -> None:
        """Declare the truth of the drawing whose frames have these hashes."""
        with self.lock:
            for sha in frame_shas:
                self.truth.setdefault(sha, {}).update(statuses)

    def answer(self, body: Any) -> str:
        """The reply text (the judge's JSON answer) to one chat-completions request body."""
        criterion, shas = criterion_and_frames(body)
        with self.lock:
            self.asked.append((criterion, tuple(shas)))
            known = [self.truth[s][criterion] for s in shas if criterion in self.truth.get(s, {})]
        if known:
            status = known[0]
            evidence = f"MOCK: the sample's declared truth says {criterion} {status}"
        else:
            status = "uncertain"
            evidence = f"MOCK: these frames are not a bundled sample's; {criterion} unknown"
        return json.dumps({"status": status, "evidence": evidence, "time_s": None})


def _handler(model: MockModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                text = model.answer(json.loads(raw))
            except (ValueError, KeyError, TypeError, AttributeError):
                self.send_error(400, "not a chat-completions request")
                return
            data = json.dumps(
                {
                    "id": "chatcmpl-regua-demo-mock",
                    "object": "chat.completion",
                    "model": MOCK_MODEL,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class MockJudgeServer:
    """The mock on an ephemeral loopback port, on a daemon thread."""

    def __init__(self) -> None:
        """Bind the port (nothing answers until :meth:`start`)."""
        self.model = MockModel()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.model))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="regua-demo-mock-judge",
            daemon=True,
        )

    def start(self) -> MockJudgeServer:
        """Start serving; returns self."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


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
