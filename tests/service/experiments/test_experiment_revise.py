"""An experiment arm with ``revise: 1`` through the real pipeline and a fake model that fixes its
drawing after seeing a frame: the arms are compared on first answers only, the revised series
is reported apart (never compared), and resuming the experiment asks the model nothing again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from regua.llm.testing import FixesAfterFrame, serving
from sandbox import WorkerPool
from service.experiments.builtin import RUNNER
from service.experiments.exports import summary_lines
from service.experiments.html import render_experiment_html
from service.experiments.plan import resolve_plan
from service.experiments.report_db import experiment_history, experiment_report
from service.experiments.runner import run_experiment
from service.experiments.spec import load_experiment_text
from service.experiments.store import open_experiment
from tests.helpers.revise import BROKEN, FIXED, revise_context

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
FILE = """
id: revising
seed: 3
repeats: 2
items: [revise-mini]
arms:
  - name: once
    model: {{api: openai, model: m, base_url: "{url}/v1"}}
  - name: looks
    model: {{api: openai, model: m, base_url: "{url}/v1"}}
    revise: 1
"""


def test_a_revising_arm_is_compared_on_first_answers_and_its_rounds_reported_apart(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    model = FixesAfterFrame(BROKEN, FIXED)
    with revise_context(tmp_path / "data", render_pool) as ctx, serving(model) as server:
        spec = load_experiment_text(FILE.format(url=server.url))
        ident, _ = open_experiment(ctx.db, spec, resolve_plan(spec, ctx.registry), "w", None)
        result = run_experiment(ctx, ident, RUNNER, token_id=None, wait_s=300)
        assert result.status == "done", result
        calls = len(server.requests)
        assert calls == 2 + 2 + 2  # two first answers per arm, one revision per 'looks' case
        again = run_experiment(ctx, ident, RUNNER, token_id=None, wait_s=300)
        assert again.generated == 0 and len(server.requests) == calls  # nothing asked again
        report = experiment_report(ctx.db, ident)
        history = experiment_history(ctx.db, "revising")
    arms = {a["arm"]: a for a in report["arms"]}
    assert arms["once"]["counts"]["fail"] == 2 and arms["looks"]["counts"]["fail"] == 2
    (cmp,) = report["comparisons"]
    assert cmp["table"]["both_fail"] == 2  # first answers paired, the revisions never
    (fb,) = report["feedback"]
    assert fb["arm"] == "looks" and fb["cases"] == 2
    first, after = fb["series"]
    assert (first["series"], first["counts"]["pass"]) == ("first answer", 0)
    assert (after["series"], after["counts"]["pass"]) == ("after 1 round of feedback", 2)
    assert fb["rounds_to_pass"] == {"1": 2}
    lines = "\n".join(summary_lines(report))
    assert "looks with feedback (apart, never compared):" in lines
    assert "after 1 round of feedback: pass 2/2" in lines
    html = render_experiment_html(report, history)
    assert "Render-and-revise: each round its own series" in html


def test_a_file_without_revise_keeps_its_content_hash() -> None:
    """Experiments stored before arms could revise resume: the options at their defaults are
    left out of the hash, and a revising arm is another file."""
    plain = load_experiment_text(FILE.replace("    revise: 1\n", "").format(url="http://h"))
    explicit = load_experiment_text(
        FILE.replace("revise: 1", "revise: 0\n    revise_findings: false").format(url="http://h")
    )
    revising = load_experiment_text(FILE.format(url="http://h"))
    assert plain.content_hash() == explicit.content_hash() != revising.content_hash()
    old_fields = plain.model_dump(
        mode="json",
        exclude={
            "arms": {"__all__": {"revise": True, "revise_findings": True, "model": {"provider"}}}
        },
    )
    before = json.dumps(old_fields, sort_keys=True, separators=(",", ":"))  # the hash as it was
    assert plain.content_hash() == hashlib.sha256(before.encode()).hexdigest()
