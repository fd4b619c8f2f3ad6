"""``regua doctor``: is this machine able to render untrusted SVG safely?

Reports the Chromium and bubblewrap versions, whether a sandbox starts (and how fast), the
contract suite's quick checks run from inside a probe sandbox (non-root, no network, no DNS, no
host files, clean environment, fork bomb, memory hog, timeout, Chromium's own sandbox) and the
renderer's timing self-test when ``render.selftest`` is available. Exits 1 when something
essential fails.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import time
from dataclasses import asdict, dataclass
from typing import Any

import typer

from regua.errors import ReguaError
from regua.settings import Settings, load_settings


@dataclass
class DoctorLine:
    """One line of the report."""

    name: str
    status: str  # "ok" | "fail" | "skip"
    detail: str
    essential: bool = True


def chromium_version(settings: Settings) -> DoctorLine:
    """``chromium --version`` of the configured binary."""
    path = settings.chromium_path
    if not path.exists():
        return DoctorLine("chromium", "fail", f"not found at {path} (apt-get install chromium)")
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return DoctorLine("chromium", "fail", f"{path}: {exc}")
    version = out.stdout.strip()
    return DoctorLine("chromium", "ok" if version else "fail", version or out.stderr.strip())


def backend_line(settings: Settings) -> DoctorLine:
    """The sandbox backend's version and whether it can run here."""
    from sandbox import get_backend

    try:
        backend = get_backend(settings.sandbox_backend)
    except ReguaError as exc:
        return DoctorLine("sandbox backend", "fail", str(exc))
    ok, why = backend.check()
    detail = f"{backend.name}: {backend.version()}" + ("" if ok else f" — {why}")
    return DoctorLine("sandbox backend", "ok" if ok else "fail", detail)


def probe_lines(settings: Settings) -> list[DoctorLine]:
    """Start a probe sandbox and run the contract's quick checks in it."""
    from sandbox import SandboxLimits, WorkerPool
    from sandbox.contract import PROBE_HANDLER, quick_checks

    limits = SandboxLimits(memory_mb=512, max_processes=256, wall_timeout_s=20)
    started = time.monotonic()
    try:
        pool = WorkerPool(settings.sandbox_backend, PROBE_HANDLER, {}, size=1, limits=limits)
    except ReguaError as exc:
        return [DoctorLine("sandbox starts", "fail", str(exc))]
    with pool:
        cold_ms = (time.monotonic() - started) * 1000
        rtts = [pool.run({"op": "echo"}).elapsed_ms for _ in range(20)]
        rtts.sort()
        lines = [
            DoctorLine(
                "sandbox starts",
                "ok",
                f"worker cold start {cold_ms:.0f} ms; probe round trip median {rtts[10]:.1f} ms",
            )
        ]
        chromium = settings.chromium_path.exists()
        for check in quick_checks(pool, chromium=chromium):
            lines.append(
                DoctorLine(f"contract: {check.name}", "ok" if check.ok else "fail", check.detail)
            )
    return lines


def selftest_line(settings: Settings) -> DoctorLine:
    """The renderer's timing self-test, run in a sandboxed render worker."""
    if importlib.util.find_spec("render.selftest") is None:
        return DoctorLine("timing self-test", "skip", "not available (render.selftest missing)")
    try:
        from service.pipeline.render_client import create_pool
    except ImportError as exc:
        return DoctorLine("timing self-test", "skip", f"not available ({exc})")
    started = time.monotonic()
    try:
        with create_pool(settings, size=1, self_test=True) as pool:
            outcome = pool.run({"kind": "selftest"}, timeout_s=max(60.0, settings.job_timeout_s))
    except ReguaError as exc:  # the worker refuses to serve when its start-up self-test fails
        return DoctorLine("timing self-test", "fail", f"render worker did not start: {exc}")
    result: dict[str, Any] = outcome.result or {}
    if not outcome.ok:
        return DoctorLine("timing self-test", "fail", f"{outcome.cause}: {outcome.detail[:500]}")
    mechanisms = result.get("mechanisms") or {}
    summary = ", ".join(
        f"{name} {'ok' if m.get('passed') else 'FAIL'} (max {m.get('max_error_px', '?')} px)"
        for name, m in mechanisms.items()
    )
    seconds = time.monotonic() - started
    detail = f"{summary or 'no mechanisms reported'}; worker start + test {seconds:.1f} s"
    return DoctorLine("timing self-test", "ok" if result.get("passed") else "fail", detail)


def run_doctor(settings: Settings, *, render: bool = True) -> list[DoctorLine]:
    """Every line of the report, in order."""
    lines = [chromium_version(settings), backend_line(settings)]
    if lines[1].status == "ok":
        lines += probe_lines(settings)
    else:
        lines.append(DoctorLine("sandbox starts", "fail", "skipped: backend unavailable"))
    if render and lines[0].status == "ok" and lines[1].status == "ok":
        lines.append(selftest_line(settings))
    elif render:
        lines.append(DoctorLine("timing self-test", "fail", "needs Chromium and the sandbox"))
    return lines


def doctor_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    render: bool = typer.Option(True, "--render/--no-render", help="Run the timing self-test"),
) -> None:
    """Check Chromium, the sandbox and its contract on this machine; exit 1 if unsafe/unusable."""
    lines = run_doctor(load_settings(), render=render)
    failed = [line for line in lines if line.status == "fail" and line.essential]
    if as_json:
        report = {"ok": not failed, "checks": [asdict(line) for line in lines]}
        typer.echo(json.dumps(report, indent=2))
    else:
        marks = {"ok": "ok  ", "fail": "FAIL", "skip": "skip"}
        for line in lines:
            typer.echo(f"[{marks[line.status]}] {line.name}: {line.detail}")
        typer.echo(
            "doctor: all essential checks passed"
            if not failed
            else f"doctor: {len(failed)} essential check(s) failed"
        )
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``regua doctor`` to the main app."""
    app.command("doctor")(doctor_command)
