"""One render job: load the artifact, seek every timestamp, capture frames and masks, log requests.

Result format: ``docs/contracts.md`` (section *render*). Beyond the contract's keys the result
carries ``status`` (``ok`` | ``timeout`` | ``crash`` | ``error``), ``task_ref``, ``timestamps``,
``csp``, ``csp_violations``, ``script_attempts_blocked``, ``document`` (root element, element
count, script elements, XML viewer) and ``content_type``.
"""

from __future__ import annotations

import functools
import io
import time
from typing import Any

from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from regua.errors import RenderError
from regua.hashing import sha256_hex
from render.browser import BrowserSession
from render.failures import BrowserCrashedError, public_detail
from render.masks import capture_masks, encode_masks
from render.netlog import RequestLog, build_csp
from render.watchdog import Watchdog
from tasks import TaskSpec

CONTENT_TYPES = ("image/svg+xml", "text/html")
"""The content types a job may declare; the service always sends SVG.

``text/html`` exists only so that hardening tests can feed HTML-context payloads (HTTPLeaks)
through the very same policy, interception and logging.
"""

DEFAULT_DEADLINE_S = 20.0
XHTML_NS = "http://www.w3.org/1999/xhtml"


def frame_ms(time_s: float) -> int:
    """The millisecond stamp used in file names."""
    return round(time_s * 1000)


def _size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size[1], image.size[0]


def _read_job(job: dict[str, Any], default_deadline_s: float) -> tuple[TaskSpec, str, str, float]:
    """The task, SVG text, content type and deadline of a job, checked."""
    task = TaskSpec.model_validate(job["task"])
    svg = job.get("svg")
    if not isinstance(svg, str):
        raise RenderError("job['svg'] must be a string")
    content_type = str(job.get("content_type") or "image/svg+xml")
    if content_type not in CONTENT_TYPES:
        raise RenderError(f"unsupported content_type {content_type!r}")
    deadline_s = float(job.get("deadline_s") or default_deadline_s)
    return task, svg, content_type, deadline_s


def _new_result(
    session: BrowserSession, task: TaskSpec, times: tuple[float, ...], content_type: str, csp: str
) -> dict[str, Any]:
    """The result of a job before anything is rendered: what was asked, nothing captured yet."""
    return {
        "status": "ok",
        "task_ref": task.ref,
        "render_profile_id": task.render.id,
        "browser_version": session.version,
        "timestamps": list(times),
        "content_type": content_type,
        "csp": csp,
        "scripts_enabled": False,
        "frames": [],
        "masks": [],
        "errors": [],
        "animation": {"detected": False, "kinds": []},
    }


def _capture(
    session: BrowserSession,
    page: Page,
    info: dict[str, Any],
    task: TaskSpec,
    times: tuple[float, ...],
    want_masks: bool,
    result: dict[str, Any],
    files: dict[str, bytes],
) -> None:
    """Capture every timestamp of an opened document into ``result`` and ``files``.

    ``info`` is what opening the document reported (its facts, seeked to the first timestamp).
    """
    keys = ("root", "root_ns", "elements", "scripts", "path")
    result["document"] = {k: info[k] for k in keys}
    if info.get("parse_error"):
        result["errors"].append({"kind": "parse_error", "detail": info["parse_error"]})
    kinds: set[str] = set()
    for index, time_s in enumerate(times):
        seek = info if index == 0 else session.evaluate(page, {"op": "seek", "t": time_s})
        kinds.update(seek["kinds"])
        _capture_frame(session, page, task, time_s, want_masks, result, files)
    result["animation"] = {"detected": bool(kinds), "kinds": sorted(kinds)}
    ran = session.script_executed()
    # Chromium's own XML tree viewer (shown for XML outside the SVG/XHTML namespaces)
    # runs built-in script and styles; no page script can run in such a document.
    viewer = bool(info.get("xml_viewer")) and info.get("root_ns") == XHTML_NS
    result["document"]["xml_viewer"] = viewer
    result["script_executed"] = ran and not viewer


def _capture_frame(
    session: BrowserSession,
    page: Page,
    task: TaskSpec,
    time_s: float,
    want_masks: bool,
    result: dict[str, Any],
    files: dict[str, bytes],
) -> None:
    """Screenshot the page (seeked to ``time_s``) and, when wanted, its part masks."""
    png = session.screenshot()
    ms = frame_ms(time_s)
    name = f"frame-{ms}.png"
    files[name] = png
    result["frames"].append({"time_s": time_s, "name": name, "sha256": sha256_hex(png)})
    if want_masks:
        masks = capture_masks(
            task.output.required_ids,
            functools.partial(session.evaluate, page),
            session.screenshot,
            _size(png),
        )
        entries, mask_files = encode_masks(masks, time_s, ms)
        result["masks"].extend(entries)
        files.update(mask_files)


def _record_failure(
    result: dict[str, Any], exc: Exception, timed_out: bool, deadline_s: float
) -> None:
    """Set the status and error of a job that failed: timeout, renderer crash or other error."""
    if timed_out:
        result["status"] = "timeout"
        result["errors"].append(
            {"kind": "render_timeout", "detail": f"render passed its {deadline_s:g} s limit"}
        )
    elif "crashed" in str(exc).lower():
        result["status"] = "crash"  # e.g. the renderer ran out of memory on a bomb
        result["errors"].append({"kind": "renderer_crashed", "detail": public_detail(str(exc))})
    else:
        result["status"] = "error"
        result["errors"].append({"kind": "render_error", "detail": public_detail(str(exc))})
    result.setdefault("script_executed", False)


def _record_requests(result: dict[str, Any], log: RequestLog | None) -> None:
    """Copy the blocked requests, CSP violations and blocked script attempts into ``result``."""
    if log is not None:
        blocked = log.blocked_requests()
        if result.get("document", {}).get("xml_viewer"):  # the viewer's own data: icons
            blocked = [b for b in blocked if not str(b["url"]).startswith("data:")]
        result["blocked_requests"] = blocked
        result["blocked_requests_dropped"] = log.dropped
        result["csp_violations"] = log.csp_violations
        result["script_attempts_blocked"] = log.script_attempts()
    else:
        result["blocked_requests"], result["csp_violations"] = [], []


def render_job(
    session: BrowserSession, job: dict[str, Any], default_deadline_s: float = DEFAULT_DEADLINE_S
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Render one ``{"kind": "render", "svg", "task", "masks"}`` job inside the worker."""
    started = time.monotonic()
    task, svg, content_type, deadline_s = _read_job(job, default_deadline_s)
    want_masks = bool(job.get("masks", True)) and bool(task.output.required_ids)
    csp = build_csp(task.output.allowed)
    times = task.timestamps()
    result = _new_result(session, task, times, content_type, csp)
    files: dict[str, bytes] = {}
    log: RequestLog | None = None
    watchdog = Watchdog(deadline_s)
    try:
        with watchdog:
            page, log, info = session.open_document(
                task.render, svg, content_type, csp, times[0], timeout_s=deadline_s
            )
            _capture(session, page, info, task, times, want_masks, result, files)
    except Exception as exc:
        # the browser dying before the deadline is the machinery's failure; after it, killing
        # the renderers may take the browser down too (the next job relaunches it)
        if not watchdog.fired and (watchdog.browser_died or not session.browser_alive()):
            raise BrowserCrashedError(
                f"Chromium's browser process died during the job ({public_detail(str(exc))})"
            ) from exc
        if not isinstance(exc, PlaywrightError | RenderError):
            raise
        session.reset()  # never reuse a context that failed mid-job
        files = {}
        result["frames"], result["masks"] = [], []
        timed_out = watchdog.fired or isinstance(exc, PlaywrightTimeoutError)
        _record_failure(result, exc, timed_out, deadline_s)
    finally:
        session.finish_job()
    _record_requests(result, log)
    result["elapsed_ms"] = round((time.monotonic() - started) * 1000, 1)
    return result, files
