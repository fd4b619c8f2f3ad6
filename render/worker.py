"""The render handler: ``python -m sandbox.worker_main --handler render.worker:create_handler``.

Runs inside the sandbox. Config (``handler_config``)::

    {"chromium_path": "/usr/bin/chromium", "chromium_no_sandbox": false, "self_test": true,
     "context_reuse_jobs": 500, "deadline_s": 20.0, "swap_documents": true}

Jobs: ``{"kind": "render", "svg", "task", "masks", ["deadline_s"], ["content_type"]}`` (see
:mod:`render.job`) and ``{"kind": "selftest"}`` (re-runs the timing self-test). When
``self_test`` is on, the factory runs the timing self-test first and raises
:class:`~regua.errors.TimingSelfTestError` (the worker refuses to serve) when it fails.
"""

from __future__ import annotations

import time
from typing import Any

from regua.errors import RenderError, TimingSelfTestError
from render.browser import BrowserSession
from render.job import DEFAULT_DEADLINE_S, render_job
from render.launch import DEFAULT_CONTEXT_REUSE_JOBS, BrowserConfig
from render.selftest import run_selftest


class RenderHandler:
    """Owns the worker's browser; serves render and self-test jobs."""

    def __init__(self, config: dict[str, Any]) -> None:
        """Start the browser from the worker's ``config`` and run the timing self-test.

        The browser is closed again when the self-test fails or cannot run.
        """
        started = time.monotonic()
        self.browser_config = BrowserConfig(
            chromium_path=str(config.get("chromium_path") or "/usr/bin/chromium"),
            chromium_no_sandbox=bool(config.get("chromium_no_sandbox", False)),
            context_reuse_jobs=max(
                1, int(config.get("context_reuse_jobs") or DEFAULT_CONTEXT_REUSE_JOBS)
            ),
            swap_documents=bool(config.get("swap_documents", True)),
            extra_args=tuple(str(a) for a in config.get("chromium_extra_args") or ()),
        )
        self.deadline_s = float(config.get("deadline_s") or DEFAULT_DEADLINE_S)
        self.session = BrowserSession(self.browser_config)
        self.self_test: dict[str, Any] | None = None
        try:
            if config.get("self_test", True):
                self.self_test = run_selftest(self.session)
                if not self.self_test["passed"]:
                    failed = [n for n, m in self.self_test["mechanisms"].items() if not m["passed"]]
                    raise TimingSelfTestError(
                        f"timing self-test failed for {', '.join(failed)}: {self.self_test}"
                    )
        except BaseException:
            self.session.close()
            raise
        self.startup_ms = round((time.monotonic() - started) * 1000, 1)
        self.jobs = 0

    def handle(self, job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
        """Serve one job (see the module docstring)."""
        kind = job.get("kind", "render")
        self.jobs += 1
        if kind == "render":
            result, files = render_job(self.session, job, self.deadline_s)
            result["worker"] = {
                "jobs": self.jobs,
                "startup_ms": self.startup_ms,
                "launch_ms": self.session.launch_ms,
                "browser_relaunches": self.session.relaunches,
                "navigations": self.session.navigations,
                "self_test_passed": None if self.self_test is None else self.self_test["passed"],
            }
            return result, files
        if kind == "selftest":
            return run_selftest(self.session), {}
        raise RenderError(f"unknown job kind {kind!r}")

    def close(self) -> None:
        """Close the browser."""
        self.session.close()


def create_handler(config: dict[str, Any]) -> RenderHandler:
    """Factory named in the worker command line; may refuse by raising."""
    return RenderHandler(config)
