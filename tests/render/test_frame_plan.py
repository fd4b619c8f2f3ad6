"""The frame loop's plan: one ``keys`` call, then only the timestamps of states not captured yet
are seeked; a seek that shows another key than planned stops the plan (every later timestamp is
seeked, as without it). A stand-in session records the calls; no browser runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from playwright.sync_api import Page

from render.browser import BrowserSession
from render.frames import FrameLoop
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-animated@1")
TIMES = tuple(0.5 * i for i in range(12))  # a 2 s loop seen three times


class _Session:
    """Answers ``frame`` and ``keys`` from ``key_at``; a screenshot names the state it shows."""

    def __init__(self, key_at: Callable[[float], str], seek_key: Callable[[float], str]) -> None:
        self.key_at, self.seek_key = key_at, seek_key
        self.calls: list[tuple[str, Any]] = []
        self.state = ""

    def evaluate(self, page: object, arg: dict[str, Any]) -> Any:
        del page  # one page only
        self.calls.append((arg["op"], arg.get("t", arg.get("times"))))
        if arg["op"] == "keys":
            return {"keys": [self.key_at(t) for t in arg["times"]], "kinds": ["smil"]}
        assert arg["op"] == "frame"
        self.state = self.seek_key(arg["t"])
        return {"kinds": ["smil"], "key": self.state}

    def screenshot(self) -> bytes:
        return f"png of {self.state}".encode()


def _run(session: _Session, *, reference: bool = False) -> dict[str, Any]:
    loop = FrameLoop(
        cast(BrowserSession, session), cast(Page, None), TASK, False, reference=reference
    )
    first = session.key_at(TIMES[0])
    session.state = first
    info = {"path": "swap", "kinds": ["smil"], "key": first}
    result: dict[str, Any] = {"frames": [], "masks": []}
    files: dict[str, bytes] = {}
    assert loop.run(info, TIMES, result, files) == {"smil"}
    return {"stats": loop.stats, "files": files, "frames": result["frames"]}


def _loop_key(t: float) -> str:
    return f"phase {t % 2.0}"


def test_a_state_captured_before_is_not_seeked_again() -> None:
    session = _Session(_loop_key, _loop_key)
    out = _run(session)
    assert out["stats"] == {"captured": 4, "reused": 8}
    ops = [op for op, _ in session.calls]
    assert ops.count("keys") == 1 and ops.count("frame") == 3  # 0.5, 1.0, 1.5 only
    for time_s in TIMES:  # every frame shows its own state
        name = f"frame-{round(time_s * 1000)}.png"
        assert out["files"][name] == f"png of {_loop_key(time_s)}".encode()


def test_a_seek_showing_another_key_than_planned_stops_the_plan() -> None:
    def seek_key(t: float) -> str:  # the state at 1.0 s depends on what was seeked before
        return "elsewhere" if t == 1.0 else _loop_key(t)

    session = _Session(_loop_key, seek_key)
    out = _run(session)
    seeked = [t for op, t in session.calls if op == "frame"]
    assert seeked == [0.5, 1.0, *TIMES[3:]]  # from 1.0 s on, every timestamp is seeked
    assert out["stats"]["captured"] + out["stats"]["reused"] == len(TIMES)
    for time_s in seeked:
        name = f"frame-{round(time_s * 1000)}.png"
        assert out["files"][name] == f"png of {seek_key(time_s)}".encode()


def _still(t: float) -> str:
    del t  # no animation: one state
    return "still"


def test_static_drawing_seeks_once() -> None:
    session = _Session(_still, _still)
    out = _run(session)
    assert out["stats"] == {"captured": 1, "reused": len(TIMES) - 1}
    assert [op for op, _ in session.calls] == ["keys"]
