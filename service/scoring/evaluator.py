"""The panel evaluator re-scoring uses: ``judges.evaluate`` with a fixed panel, the stored
eligibility and the run's human verdicts carried forward, memoised on content for deterministic
judges (identical stored frames, masks, checks and render log give identical verdicts)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor

import judges
from regua.settings import Settings
from service.components import EvalInput, EvalOutput
from service.panel_run import run_panel

#: Judge kinds whose verdict is a pure function of their input (safe to memoise on content).
DETERMINISTIC_KINDS = frozenset({"static", "geometry", "human"})

#: The evaluator a forked judging process uses (set in the parent before the pool forks).
_WORKER_EVALUATOR: PanelEvaluator | None = None


def _judge_in_worker(inp: EvalInput, human: Sequence[judges.Verdict]) -> EvalOutput:
    """Top-level entry point of a judging process: run the inherited evaluator's panel."""
    assert _WORKER_EVALUATOR is not None, "judging process started without an evaluator"
    return _WORKER_EVALUATOR._compute(inp, human)


def judging_pool(evaluator: PanelEvaluator, workers: int) -> Executor | None:
    """A process pool that judges for ``evaluator`` outside the GIL (``None`` when processes
    cannot be forked here). Processes are forked, so they inherit the evaluator's panel,
    eligibility and settings; inputs and outputs cross as plain picklable data."""
    global _WORKER_EVALUATOR
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    _WORKER_EVALUATOR = evaluator
    return ProcessPoolExecutor(
        max_workers=max(1, workers), mp_context=multiprocessing.get_context("fork")
    )


class PanelEvaluator:
    """Evaluate stored inputs with one panel; ``memo`` reuses results of identical inputs."""

    def __init__(
        self,
        panel: judges.JudgePanel,
        *,
        eligibility: Mapping[tuple[str, str, str], bool] | None,
        settings: Settings | None = None,
        memo: bool = True,
    ) -> None:
        self.panel = panel
        self.eligibility = eligibility
        self.settings = settings
        kinds = {judges.get_profile(p).kind for p in panel.profile_ids()}
        self.memo_enabled = memo and kinds <= DETERMINISTIC_KINDS
        self._memo: dict[str, EvalOutput] = {}
        self._started: dict[str, Future[EvalOutput]] = {}
        self.judged = 0
        self.memo_hits = 0

    def key(self, inp: EvalInput, human: Sequence[judges.Verdict]) -> str:
        """Content key of one evaluation input (artifact hashes, task hash, human verdicts)."""
        doc = {
            "task": inp.task.content_hash(),
            "checks": inp.checks,
            "render": inp.render,
            "render_status": inp.render_status,
            "render_cause": inp.render_cause,
            "frames": [(f.time_s, f.artifact_ref) for f in inp.frames],
            "masks": [(m.time_s, m.part, m.kind, m.artifact_ref) for m in inp.masks],
            "human": [(v.criterion, v.status) for v in human],
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()

    def evaluate(self, inp: EvalInput, human: Sequence[judges.Verdict] = ()) -> EvalOutput:
        """Judge one stored run's input (from the memo when the same content was judged)."""
        return self.evaluate_many([(inp, human)])[0]

    def evaluate_many(
        self,
        items: Sequence[tuple[EvalInput, Sequence[judges.Verdict]]],
        pool: ThreadPoolExecutor | None = None,
    ) -> list[EvalOutput]:
        """Judge a chunk of inputs; with the memo, each distinct content once; on ``pool``."""
        if not self.memo_enabled:
            outs = list((pool.map if pool else map)(lambda it: self._compute(*it), items))
            self.judged += len(items)
            return outs
        keys = [self.key(inp, human) for inp, human in items]
        todo: dict[str, tuple[EvalInput, Sequence[judges.Verdict]]] = {}
        for k, item in zip(keys, items, strict=True):
            if k not in self._memo:
                todo.setdefault(k, item)
        computed = (pool.map if pool else map)(lambda it: self._compute(*it), todo.values())
        self._memo.update(zip(todo, computed, strict=True))
        self.judged += len(todo)
        self.memo_hits += len(items) - len(todo)
        return [self._memo[k] for k in keys]

    def start(
        self, inp: EvalInput, human: Sequence[judges.Verdict], pool: Executor
    ) -> Future[EvalOutput] | str:
        """Start judging one input on ``pool`` now (so judging overlaps reading the next runs);
        :meth:`finish` collects it. With the memo, content already judged or started is not
        judged again: its key is returned instead of a new future."""
        if not self.memo_enabled:
            self.judged += 1
            return pool.submit(_judge_in_worker, inp, human)
        k = self.key(inp, human)
        if k in self._memo or k in self._started:
            self.memo_hits += 1
        else:
            self.judged += 1
            self._started[k] = pool.submit(_judge_in_worker, inp, human)
        return k

    def done(self, started: Future[EvalOutput] | str) -> bool:
        """Whether :meth:`finish` would return without waiting."""
        if isinstance(started, str):
            return started in self._memo or self._started[started].done()
        return started.done()

    def finish(self, started: Future[EvalOutput] | str) -> EvalOutput:
        """The result of a judgement begun with :meth:`start`."""
        if not isinstance(started, str):
            return started.result()
        if started not in self._memo:
            self._memo[started] = self._started.pop(started).result()
        return self._memo[started]

    def _compute(self, inp: EvalInput, human: Sequence[judges.Verdict]) -> EvalOutput:
        """Run the panel on one input (no memo)."""
        return run_panel(inp, self.panel, self.eligibility, self.settings, human)
