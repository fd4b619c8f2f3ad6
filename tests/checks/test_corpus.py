"""External corpora: every hostile payload labelled dangerous fails, real model outputs never crash.

Both tests print their counts (run with ``-s`` to see them). They skip cleanly when
``../shared/corpora`` is absent.
"""

from __future__ import annotations

import csv
import gc
import time
from collections import Counter, defaultdict

import pytest

from checks import CHECK_STATUSES, check_reply
from tests.checks.conftest import task
from tests.conftest import corpus_dir

# Checks that name a vector (as opposed to parse / root / viewbox / required-ids).
VECTOR_CHECKS = frozenset(
    [
        "script",
        "event-handler",
        "javascript-url",
        "external-ref",
        "foreign-object",
        "raster-image",
        "doctype",
        "size",
    ]
)
LABELS = ("exec_script", "external_request", "parser_bomb")


def dangerous(row: dict[str, str]) -> bool:
    """Marked ``yes`` for script execution, a request or a parser bomb. The qualified labels
    ``yes(local file)`` and ``yes(xslt ext)`` are held to the same bar (stricter than the issue);
    ``no(xml)/yes(html)`` rows (HTML-parser-only tricks) are counted but may pass."""
    return any(row[k] == "yes" or row[k].startswith("yes(") for k in LABELS)


@pytest.mark.corpus
def test_malicious_corpus_fails_by_a_named_vector() -> None:
    base = corpus_dir("malicious")
    with (base / "payloads.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    static = task("pelican-bicycle-static@1")
    per_source: dict[str, Counter[str]] = defaultdict(Counter)
    per_check: Counter[str] = Counter()
    problems: list[str] = []
    slowest = (0.0, "")
    # a full collection walks every object this worker process still holds from earlier tests
    # and would charge their number to a check's CPU time: those objects are frozen out of it
    gc.freeze()
    try:
        for row in rows:
            data = (base / row["file"]).read_bytes()
            start, cpu_start = time.perf_counter(), time.thread_time()
            report = check_reply(data, static)
            elapsed = time.thread_time() - cpu_start  # CPU time: immune to other load on the box
            wall = time.perf_counter() - start
            slowest = max(slowest, (elapsed, f"{row['file']}, wall {wall:.2f}s"))
            assert all(r.status in CHECK_STATUSES for r in report.results)
            source = row["file"].split("/")[0]
            if elapsed > 1.0:
                problems.append(f"{row['file']}: {elapsed:.2f}s")
            if not dangerous(row):
                per_source[source]["inert " + report.status] += 1
                continue
            failed = set(report.failed)
            per_source[source]["dangerous " + report.status] += 1
            per_check.update(failed)
            if row["xml_well_formed"] == "yes":
                ok = bool(failed & VECTOR_CHECKS)
            else:  # malformed: parse, unless extraction cut away the prose that made it malformed
                ok = "parse" in failed or bool(failed & VECTOR_CHECKS)
            if report.status != "fail" or not ok:
                problems.append(
                    f"{row['file']}: failed={sorted(failed)} labels={[row[k] for k in LABELS]}"
                )
    finally:
        gc.unfreeze()
    print("\nmalicious corpus under pelican-bicycle-static@1")
    for source, counts in sorted(per_source.items()):
        print(f"  {source:24s} {dict(sorted(counts.items()))}")
    print("  dangerous payloads failing each check:", dict(per_check.most_common()))
    print(f"  slowest: {slowest[0] * 1000:.0f} ms CPU ({slowest[1]})")
    assert sum(c["dangerous fail"] for c in per_source.values()) >= 400
    assert not problems, "\n".join(problems)


@pytest.mark.corpus
def test_llm_outputs_all_get_a_result() -> None:
    base = corpus_dir("llm_svgs")
    files = sorted(base.rglob("*.svg"))
    assert len(files) >= 70
    static = task("pelican-bicycle-static@1")
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    overall: Counter[str] = Counter()
    for path in files:
        report = check_reply(path.read_bytes(), static)
        assert report.extraction is not None and report.extraction.status == "found"
        overall[report.status] += 1
        for r in report.results:
            assert r.status in CHECK_STATUSES
            counts[r.id][r.status] += 1
    print(f"\nllm_svgs ({len(files)} files) under pelican-bicycle-static@1: {dict(overall)}")
    for cid, c in counts.items():
        print(f"  {cid:15s} {dict(sorted(c.items()))}")
    # Real model outputs carry none of the dangerous features.
    for cid in (
        "script",
        "event-handler",
        "javascript-url",
        "external-ref",
        "foreign-object",
        "raster-image",
        "doctype",
    ):
        assert counts[cid]["fail"] == 0, cid
    assert counts["parse"]["pass"] >= 70
