"""Static-check throughput on real model outputs, beside a bare lxml parse of the same files.

Usage: ``.venv/bin/python benchmarks/checks.py [--corpus DIR] [--rounds N] [--task REF] [--phases]``

Runs in one process on one core (no threads), in this order for each round: bare parse of every
file, then ``run_checks`` on every file, then ``check_reply`` (extraction + checks). Time is the
CPU time of the working thread; the best round of each is reported, with files per second and
the ratio checks / bare parse. Target from issue 28 point 5: the whole check suite costs at most
3x a bare parse (issue 2 asked for 5x). ``benchmarks/checks_compare.py`` proves a speed-up kept
every report identical on every corpus file. ``--phases`` also prints where the suite's time goes
(the document, the lxml reads the walk cannot do without, the shared walk with the size check,
the other checks, render-cost), cumulatively. The first line says whether the shared walk ran
compiled (``checks._walkc``, built by ``scripts/setup.sh``) or in Python.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import operator
import os
import sys
import time
from collections.abc import Callable
from itertools import chain
from operator import attrgetter, methodcaller
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from checks import check_reply, run_checks  # noqa: E402
from checks.parse import parse_document  # noqa: E402
from checks.scan import _COMPILED  # noqa: E402
from checks.suite import registered_checks  # noqa: E402
from checks.vocab import PLAIN_ATTRS  # noqa: E402
from tasks import TaskSpec, bundled_registry  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "llm_svgs"
TARGET_RATIO = 3.0


_BARE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def bare_parse(data: bytes) -> None:
    """What lxml alone costs: one reused parser with the same safety flags, no checks."""
    with contextlib.suppress(etree.XMLSyntaxError):
        etree.fromstring(data, _BARE)


_TAG = attrgetter("tag")
_KEYS = methodcaller("keys")
_VALUES = methodcaller("values")


def lxml_reads(data: bytes) -> None:
    """The document, then what lxml alone costs the shared walk: no logic, no check.

    Every element of the tree, its tag, its attribute names (tested against the plain names) and
    its attribute values (joined): lxml makes a new ``str`` of each. What the suite costs beyond
    this line is Python deciding things, not lxml handing them over.
    """
    root = parse_document(data).root
    if root is not None:
        els = list(root.iter(etree.Element))
        set(map(_TAG, els))
        PLAIN_ATTRS.issuperset(chain.from_iterable(map(_KEYS, els)))
        '"'.join(chain.from_iterable(map(_VALUES, els)))


def best_of(rounds: int, files: list[bytes], fns: list[Callable[[bytes], object]]) -> list[float]:
    """Best CPU time (seconds, this thread) of ``rounds`` passes of each ``fn`` over every file.

    CPU time of the one thread doing the work is what "files per second on one core" means, and
    unlike wall time it is not inflated when other processes share the machine. The functions
    take turns inside each round, so cache and frequency effects hit them alike.
    """
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.thread_time()
            for data in files:
                fn(data)
            best[i] = min(best[i], time.thread_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per measurement plus the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--task", default="pelican-bicycle-static@1")
    ap.add_argument(
        "--phases",
        action="store_true",
        help="also time the suite in cumulative phases (parse_document; with the shared walk and "
        "the size check; all checks but render-cost) beside the same bare parse",
    )
    ap.add_argument(
        "--count",
        choices=("parse", "checks", "reply"),
        help="only run this step --rounds times inside operator.call, for an instruction count: "
        "valgrind --tool=callgrind --toggle-collect='_operator_call*' (docs/sandbox.md)",
    )
    args = ap.parse_args(argv)
    paths = sorted(args.corpus.rglob("*.svg"))
    if not paths:
        print(f"no SVG files under {args.corpus} (../shared/corpora absent?); nothing measured")
        return 0
    files = [p.read_bytes() for p in paths]
    task = bundled_registry().get(args.task)
    n = len(files)
    size = sum(map(len, files))
    for data in files:  # warm up (imports, regex compilation, parser creation)
        bare_parse(data)
        check_reply(data, task)
    if args.count is not None:
        step = {"parse": bare_parse, "checks": lambda d: run_checks(d, task)}.get(
            args.count, lambda d: check_reply(d, task)
        )
        gc.collect()
        operator.call(best_of, args.rounds, files, [step])  # callgrind counts inside this call
        return 0
    parse_s, checks_s, reply_s = best_of(
        args.rounds,
        files,
        [bare_parse, lambda d: run_checks(d, task), lambda d: check_reply(d, task)],
    )
    print(
        f"corpus: {args.corpus} ({n} files, {size} bytes), task {task.ref}, "
        f"best of {args.rounds} rounds, CPU time of one thread, "
        f"load average {os.getloadavg()[0]:.1f}, "
        f"shared walk {'compiled (checks._walkc)' if _COMPILED else 'in Python (not built)'}"
    )
    print(f"bare lxml parse     : {n / parse_s:9.0f} files/s  ({parse_s / n * 1e6:7.1f} us/file)")
    print(f"run_checks (suite)  : {n / checks_s:9.0f} files/s  ({checks_s / n * 1e6:7.1f} us/file)")
    print(f"check_reply (+extr.): {n / reply_s:9.0f} files/s  ({reply_s / n * 1e6:7.1f} us/file)")
    ratio = checks_s / parse_s
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(
        f"ratio checks/parse  : {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target); "
        f"with extraction {reply_s / parse_s:.2f}x"
    )
    if args.phases:
        print_phases(args.rounds, files, task)
    return 0


def print_phases(rounds: int, files: list[bytes], task: TaskSpec) -> None:
    """Time the suite in cumulative phases beside a bare parse (all in one interleaved run).

    Each phase runs ``run_checks`` with a prefix of the work: the document alone (no check), the
    shared walk with the ``size`` check (the walk's first user), every check but ``render-cost``,
    then every check. The difference between two phases is what the added work costs in place.
    Beside them, :func:`lxml_reads`: the document plus the lxml reads of the walk, no logic.
    """
    suite = registered_checks()
    size = tuple(c for c in suite if c.id == "size")
    no_render = tuple(c for c in suite if c.id != "render-cost")
    phases: list[tuple[str, Callable[[bytes], object]]] = [
        ("bare lxml parse", bare_parse),
        ("parse_document", parse_document),
        ("+ lxml reads only", lxml_reads),
        ("+ walk, size check", lambda d: run_checks(d, task, checks=size)),
        ("+ 13 other checks", lambda d: run_checks(d, task, checks=no_render)),
        ("+ render-cost (all)", lambda d: run_checks(d, task, checks=suite)),
    ]
    times = best_of(rounds, files, [fn for _, fn in phases])
    n = len(files)
    for (name, _), spent in zip(phases, times, strict=True):
        print(f"phase {name:20s}: {spent / n * 1e6:7.1f} us/file  {spent / times[0]:5.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
