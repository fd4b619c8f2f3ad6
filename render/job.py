"""One render job: load the artifact, seek every timestamp, capture frames and masks, log requests.

Result format: ``docs/contracts.md`` (section *render*). Beyond the contract's keys the result
carries ``status`` (``ok`` | ``cpu_budget`` | ``timeout`` | ``crash`` | ``error``), ``task_ref``,
``timestamps``, ``csp``, ``csp_violations``, ``script_attempts_blocked``, ``navigations`` (the
navigations the policy refused), ``document`` (root element, element count, script elements, XML
viewer), ``content_type`` and the job's cost: ``cpu_ms`` (CPU time of the whole sandbox during the
job), ``wall_ms`` and ``stopped_by`` (``cpu``: the budget; ``wall``: the safety stop; or null).

The budget is the job's ``cpu_budget_s`` (the task's ``output.max_render_cpu_s``), in CPU time, so
the same drawing costs the same on a quiet and on a loaded machine; ``deadline_s`` is only the
wall-clock safety stop (several times the budget, set by the host).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from regua.errors import RenderError
from render.browser import BrowserSession
from render.failures import BrowserCrashedError, public_detail
from render.frames import FrameLoop, frame_ms
from render.netlog import RequestLog, build_csp, swappable
from render.watchdog import JobWatch
from tasks import TaskSpec

__all__ = ["DEFAULT_DEADLINE_S", "frame_ms", "render_job"]

CONTENT_TYPES = ("image/svg+xml", "text/html")
"""The content types a job may declare; the service always sends SVG.

``text/html`` exists only so that hardening tests can feed HTML-context payloads (HTTPLeaks)
through the very same policy, interception and logging.
"""

DEFAULT_DEADLINE_S = 20.0
XHTML_NS = "http://www.w3.org/1999/xhtml"


@dataclass(frozen=True)
class JobSpec:
    """A render job, checked: what to render, how, and within which budget."""

    task: TaskSpec
    svg: str
    content_type: str
    cpu_budget_s: float
    deadline_s: float
    masks: bool
    reference: bool


def read_job(job: dict[str, Any], default_deadline_s: float) -> JobSpec:
    """The task, SVG text, content type, budget and safety stop of a job, checked."""
    task = TaskSpec.model_validate(job["task"])
    svg = job.get("svg")
    if not isinstance(svg, str):
        raise RenderError("job['svg'] must be a string")
    content_type = str(job.get("content_type") or "image/svg+xml")
    if content_type not in CONTENT_TYPES:
        raise RenderError(f"unsupported content_type {content_type!r}")
    deadline_s = float(job.get("deadline_s") or default_deadline_s)
    budget = float(job.get("cpu_budget_s") or task.output.max_render_cpu_s)
    masks = bool(job.get("masks", True)) and bool(task.output.required_ids)
    reference = job.get("mask_path") == "reference"
    return JobSpec(task, svg, content_type, budget, deadline_s, masks, reference)


def _new_result(session: BrowserSession, spec: JobSpec, csp: str) -> dict[str, Any]:
    """The result of a job before anything is rendered: what was asked, nothing captured yet."""
    task = spec.task
    return {
        "status": "ok",
        "task_ref": task.ref,
        "render_profile_id": task.render.id,
        "browser_version": session.version,
        "timestamps": list(task.timestamps()),
        "content_type": spec.content_type,
        "csp": csp,
        "scripts_enabled": False,
        "cpu_budget_s": spec.cpu_budget_s,
        "frames": [],
        "masks": [],
        "errors": [],
        "navigations": [],
        "animation": {"detected": False, "kinds": []},
    }


def _capture(
    session: BrowserSession,
    spec: JobSpec,
    result: dict[str, Any],
    files: dict[str, bytes],
) -> RequestLog:
    """Open the document and capture every timestamp into ``result`` and ``files``."""
    task, times = spec.task, spec.task.timestamps()
    page, log, info = session.open_document(
        task.render, spec.svg, spec.content_type, result["csp"], times[0], spec.deadline_s
    )
    keys = ("root", "root_ns", "elements", "scripts", "path")
    result["document"] = {k: info[k] for k in keys}
    if info.get("parse_error"):
        result["errors"].append({"kind": "parse_error", "detail": info["parse_error"]})
    for content in info.get("refresh") or ():
        log.refused_refresh(str(content))
    loop = FrameLoop(session, page, task, spec.masks, reference=spec.reference)
    kinds = loop.run(info, times, result, files)
    result["frame_reuse"] = dict(loop.stats)
    result["animation"] = {"detected": bool(kinds), "kinds": sorted(kinds)}
    # A text with no script vector at all needs no DevTools metrics round trip to prove that no
    # script ran; any other text is checked (ScriptDuration growing).
    ran = False if swappable(spec.svg) and not spec.reference else session.script_executed()
    # Chromium's own XML tree viewer (shown for XML outside the SVG/XHTML namespaces)
    # runs built-in script and styles; no page script can run in such a document.
    viewer = bool(info.get("xml_viewer")) and info.get("root_ns") == XHTML_NS
    result["document"]["xml_viewer"] = viewer
    result["script_executed"] = ran and not viewer
    return log


def _record_failure(result: dict[str, Any], exc: Exception, watch: JobWatch) -> None:
    """Set the status and error of a job that failed: budget, safety stop, crash or error."""
    if watch.stopped_by == "cpu":
        result["status"] = "cpu_budget"
        result["errors"].append(
            {
                "kind": "render_cpu_budget",
                "detail": f"the render used its CPU budget of {watch.cpu_budget_s:g} s",
            }
        )
    elif watch.stopped_by == "wall" or isinstance(exc, PlaywrightTimeoutError):
        result["status"] = "timeout"
        result["errors"].append(
            {
                "kind": "render_timeout",
                "detail": f"the render passed its wall-clock stop of {watch.wall_stop_s:g} s",
            }
        )
    elif "crashed" in str(exc).lower():
        result["status"] = "crash"  # e.g. the renderer ran out of memory on a bomb
        result["errors"].append({"kind": "renderer_crashed", "detail": public_detail(str(exc))})
    else:
        result["status"] = "error"
        result["errors"].append({"kind": "render_error", "detail": public_detail(str(exc))})
    result.setdefault("script_executed", False)


def _record_requests(result: dict[str, Any], log: RequestLog | None) -> None:
    """Copy the blocked requests, refused navigations, CSP violations and script attempts."""
    if log is not None:
        blocked = log.blocked_requests()
        if result.get("document", {}).get("xml_viewer"):  # the viewer's own data: icons
            blocked = [b for b in blocked if not str(b["url"]).startswith("data:")]
        result["blocked_requests"] = blocked
        result["blocked_requests_dropped"] = log.dropped
        result["csp_violations"] = log.csp_violations
        result["script_attempts_blocked"] = log.script_attempts()
        result["navigations"] = log.refused_navigations()
    else:
        result["blocked_requests"], result["csp_violations"] = [], []


def _record_cost(result: dict[str, Any], watch: JobWatch) -> None:
    """The job's CPU and wall time; a job that finished past its budget is over it all the same."""
    result["cpu_ms"] = round(watch.cpu_s * 1000, 1)
    result["wall_ms"] = round(watch.wall_s * 1000, 1)
    result["elapsed_ms"] = result["wall_ms"]
    if result["status"] == "ok" and watch.cpu_s >= watch.cpu_budget_s:
        watch.stopped_by = "cpu"  # between two samples of the watchdog: the same rule
        result["frames"], result["masks"] = [], []
        _record_failure(result, RenderError("over the CPU budget"), watch)
    result["stopped_by"] = watch.stopped_by


def render_job(
    session: BrowserSession, job: dict[str, Any], default_deadline_s: float = DEFAULT_DEADLINE_S
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Render one ``{"kind": "render", "svg", "task", "masks"}`` job inside the worker."""
    spec = read_job(job, default_deadline_s)
    result = _new_result(session, spec, build_csp(spec.task.output.allowed))
    files: dict[str, bytes] = {}
    log: RequestLog | None = None
    budget, stop = spec.cpu_budget_s, spec.deadline_s
    try:
        session.prepare(spec.task.render, spec.svg, spec.content_type, result["csp"])
    except PlaywrightError:
        session.reset()  # the job itself retries and reports whatever is wrong
    with session.watchdog.watch(budget, stop, session.browser_pids()) as watch:
        try:
            log = _capture(session, spec, result, files)
        except Exception as exc:
            log = session.current_log()
            _handle_failure(session, exc, watch)
            files = {}
            result["frames"], result["masks"] = [], []
            _record_failure(result, exc, watch)
        finally:
            session.finish_job()
    if watch.fired:
        # the watchdog killed the renderers, maybe after the capture had returned (no exception
        # dropped the context then): the next job must never open its drawing in a dead page
        session.reset()
    _record_requests(result, log)
    _record_cost(result, watch)
    if watch.driver_killed:
        result["retire_worker"] = True  # Playwright's driver is gone: this worker is done
    if not result["frames"]:
        files = {}
    return result, files


def _handle_failure(session: BrowserSession, exc: Exception, watch: JobWatch) -> None:
    """Re-raise what is the machinery's failure; otherwise drop the context that failed."""
    # the browser dying before a stop is the machinery's failure; after it, killing the
    # renderers may take the browser down too (the next job relaunches it)
    if not watch.fired and (watch.browser_died or not session.browser_alive()):
        raise BrowserCrashedError(
            f"Chromium's browser process died during the job ({public_detail(str(exc))})"
        ) from exc
    if not isinstance(exc, PlaywrightError | RenderError):
        raise exc
    session.reset()  # never reuse a context that failed mid-job
