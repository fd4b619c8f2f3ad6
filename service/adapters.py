"""Production components: ``checks.check_reply``, ``service.rendering`` and ``judges.evaluate``.

The other packages are imported lazily so that the API can start (and answer 503-free reads)
even while one of them is broken; the pipeline records the failure as ``incomplete`` with a cause.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from regua.errors import NotFoundError
from regua.settings import Settings
from service.components import (
    CheckOutput,
    Components,
    EvalInput,
    EvalOutput,
    RenderResult,
)
from service.static_jury import StaticJury
from tasks import TaskSpec

if TYPE_CHECKING:
    from sandbox import WorkerPool

log = logging.getLogger("regua.adapters")

#: Check ids whose failure means the SVG did not parse (then nothing is rendered).
PARSE_CHECK_IDS = frozenset({"parse", "xml", "well-formed", "wellformed", "xml-parse", "F-parse"})


class ChecksAdapter:
    """:class:`service.components.Checker` over ``checks.check_reply``."""

    def __init__(self) -> None:
        import checks

        self._check_reply = checks.check_reply
        self.version = f"checks@{checks.CHECKER_VERSION}"

    def check(self, raw: bytes, task: TaskSpec) -> CheckOutput:
        """Extraction + static checks, as plain dicts."""
        report = self._check_reply(raw, task)
        data = report.to_dict()
        extraction = report.extraction
        svg_text = extraction.svg_text if extraction is not None else None
        found = extraction is not None and extraction.status == "found" and svg_text is not None
        parse_failed = any(r.id in PARSE_CHECK_IDS and r.status == "fail" for r in report.results)
        return CheckOutput(
            status=report.status,
            report=data,
            svg_text=svg_text if found else None,
            extraction=extraction.to_dict() if extraction is not None else {"status": "no_svg"},
            parsed=found and not parse_failed,
        )


class RenderingAdapter:
    """:class:`service.components.Renderer` over ``service.rendering`` and a sandbox pool.

    The pool starts on first use (or :meth:`warm`) and is shared by every executor thread."""

    def __init__(self, settings: Settings) -> None:
        from service import rendering

        self._rendering = rendering
        self._settings = settings
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()
        self.version = rendering.RENDERER_VERSION

    def _get_pool(self) -> WorkerPool:
        with self._lock:
            if self._pool is None:
                self._pool = self._rendering.create_pool(self._settings)
            return self._pool

    def warm(self) -> None:
        """Start the workers now rather than on the first render."""
        self._get_pool()

    def render(self, svg_text: str, task: TaskSpec) -> RenderResult:
        """Render in the sandbox; a machinery failure comes back as ``incomplete``."""
        out = self._rendering.render_artifact(svg_text, task, self._get_pool())
        return RenderResult(
            status=out.status,
            result=out.result,
            files=out.files,
            cause=out.cause,
            detail=out.detail,
            attempts=out.attempts,
            elapsed_ms=out.elapsed_ms,
            sandbox=out.sandbox,
        )

    def close(self) -> None:
        """Close the worker pool."""
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None


class JudgesEvaluator:
    """:class:`service.components.Evaluator` over ``judges.evaluate`` with the family's panel."""

    def __init__(
        self,
        panel_id: str | None = None,
        settings: Settings | None = None,
        eligibility: Callable[[], Any] | None = None,
    ) -> None:
        self._judges: Any = importlib.import_module("judges")
        self._panel_override = panel_id
        self._settings = settings
        # who has earned a vote (the calibration gate's latest decisions); None: static rules only
        self._eligibility = eligibility
        self.panel_id = panel_id or "family-default"
        self._fallback = StaticJury()

    def _panel(self, task: TaskSpec) -> Any:
        if self._panel_override:
            return self._judges.get_panel(self._panel_override)
        return self._judges.panel_for_family(task.family)

    def version_for(self, task: TaskSpec) -> str:
        """``panel-id#hash`` of the panel used for the task (static-only without a panel)."""
        try:
            panel = self._panel(task)
        except NotFoundError:
            return self._fallback.version_for(task)
        return f"{panel.id}#{panel.content_hash()[:12]}"

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        """Run the panel; families without a panel fall back to the static-checks-only jury."""
        try:
            panel = self._panel(inp.task)
        except NotFoundError:
            return self._fallback.evaluate(inp)
        from service.panel_run import run_panel  # imports judges: only once a panel exists

        eligibility = self._eligibility() if self._eligibility is not None else None
        return run_panel(inp, panel, eligibility, self._settings)


def production_components(settings: Settings) -> Components:
    """The real checker, sandboxed renderer and judge panel."""
    from service.scoring.calibration import stored_eligibility  # the gate's latest decisions

    return Components(
        checker=ChecksAdapter(),
        renderer=RenderingAdapter(settings),
        evaluator=JudgesEvaluator(settings=settings, eligibility=stored_eligibility(settings)),
    )
