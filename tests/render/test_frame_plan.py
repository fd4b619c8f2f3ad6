"""The frame loop's plan: one call keys every later timestamp; a state captured before costs no
call, and a state whose seek does not give its planned key is never reused."""

from __future__ import annotations

from typing import Any, cast

from render.browser import BrowserSession
from render.frames import FrameLoop
from tasks import TaskSpec


class _Session:
    """Answers ``plan`` with ``planned`` keys and ``frame`` with ``seeked`` keys; logs calls."""

    def __init__(self, planned: list[str | None], seeked: dict[float, str | None]) -> None:
        self.planned, self.seeked = planned, seeked
        self.calls: list[tuple[str, Any]] = []
        self.shots = 0

    def evaluate(self, page: object, arg: dict[str, Any]) -> Any:
        del page
        self.calls.append((arg["op"], arg.get("t", arg.get("times"))))
        if arg["op"] == "plan":
            return [{"kinds": ["smil"], "key": k} for k in self.planned]
        return {"kinds": ["smil"], "key": self.seeked[arg["t"]]}

    def screenshot(self) -> bytes:
        self.shots += 1
        return f"png {self.shots}".encode()


def _run(planned: list[str | None], seeked: dict[float, str | None]) -> tuple[Any, _Session]:
    session = _Session(planned, seeked)
    loop = FrameLoop(cast(BrowserSession, session), None, cast(TaskSpec, None), want_masks=False)  # type: ignore[arg-type]
    result: dict[str, Any] = {"frames": [], "masks": []}
    info = {"kinds": [], "key": "A", "path": "swap"}
    times = (0.0, 1.0, 2.0, 3.0, 4.0)
    assert loop.run(info, times, result, {}) == {"smil"}
    return result, session


def test_a_state_captured_before_costs_no_call() -> None:
    result, session = _run(["B", "A", "B", None], {1.0: "B", 4.0: "X"})
    assert session.calls == [("plan", [1.0, 2.0, 3.0, 4.0]), ("frame", 1.0), ("frame", 4.0)]
    assert [f.get("same_as") for f in result["frames"]] == [None, None, 0.0, 1.0, None]
    assert session.shots == 3


def test_a_state_not_seeked_as_planned_is_never_reused() -> None:
    result, session = _run(["B", "B", "A", "A"], {1.0: "other", 2.0: "B"})
    assert session.calls == [("plan", [1.0, 2.0, 3.0, 4.0]), ("frame", 1.0), ("frame", 2.0)]
    assert [f.get("same_as") for f in result["frames"]] == [None, None, None, 0.0, 0.0]
