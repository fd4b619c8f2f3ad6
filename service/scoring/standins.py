"""Components re-scoring hands to the render stage: it never checks or evaluates through them,
and without a renderer it knows the version only (a re-render is refused, the run skipped)."""

from __future__ import annotations

from typing import Any

from regua.errors import InputError
from service.components import CheckOutput, EvalInput, EvalOutput
from tasks import TaskSpec


class NoRenderer:
    """Stands in when no renderer was given: version only; rendering is refused."""

    def __init__(self) -> None:
        from service.rendering import RENDERER_VERSION

        self.version = RENDERER_VERSION

    def render(self, svg_text: str, task: TaskSpec) -> Any:
        raise InputError("the render profile changed but no renderer is available")

    def close(self) -> None:
        """Nothing to release."""


class NoChecker:
    """Re-scoring reads the stored check report."""

    version = "stored"

    def check(self, raw: bytes, task: TaskSpec) -> CheckOutput:
        raise InputError("re-scoring never re-runs the checks")


class NoEvaluator:
    """Re-scoring judges through :class:`service.scoring.evaluator.PanelEvaluator`."""

    panel_id = "rescore"

    def version_for(self, task: TaskSpec) -> str:
        return "rescore"

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        raise InputError("re-scoring evaluates through PanelEvaluator")
