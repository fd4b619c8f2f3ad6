"""Hostile corpus: nothing leaves the sandbox, no script runs, every attempt is logged.

Every file of ``../shared/corpora/malicious/`` (except its licence texts) is rendered under a task
that allows nothing, through the sandboxed pool. A TCP listener on the host's loopback counts
connections. Each file is rendered as a copy whose absolute http(s) URLs point at that listener
(a stronger test: the URLs are reachable if anything leaks; the payload is otherwise unchanged),
and HTTPLeaks is also served as HTML so that its HTML-context vectors are really attempted. The
same HTTPLeaks copy is then rendered *without* the network namespace (in-process, root, Chromium
``--no-sandbox``) to show that CSP + interception alone still let nothing through.
"""

from __future__ import annotations

import csv
import re
import socket
import threading
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sandbox import WorkerPool
from service.pipeline.render_client import RenderOutput
from tests.conftest import corpus_dir
from tests.helpers.render_pool import CHROMIUM
from tests.render.conftest import render, task

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.corpus]
URL = re.compile(r"(?:https?:)?//(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?::\d+)?", re.IGNORECASE)
VIAS = {"route", "csp", "devtools"}
NOTHING = task(output={"allowed": {}}, render={"viewport_width": 200, "viewport_height": 150})
"""A task that allows nothing, on a small page: what a file attempts does not depend on the page
size (800x600 and 200x150 gave the same outcomes and blocked URLs on every file of the corpus and
every HTTPLeaks page), and the smaller capture costs about a sixth less CPU a file."""
BOMB_CPU_S = 1.0
"""The CPU budget of a known resource bomb: it is stopped by the budget (or crashes) whatever the
budget, so a short one proves the same containment as the task's at a fraction of the CPU. The
same 4 of the 13 bombs are stopped at 1 s as at 2 s (the other 9 render within 1 s), for
about 4 CPU s less per corpus run."""


class Listener:
    """Counts TCP connections on 127.0.0.1:<port> (host side, outside every sandbox)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def rewrite(self, text: str) -> str:
        """Every absolute URL now points at this listener (path kept); namespace names
        (``xmlns="http://www.w3.org/..."``) are identifiers, not requests, and stay."""
        target = f"http://127.0.0.1:{self.port}"

        def swap(match: re.Match[str]) -> str:
            before = text[max(0, match.start() - 40) : match.start()]
            if "w3.org" in match.group(0) or re.search(r"xmlns(:[\w-]+)?\s*=\s*[\"']?$", before):
                return match.group(0)
            return target

        return URL.sub(swap, text)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def corpus_files() -> list[Path]:
    root = corpus_dir("malicious")
    return sorted(p for p in root.rglob("*") if p.is_file() and "LICENSES" not in p.parts)


def bombs() -> set[str]:
    """Files that are resource bombs (may end as a render timeout or a renderer crash)."""
    root = corpus_dir("malicious")
    with (root / "payloads.csv").open(newline="", encoding="utf-8") as fh:
        marked = {row["file"] for row in csv.DictReader(fh) if row["parser_bomb"] == "yes"}
    names = ("useDos", "xlinkLaughs", "xlinkLoop")
    return marked | {str(p.relative_to(root)) for p in corpus_files() if p.name.startswith(names)}


def render_all(
    pool: Any, jobs: list[tuple[str, str, str]], short: AbstractSet[str] = frozenset()
) -> list[tuple[str, RenderOutput]]:
    """Render ``(label, text, content_type)`` jobs on both workers; returns (label, output).
    Labels in ``short`` (known bombs) get a CPU budget of :data:`BOMB_CPU_S`, the rest the
    task's."""

    def one(job: tuple[str, str, str]) -> tuple[str, RenderOutput]:
        label, text, content_type = job
        budget = BOMB_CPU_S if label in short else None
        out = render(
            pool, text, NOTHING, masks=False, content_type=content_type, cpu_budget_s=budget
        )
        return label, out

    with ThreadPoolExecutor(max_workers=2) as executor:
        return list(executor.map(one, jobs))


def check_outputs(
    results: list[tuple[str, RenderOutput]], may_fail: AbstractSet[str] = frozenset()
) -> dict[str, int]:
    """Shared assertions; returns counters for the report."""
    counts = {"ok": 0, "incomplete": 0, "over_budget": 0}
    counts.update(with_blocked_requests=0, blocked_requests=0)
    for label, out in results:
        counts[out.status] += 1
        if out.status != "ok":
            assert label in may_fail, (label, out.cause, out.detail)
            assert out.cause in {"cpu_budget", "render_crash", "oom"}, (label, out.cause)
            continue
        log = out.log
        assert log.script_executed is False, label
        assert log.sandbox["uid"] == 65534 and log.sandbox["network"] == "loopback-only"
        blocked = [b.model_dump() for b in log.blocked_requests]
        assert all(b["via"] in VIAS and b["url"] for b in blocked), label
        counts["with_blocked_requests"] += bool(blocked)
        counts["blocked_requests"] += len(blocked)
    return counts


@pytest.mark.xdist_group("malicious-corpus")  # the whole corpus: its own work unit
def test_every_malicious_file_renders_contained(
    render_pool: WorkerPool, listener: Listener
) -> None:
    files = corpus_files()
    assert len(files) > 450
    root = corpus_dir("malicious")
    jobs = [
        (
            str(p.relative_to(root)),
            listener.rewrite(p.read_text("utf-8", "replace")),
            "image/svg+xml",
        )
        for p in files
    ]
    known_bombs = bombs()
    results = render_all(render_pool, jobs, known_bombs)
    counts = check_outputs(results, known_bombs)
    assert listener.connections == 0
    assert counts["with_blocked_requests"] >= 35, counts
    by_label = dict(results)
    ssrf = "payloadsallthethings/files/Server Side Request Forgery/Files/"
    for name, path in [
        ("SSRF_url.svg", "/"),
        ("ssrf_svg_image.svg", "/image.jpg"),
        ("ssrf_svg_use.svg", "/file2.svg"),
        ("ssrf_svg_css_import.svg", "/style.css"),
        ("ssrf_svg_css_link.svg", "/style.css"),
        ("ssrf_svg_css_xmlstylesheet.svg", "/style.css"),
    ]:
        urls = {b.url for b in by_label[ssrf + name].log.blocked_requests}
        assert f"http://127.0.0.1:{listener.port}{path}" in urls, (name, urls)
    print(f"\nmalicious corpus: {len(files)} files (URLs rewritten to the listener): {counts}")


def _leak_ids() -> set[str]:
    path = corpus_dir("malicious") / "httpleaks" / "leak_ids.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        return {row["leak_id"] for row in csv.DictReader(fh)}


def _attempted(urls: list[str], port: int, ids: set[str]) -> set[str]:
    found = set()
    for url in urls:
        match = re.search(rf"127\.0\.0\.1:{port}/([^/?#\s\"']+)", url)
        if match and match.group(1) in ids:
            found.add(match.group(1))
    return found


def blocked_urls(out: RenderOutput) -> list[str]:
    return [b.url for b in out.log.blocked_requests]


def test_httpleaks_as_html_every_attempt_logged(
    render_pool: WorkerPool, listener: Listener
) -> None:
    root = corpus_dir("malicious") / "httpleaks"
    ids = _leak_ids()
    leak = listener.rewrite((root / "leak.html").read_text("utf-8", "replace"))
    snippets = sorted((root / "snippets").iterdir())
    jobs = [("leak.html", leak, "text/html")]
    jobs += [
        (p.name, listener.rewrite(p.read_text("utf-8", "replace")), "text/html") for p in snippets
    ]
    results = render_all(render_pool, jobs)
    counts = check_outputs(results)
    assert counts["ok"] == len(jobs), counts
    assert listener.connections == 0
    attempted = set()
    for _, out in results:
        attempted |= _attempted(blocked_urls(out), listener.port, ids)
    whole = _attempted(blocked_urls(results[0][1]), listener.port, ids)
    print(
        f"\nHTTPLeaks as HTML: {len(attempted)}/{len(ids)} leak ids attempted and logged "
        f"({len(whole)} from leak.html alone), 0 connections"
    )
    assert len(attempted) >= 60, sorted(ids - attempted)  # 72 with Chromium 156


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed")
def test_httpleaks_blocked_by_browser_layer_alone(listener: Listener) -> None:
    """No network namespace here: CSP + request interception are the only guard."""
    import os

    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    root = corpus_dir("malicious") / "httpleaks"
    leak = listener.rewrite((root / "leak.html").read_text("utf-8", "replace"))
    before = listener.connections
    outcome: dict[str, Any] = {}

    def render_in_own_thread() -> None:
        # Playwright's sync API refuses a thread whose event loop another test's browser holds.
        handler = create_handler({"chromium_no_sandbox": True, "self_test": False})
        try:
            outcome["result"], _ = handler.handle(
                {
                    "kind": "render",
                    "svg": leak,
                    "task": NOTHING.to_wire(),
                    "masks": False,
                    "content_type": "text/html",
                }
            )
        finally:
            handler.close()

    thread = threading.Thread(target=render_in_own_thread)
    thread.start()
    thread.join(timeout=300)
    assert "result" in outcome, "the in-process render did not finish"
    result = outcome["result"]
    assert result["status"] == "ok"
    assert result["script_executed"] is False
    urls = [entry["url"] for entry in result["blocked_requests"]]
    assert len(_attempted(urls, listener.port, _leak_ids())) >= 60
    assert listener.connections == before == 0
