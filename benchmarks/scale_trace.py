"""``benchmarks/scale.py --trace``: where a queued run's time and round trips go.

Every fleet process imports ``benchmarks/scale_probe/sitecustomize.py`` (``REGUA_PROBE_DIR``),
which counts its SQL statements, commits and S3 calls. A :class:`Probe` snapshots those counts,
the CPU time of every process (each fleet process with its descendants, the sandboxed render
workers included; the PostgreSQL backends of the fleet's database; this process, which hosts
moto and the client) and the database's committed transactions, so a phase's difference divided
by its runs gives the round trips and CPU per run. :func:`timeline` reads each stage job's
deferred / started / finished times and worker from procrastinate's own tables.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * TICK_S


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            tree[int(stat[1])].append(int(entry))
    return tree


def _tree_cpu_s(pid: int, tree: dict[int, list[int]]) -> float:
    """CPU of a process and its live descendants (finished children are in cutime: added)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += _cpu_s(p)
        todo.extend(tree.get(p, []))
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[13]) + int(fields[14])) * TICK_S  # reaped children
    except OSError:
        pass
    return total


def own_cpu_s() -> float:
    """CPU seconds of this process and its descendants (the bare context's render pool)."""
    return _tree_cpu_s(os.getpid(), _children())


def cpu_total_s(diff: dict[str, Counter[str]]) -> float:
    """CPU seconds of every role of a snapshot difference."""
    return sum(c["cpu_ms"] for c in diff.values()) / 1000


@dataclass
class Snapshot:
    """Counters at one moment: per role (api, worker-N, postgres, bench+moto, db)."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def minus(self, before: Snapshot) -> dict[str, Counter[str]]:
        """The difference per role (roles absent before count from zero)."""
        out: dict[str, Counter[str]] = {}
        for role, now in self.counts.items():
            diff = Counter(now)
            diff.subtract(before.counts.get(role, Counter()))
            out[role] = diff
        return out


class Probe:
    """Snapshots of a fleet's round-trip counters and CPU times."""

    def __init__(self, probe_dir: Path, pg_admin: str, db_name: str) -> None:
        """Read counters from ``probe_dir``; PostgreSQL figures of ``db_name``."""
        self.dir, self.pg_admin, self.db_name = probe_dir, pg_admin, db_name
        self.roles: dict[int, str] = {}

    def name(self, pid: int, role: str) -> None:
        """Name a fleet process (its probe file and CPU are reported under ``role``)."""
        self.roles[pid] = role

    def snapshot(self) -> Snapshot:
        """Every counter now."""
        snap = Snapshot()
        tree = _children()
        for pid, role in self.roles.items():
            counts: Counter[str] = Counter()
            path = self.dir / f"{pid}.json"
            if path.exists():
                doc = json.loads(path.read_text())
                counts.update({k: v for k, v in doc.items() if isinstance(v, int)})
            counts["cpu_ms"] = round(1000 * _tree_cpu_s(pid, tree))
            snap.counts[role] = counts
        snap.counts["bench+moto"] = Counter(cpu_ms=round(1000 * _cpu_s(os.getpid())))
        with psycopg.connect(self.pg_admin, autocommit=True) as conn:
            pids = [
                r[0]
                for r in conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.db_name,)
                )
            ]
            row = conn.execute(
                "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = %s",
                (self.db_name,),
            ).fetchone()
        snap.counts["postgres"] = Counter(
            cpu_ms=round(1000 * sum(_cpu_s(p) for p in pids)),
            commits=int(row[0]) if row else 0,
            rollbacks=int(row[1]) if row else 0,
        )
        return snap


KEYS = ("cpu_ms", "sql", "sql_async", "commit", "s3.HeadObject", "s3.PutObject", "s3.GetObject")


def per_run(diff: dict[str, Counter[str]], runs: int, texts: int = 0) -> list[str]:
    """Lines of the per-run figures of a phase, one per role (and its ``texts`` top queries)."""
    lines = []
    for role in sorted(diff):
        counts = diff[role]
        shown = [f"{k}={counts[k] / runs:.1f}" for k in (*KEYS, "commits") if counts.get(k)]
        lines.append(f"    {role:<11} " + " ".join(shown))
        queries = [(k, v) for k, v in counts.items() if k.startswith(("q:", "aq:")) and v > 0]
        for key, value in sorted(queries, key=lambda kv: -kv[1])[:texts]:
            lines.append(f"        {value / runs:6.1f} {key}")
    return lines


_TIMELINE = """
SELECT j.args->>'run_id', j.args->>'stage', j.worker_id,
  min(e.at) FILTER (WHERE e.type = 'deferred'),
  min(e.at) FILTER (WHERE e.type = 'started'),
  max(e.at) FILTER (WHERE e.type IN ('succeeded', 'failed'))
FROM procrastinate_jobs j JOIN procrastinate_events e ON e.job_id = j.id
WHERE j.task_name = 'regua.stage' AND j.args->>'run_id' = ANY(%s)
GROUP BY j.id ORDER BY j.id
"""


def timeline(url: str, run_ids: list[str], workers: dict[int, str]) -> list[str]:
    """Per run: submitted, then each stage's queue wait / run time (ms) and its process."""
    with psycopg.connect(url, autocommit=True) as conn:
        submitted = dict(
            conn.execute(
                "SELECT id, submitted_at FROM runs WHERE id = ANY(%s)", (run_ids,)
            ).fetchall()
        )
        finished = dict(
            conn.execute(
                "SELECT id, finished_at FROM runs WHERE id = ANY(%s)", (run_ids,)
            ).fetchall()
        )
        rows = conn.execute(_TIMELINE, (run_ids,)).fetchall()
    by_run: dict[str, list[str]] = defaultdict(list)
    waits: dict[str, list[float]] = defaultdict(list)
    for run_id, stage, worker, deferred, started, ended in rows:
        t0 = submitted[run_id]
        wait = (started - deferred).total_seconds() * 1000
        took = (ended - started).total_seconds() * 1000
        waits[stage].append(wait)
        waits[f"{stage} run"].append(took)
        by_run[run_id].append(
            f"{stage}@{(deferred - t0).total_seconds() * 1000:.0f} "
            f"wait {wait:.0f} run {took:.0f} [{workers.get(worker, worker)}]"
        )
    lines = [
        f"    {rid[:8]}: " + ", ".join(parts) + f", done@"
        f"{(finished[rid] - submitted[rid]).total_seconds() * 1000:.0f}"
        for rid, parts in by_run.items()
        if finished.get(rid)
    ]
    medians = ", ".join(f"{k} {statistics.median(v):.0f}" for k, v in waits.items())
    return [*lines, f"    medians (ms): {medians}"]


def worker_names(url: str, known: dict[int, str], role: str) -> dict[int, str]:
    """Name the procrastinate workers registered since ``known`` after ``role``."""
    with psycopg.connect(url, autocommit=True) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM procrastinate_workers ORDER BY id")]
    return {**known, **{i: role for i in ids if i not in known}}
