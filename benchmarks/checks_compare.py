"""Full static-check reports of two code revisions, compared on every corpus file.

Usage: ``.venv/bin/python benchmarks/checks_compare.py [--rev REV] [--corpora DIR ...]``

A performance change to ``checks/`` must not change one verdict, message, line, path or snippet.
This runs every file under the corpora (default: ``../shared/corpora``: real model outputs,
hostile payloads, conformance suites; plus the project's ``samples/`` and ``tests/fixtures/``)
through ``check_reply`` under every bundled task and through
``run_checks`` on the raw bytes under the static task, once with this worktree's code and once
with ``checks/``, ``tasks/`` and ``regua/`` of ``REV`` (default: the merge base with ``main``,
i.e. the code before this branch's changes), each in its own process. Each report is reduced to
the sha256 of its canonical JSON; the digests must be equal for every (file, task, mode). The
first differences are printed in full. Exit status 1 when any report differs.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = [
    REPO.parent / "shared" / "corpora",
    REPO / "samples",
    REPO / "tests" / "fixtures",
]
MAX_BYTES = 4_000_000
STATIC_TASK = "pelican-bicycle-static@1"


def corpus_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` up to :data:`MAX_BYTES`, sorted (text or not)."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.stat().st_size <= MAX_BYTES)


def _reports(roots: list[Path], only: set[str] | None) -> Iterator[tuple[str, dict[str, object]]]:
    """(key, report dict) for every file, task and mode, computed by the importable ``checks``."""
    import checks
    from checks import check_reply, run_checks
    from tasks import bundled_registry

    print(f"  checks from {Path(checks.__file__).parent}", flush=True)

    registry = bundled_registry()
    tasks = [registry.get(ref) for ref in sorted(registry.refs())]
    static = registry.get(STATIC_TASK)
    paths = [(root, path) for root in roots for path in corpus_files(root)]
    for root, path in paths:
        rel = f"{root.name}/{path.relative_to(root).as_posix()}"
        data = path.read_bytes()
        for task in tasks:
            key = f"{rel} | check_reply | {task.ref}"
            if only is None or key in only:
                yield key, check_reply(data, task).to_dict()
        key = f"{rel} | run_checks | {static.ref}"
        if only is None or key in only:
            yield key, run_checks(data, static).to_dict()


def _canonical(report: dict[str, object]) -> str:
    return json.dumps(report, sort_keys=True, ensure_ascii=False, indent=1)


def dump(roots: list[Path], out: Path, full_keys: set[str] | None) -> None:
    """Write {key: digest} (or {key: full report} for ``full_keys``) as JSON to ``out``."""
    result: dict[str, object] = {}
    for key, report in _reports(roots, full_keys):
        text = _canonical(report)
        result[key] = report if full_keys is not None else hashlib.sha256(text.encode()).hexdigest()
    out.write_text(json.dumps(result), encoding="utf-8")


def _export(rev: str, into: Path) -> None:
    """The packages the checks import, as they are at ``rev`` (``git archive``, no worktree)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "checks", "tasks", "regua"],
        check=True,
        capture_output=True,
    ).stdout
    tar_path = into / "code.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")


def _run_side(code: Path, roots: list[Path], out: Path, keys: set[str] | None) -> float:
    """Run :func:`dump` in a fresh interpreter importing the packages under ``code``."""
    cmd = [sys.executable, __file__, "--_dump", str(out), "--corpora", *map(str, roots)]
    if keys is not None:
        keys_file = out.with_suffix(".keys")
        keys_file.write_text(json.dumps(sorted(keys)), encoding="utf-8")
        cmd += ["--_keys", str(keys_file)]
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
    start = time.monotonic()
    subprocess.run(cmd, check=True, env=env, cwd=code)
    return time.monotonic() - start


def _merge_base() -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", "main"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def compare(rev: str, roots: list[Path], show: int) -> int:
    """Compare every report of this worktree's code with ``rev``'s; print a summary."""
    with tempfile.TemporaryDirectory(prefix="regua-checks-compare-") as tmp:
        work = Path(tmp)
        before_code = work / "before"
        before_code.mkdir()
        _export(rev, before_code)
        before_s = _run_side(before_code, roots, work / "before.json", None)
        after_s = _run_side(REPO, roots, work / "after.json", None)
        before = json.loads((work / "before.json").read_text(encoding="utf-8"))
        after = json.loads((work / "after.json").read_text(encoding="utf-8"))
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        files = len({k.split(" | ")[0] for k in before})
        print(
            f"corpora {', '.join(map(str, roots))}: {files} files, {len(before)} reports before "
            f"({rev[:12]}, "
            f"{before_s:.0f} s wall), {len(after)} after (this worktree, {after_s:.0f} s wall)"
        )
        same = len(before) - len(differ)
        print(f"identical reports: {same} of {len(before)}; differ: {len(differ)}")
        if differ and show:
            shown = set(differ[:show])
            _run_side(before_code, roots, work / "before_full.json", shown)
            _run_side(REPO, roots, work / "after_full.json", shown)
            full_b = json.loads((work / "before_full.json").read_text(encoding="utf-8"))
            full_a = json.loads((work / "after_full.json").read_text(encoding="utf-8"))
            for key in sorted(shown):
                lines = difflib.unified_diff(
                    _canonical(full_b.get(key, {})).splitlines(),
                    _canonical(full_a.get(key, {})).splitlines(),
                    "before",
                    "after",
                    lineterm="",
                    n=2,
                )
                print(f"--- {key}")
                print("\n".join(lines))
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    """Compare (default) or, internally, dump one side's digests."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rev", default=None, help="the code to compare with (default: merge base)")
    ap.add_argument("--corpora", type=Path, nargs="+", default=DEFAULT_CORPORA)
    ap.add_argument("--show", type=int, default=5, help="differences printed in full")
    ap.add_argument("--_dump", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_keys", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._dump is not None:
        # this folder holds benchmarks/checks.py: it must not shadow the checks package
        here = Path(__file__).resolve().parent
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
        keys = None
        if args._keys is not None:
            keys = set(json.loads(args._keys.read_text(encoding="utf-8")))
        dump(args.corpora, args._dump, keys)
        return 0
    roots = [root for root in args.corpora if root.is_dir()]
    if not roots:
        print(f"no corpora at {args.corpora} (../shared/corpora absent?); nothing compared")
        return 0
    return compare(args.rev or _merge_base(), roots, args.show)


if __name__ == "__main__":
    raise SystemExit(main())
