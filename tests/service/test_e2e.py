"""End to end: ``regua serve`` as a real subprocess with the real checker, sandboxed renderer and
judges; one run followed over HTTP to its outcome, every artifact resolved and hash-checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers.server import Served, require_real_rendering

TASK = "pelican-bicycle-structured@1"
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"


@pytest.mark.browser
@pytest.mark.sandbox
def test_serve_submit_follow_resolve(tmp_path: Path) -> None:
    require_real_rendering()
    data = tmp_path / "data"
    data.mkdir()
    server = Served(data)
    try:
        client = server.client()
        reply = (
            "Here is the drawing:\n```svg\n"
            + (SAMPLES / "structured-good.svg").read_text()
            + "```\n"
        )
        run_id = client.submit(TASK, "e2e-model", reply, provider="test")
        view = client.wait([run_id], timeout_s=240)[run_id]
        assert view["status"] == "done"
        assert view["outcome"]["status"] in {"pass", "pending"}, view["outcome"]
        assert view["render"]["status"] == "ok" and view["render"]["browser_version"]
        crit = {c["criterion"]: c for c in view["evaluation"]["criteria"]}
        assert crit["F1"]["status"] == "pass" and crit["A"]["status"] == "not_applicable"
        arts = view["artifacts"]
        by_id = {a["id"]: a for a in arts}
        for art in arts:
            r = client.artifact(art["sha256"])
            assert r.status_code == 200, art
            assert (
                hashlib.sha256(r.content).hexdigest()
                == art["sha256"]
                == r.headers["x-content-sha256"]
            )
            assert r.headers["content-type"].split(";")[0] == art["media_type"].split(";")[0]
            assert len(r.content) == art["size"]
        raw = [a for a in arts if a["kind"] == "raw"]
        extracted = [a for a in arts if a["kind"] == "extracted"]
        frames = [a for a in arts if a["kind"] == "frame"]
        masks = [a for a in arts if a["kind"] == "mask"]
        assert len(raw) == len(extracted) == 1 and frames
        assert extracted[0]["parent_id"] == raw[0]["id"]
        assert all(f["parent_id"] == extracted[0]["id"] for f in frames)
        assert all(by_id[m["parent_id"]]["kind"] == "frame" for m in masks)
        assert client.artifact(frames[0]["sha256"]).content[:8] == b"\x89PNG\r\n\x1a\n"
        refs = [
            e["artifact_ref"]
            for c in view["evaluation"]["criteria"]
            for v in c["verdicts"]
            for e in v["evidence"]
            if e.get("artifact_ref")
        ]
        for ref in refs:  # evidence points at stored artifacts
            assert client.artifact(ref.split(":")[-1]).status_code == 200
        client.close()
    finally:
        server.stop()
