"""Judging and appending one re-scoring batch, chunk by chunk (threads or forked processes)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

from sqlalchemy import insert

import judges
from service.evaluation.batches import BatchProgress
from service.evaluation.evaluator import Evaluator, Started
from service.evaluation.inputs import StoredRun
from service.evaluation.record import NewEvaluation, append_evaluations
from service.evaluation.rescore_result import RescoreResult
from service.storage import Database, RescoreItem
from service.storage.blobs import BlobStore

CHUNK = 200
"""Runs judged and written together (one transaction per chunk)."""
WRITE_MIN = 8
"""With worker processes, judged runs are written once this many are ready."""

Prepared = tuple[StoredRun, list[judges.Verdict]]
"""A run's stored evidence and its people's verdicts, ready to judge."""


@dataclass
class BatchWork:
    """Judges prepared inputs and appends their evaluations, chunk by chunk."""

    db: Database
    blobs: BlobStore
    judge: Evaluator
    panel: judges.JudgePanel
    result: RescoreResult
    tracker: BatchProgress

    def in_threads(self, workers: int, inputs: Iterator[Prepared]) -> None:
        """Read a chunk, judge it on ``workers`` threads, write it; until no input is left.

        A panel whose judges all compute in this process (no model to wait on) is judged on
        this thread: under the GIL, more threads would only contend for it.
        """
        prepared: list[Prepared] = []
        threaded = workers > 1 and self.judge.waits_on_io(self.panel)
        with ThreadPoolExecutor(max_workers=workers) if threaded else nullcontext() as pool:
            for item in inputs:
                prepared.append(item)
                if len(prepared) >= CHUNK:
                    self._judge_and_write(prepared, pool)
            self._judge_and_write(prepared, pool)

    def _judge_and_write(self, prepared: list[Prepared], pool: Executor | None) -> None:
        results = self.judge.judge_many(prepared, self.panel, pool)
        self.write(
            [(s, r, s.inp.measurements) for (s, _h), r in zip(prepared, results, strict=True)]
        )
        prepared.clear()

    def in_processes(self, pool: Executor, inputs: Iterator[Prepared]) -> None:
        """Judge in worker processes, each input handed over as soon as it is read.

        Judged runs are written (in run order) whenever ``WRITE_MIN`` are ready, the rest at
        the end.
        """
        started: list[tuple[StoredRun, Started]] = []

        def flush(wait: bool) -> None:
            ready: list[tuple[StoredRun, judges.PanelResult, judges.MeasurementMemo | None]] = []
            while started and (wait or started[0][1].done()):
                stored, future = started.pop(0)
                result, memo = future.result()
                ready.append((stored, result, memo))
            self.write(ready)

        for stored, humans in inputs:
            started.append((stored, self.judge.start(stored, humans, self.panel, pool)))
            head = next((i for i, (_, f) in enumerate(started) if not f.done()), len(started))
            if head >= WRITE_MIN or len(started) >= CHUNK:
                flush(wait=len(started) >= CHUNK)
        flush(wait=True)

    def write(
        self, judged: Sequence[tuple[StoredRun, judges.PanelResult, judges.MeasurementMemo | None]]
    ) -> None:
        """Append the evaluations of a chunk of runs in one transaction.

        The batch items go with them, and the batch's progress when it is due.
        """
        if not judged:
            return
        news = [
            NewEvaluation(
                run_id=stored.run_id,
                kind="rescore",
                result=result,
                versions=stored.versions,
                artifact_names=stored.artifact_names,
                measurements=memo,
            )
            for stored, result, memo in judged
        ]
        with self.db.write() as s:
            rows = append_evaluations(s, self.blobs, news)
            items = []
            for new, ev in zip(news, rows, strict=True):
                if new.measurements is not None and new.measurements.added:
                    self.result.remeasured += 1
                prev = ev.supersedes_id  # the run's current evaluation until this one
                items.append(
                    {
                        "batch_id": self.result.batch_id,
                        "run_id": new.run_id,
                        "evaluation_id": ev.id,
                        "previous_evaluation_id": prev,
                        "rerendered": new.run_id in self.result.rerendered,
                    }
                )
                self.result.appended.append((new.run_id, ev.id, prev))
            s.execute(insert(RescoreItem), items)
            self.tracker.write_if_due(s, self.result.done)
