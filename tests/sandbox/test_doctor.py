"""``regua doctor``: versions, sandbox start, contract quick checks, self-test availability."""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from regua.settings import Settings
from service.cli import app, doctor_cmd
from tests.sandbox.conftest import require_backend


def test_doctor_reports_versions_sandbox_and_contract_checks() -> None:
    require_backend("bubblewrap")
    result = CliRunner().invoke(app, ["doctor", "--no-render", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["sandbox backend"]["detail"].startswith("bubblewrap: bubblewrap ")
    assert "cold start" in by_name["sandbox starts"]["detail"]
    for name in ("non_root", "no_tcp_to_host_loopback", "no_dns", "fork_bomb", "timeout"):
        assert by_name[f"contract: {name}"]["status"] == "ok"
    if Settings().chromium_path.exists():
        assert by_name["chromium"]["detail"].startswith("Chromium ")
        assert by_name["contract: chromium_sandbox"]["status"] == "ok"


def test_doctor_fails_with_exit_1_on_an_unknown_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGUA_SANDBOX_BACKEND", "no-such-backend")
    result = CliRunner().invoke(app, ["doctor", "--no-render"])
    assert result.exit_code == 1
    assert "[FAIL] sandbox backend: unknown sandbox backend 'no-such-backend'" in result.output
    assert "essential check(s) failed" in result.output


def test_selftest_says_not_available_without_render_selftest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "render.selftest" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    line = doctor_cmd.selftest_line(Settings())
    assert line.status == "skip"
    assert "not available" in line.detail
