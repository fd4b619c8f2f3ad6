"""``regua render`` and the host glue (``service.pipeline.render_client``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from render.netlog import RequestLog, build_csp
from service.cli import app
from service.pipeline.render_client import RenderOutput
from service.pipeline.render_log import RenderLog
from tasks import AllowedFeatures
from tests.helpers.render_pool import render_pool_unavailable


def test_csp_forbids_scripts_and_fetches_unless_allowed() -> None:
    strict = build_csp(AllowedFeatures())
    assert "script-src 'none'" in strict and "default-src 'none'" in strict
    assert "img-src 'none'" in strict and "https:" not in strict
    loose = build_csp(AllowedFeatures(external_resources=True, raster_images=True))
    assert "script-src 'none'" in loose and "img-src data: https:" in loose


def test_request_log_keeps_each_url_once_with_the_strongest_witness() -> None:
    log = RequestLog(document_url="https://doc/a.svg")
    log.on_request_will_be_sent(
        {"requestId": "1", "request": {"url": "https://x/i"}, "type": "Image"}
    )
    log.on_loading_failed({"requestId": "1", "blockedReason": "csp"})
    log.on_route("https://x/j", "stylesheet")
    log.on_request_will_be_sent(
        {"requestId": "2", "request": {"url": "https://x/j"}, "type": "Stylesheet"}
    )
    log.on_request_will_be_sent({"requestId": "3", "request": {"url": "https://doc/a.svg"}})
    text = "Loading the font 'https://x/f.woff' violates the following Content Security Policy"
    log.on_log_entry({"entry": {"text": text}})
    entries = {e["url"]: e for e in log.blocked_requests()}
    assert set(entries) == {"https://x/i", "https://x/j", "https://x/f.woff"}
    assert (
        entries["https://x/i"]["via"] == "csp"
        and entries["https://x/i"]["resource_type"] == "image"
    )
    assert entries["https://x/j"]["via"] == "route"
    assert entries["https://x/f.woff"]["resource_type"] == "font"
    assert len(log.csp_violations) == 1


def test_refused_refresh_is_paired_with_the_documents_target() -> None:
    log = RequestLog(document_url="https://j1.regua-render.invalid/artifact.svg")
    text = (
        "Refused to execute the redirect specified via '<meta http-equiv='refresh' "
        "content='...'>'. The document is sandboxed, and the 'allow-scripts' keyword is not set."
    )
    log.on_log_entry({"entry": {"source": "security", "text": text}})
    log.refused_refresh("0;url=about:blank")
    log.refused_refresh("5; URL='https://example.test/next'")  # never reported: still refused
    (first, second) = log.refused_navigations()
    assert (first["kind"], first["url"], first["detail"]) == ("meta-refresh", "about:blank", text)
    assert second["url"] == "https://example.test/next" and second["time_ms"] is None
    assert log.blocked_requests() == [] and log.csp_violations == []


def test_output_refuses_unsafe_names(tmp_path: Path) -> None:
    out = RenderOutput("ok", RenderLog(), {"../evil.png": b"x"})
    with pytest.raises(ValueError):
        out.write(tmp_path)


@pytest.mark.browser
@pytest.mark.sandbox
def test_regua_render_writes_frames_masks_and_render_json(
    tmp_path: Path, samples_dir: Path
) -> None:
    reason = render_pool_unavailable()
    if reason:
        pytest.skip(reason)
    svg = samples_dir / "outputs" / "structured-good.svg"
    out = tmp_path / "out"
    args = [
        "render",
        str(svg),
        "--task",
        "pelican-bicycle-structured@1",
        "--out",
        str(out),
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "render.json").read_text())
    assert json.loads(result.stdout) == doc
    measured = {k: doc["sandbox"][k] for k in ("backend", "measured", "uid", "network")}
    assert measured == {
        "backend": "bubblewrap",
        "measured": True,
        "uid": 65534,
        "network": "loopback-only",
    }
    for key in (
        "blocked_requests",
        "animation",
        "render_profile_id",
        "browser_version",
        "elapsed_ms",
    ):
        assert key in doc
    [frame] = doc["frames"]
    assert frame["name"] == "frame-0.png" and frame["time_s"] == 0.0
    assert hashlib.sha256((out / "frame-0.png").read_bytes()).hexdigest() == frame["sha256"]
    assert len(doc["masks"]) == 30
    for mask in doc["masks"]:
        assert hashlib.sha256((out / mask["name"]).read_bytes()).hexdigest() == mask["sha256"]


def test_regua_render_unknown_task(tmp_path: Path, samples_dir: Path) -> None:
    svg = samples_dir / "outputs" / "structured-good.svg"
    result = CliRunner().invoke(
        app, ["render", str(svg), "--task", "nope@1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "unknown task" in result.output
