"""A fake OpenAI-compatible vision model that says ``pass`` to every criterion it is asked
about (the lax model the gate must refuse), on the one fake model server."""

from __future__ import annotations

from contextlib import AbstractContextManager

from regua.llm.testing import FakeModelServer, FrameTruth, serving


def _fine(criterion: str, status: str, known: bool) -> str:
    del status, known  # it says the same about everything
    return f"{criterion} looks fine"


def pass_everything_model() -> AbstractContextManager[FakeModelServer[FrameTruth]]:
    """Serve a model that knows no frame and answers ``pass`` at t=0 to every question."""
    return serving(FrameTruth(default="pass", evidence=_fine, time_s=0.0))
