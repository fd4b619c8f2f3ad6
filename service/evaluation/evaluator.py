"""The service's evaluator: :func:`judges.evaluate` with the panel, the gate and the settings.

One :class:`Evaluator` serves the first pass of every run (the pipeline's evaluate stage, with
the panel chosen for the task) and re-scoring (with the panel asked for). It seats each panel's
judges once, reads who earned a vote from the stored gate, feeds the judges the run's stored
measurement memo, and — for panels of deterministic judges only — reuses the result of an input
already judged (identical stored frames, masks, checks and render log give identical verdicts).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor

import judges
from regua.errors import InputError
from regua.settings import Settings
from service.evaluation.gate import GateTable, StoredEligibility
from service.evaluation.inputs import StoredRun, rubric_hash
from tasks import TaskSpec

DETERMINISTIC_KINDS = frozenset({"static", "geometry", "human"})
"""Judge kinds whose verdict is a pure function of their input (safe to reuse on content)."""

EligibilitySource = Callable[[], judges.Eligibility]
"""Returns the eligibility in force now (the stored gate, re-read now and then)."""

Humans = Sequence[judges.Verdict]

#: The evaluator a forked judging process uses (set in the parent before the pool forks).
_WORKER: tuple[Evaluator, judges.JudgePanel] | None = None


def gate_source(source: StoredEligibility | GateTable | judges.Eligibility) -> EligibilitySource:
    """An eligibility source from the stored gate, a fixed table, or a fixed eligibility."""
    if isinstance(source, StoredEligibility):
        return source.current
    return lambda: source


class _Seats(threading.local):
    """Seated judges of each panel, one set per thread."""

    def __init__(self) -> None:
        """No panel seated yet on this thread."""
        self.panels: dict[str, dict[str, judges.Judge]] = {}


class Evaluator:
    """Evaluate stored runs with a panel, the gate's eligibility and the service's settings."""

    def __init__(
        self,
        eligibility: EligibilitySource,
        settings: Settings | None = None,
        *,
        panel_id: str | None = None,
        memo: bool = False,
    ) -> None:
        """``panel_id`` fixes the panel; otherwise each task family's default panel is used.

        ``memo`` reuses results of identical inputs: only for one batch judged under one
        eligibility (re-scoring), never for a long-lived evaluator whose gate changes.
        """
        self.eligibility = eligibility
        self.settings = settings
        self.panel_id = panel_id
        self.memo_enabled = memo
        self._seats = _Seats()
        self._memo: dict[str, judges.PanelResult] = {}
        self._started: dict[str, Future[Judged]] = {}
        self.judged = 0
        self.memo_hits = 0

    def panel_for(self, task: TaskSpec, requested: str | None = None) -> judges.JudgePanel:
        """The panel this evaluator judges ``task`` with.

        The panel a submission asked for (``requested``) wins; then the evaluator's own
        (``REGUA_PANEL``) when it fits the task's family; else the task version's default
        (:func:`judges.panel_for_task`: ``pelican-bicycle-default@2`` for the task versions whose
        prompts state every scored condition, whose geometry never confirms recognition; for a
        family without a panel of its own, ``family-default@1`` when a vision model is
        configured, else ``static-only@1``).
        """
        if requested is not None:
            return check_panel(requested, task)
        if self.panel_id is not None:
            panel = judges.require_panel(self.panel_id)
            if panel.fits(task.family):
                return panel
        return judges.panel_for_task(task, self.settings)

    def version_for(self, task: TaskSpec, requested: str | None = None) -> str:
        """``panel-id#hash`` of the panel used for the task (the evaluate stage's version)."""
        panel = self.panel_for(task, requested)
        return f"{panel.id}#{panel.content_hash()[:12]}"

    def seated(self, panel: judges.JudgePanel) -> dict[str, judges.Judge]:
        """The panel's judges, instantiated once per thread.

        A judge may keep state between the criteria of one evaluation, so no two threads share
        one.
        """
        found = self._seats.panels.get(panel.id)
        if found is None:
            found = judges.seat_panel(panel, self.settings)
            self._seats.panels[panel.id] = found
        return found

    def waits_on_io(self, panel: judges.JudgePanel) -> bool:
        """Whether any of the panel's judges waits on something else (a model behind HTTP).

        Judges of the deterministic kinds compute in this process; judging them on several
        threads gains nothing under the GIL.
        """
        return any(j.profile.kind not in DETERMINISTIC_KINDS for j in self.seated(panel).values())

    def _reusable(self, panel: judges.JudgePanel) -> bool:
        kinds = {j.profile.kind for j in self.seated(panel).values()}
        return self.memo_enabled and kinds <= DETERMINISTIC_KINDS

    def judge(
        self, stored: StoredRun, humans: Humans = (), panel: judges.JudgePanel | None = None
    ) -> judges.PanelResult:
        """Judge one stored run (the panel for its task unless ``panel`` is given)."""
        return self.judge_many([(stored, humans)], panel)[0]

    def judge_many(
        self,
        items: Sequence[tuple[StoredRun, Humans]],
        panel: judges.JudgePanel | None = None,
        pool: Executor | None = None,
    ) -> list[judges.PanelResult]:
        """Judge a chunk of stored runs (on ``pool`` when given); identical inputs once."""
        panels = [panel or self.panel_for(s.inp.task, s.panel_id) for s, _ in items]
        keys = [
            content_key(s.inp, h, p) if self._reusable(p) else None
            for (s, h), p in zip(items, panels, strict=True)
        ]
        todo: dict[str, int] = {}
        work: list[int] = []
        for i, key in enumerate(keys):
            if key is None:
                work.append(i)
            elif key not in self._memo and key not in todo:
                todo[key] = i
                work.append(i)
        mapper: Callable[..., Iterable[judges.PanelResult]] = pool.map if pool else map
        done = dict(
            zip(
                work,
                mapper(lambda i: self._compute(items[i][0], items[i][1], panels[i]), work),
                strict=True,
            )
        )
        for key, i in todo.items():
            self._memo[key] = done[i]
        self.judged += len(work)
        self.memo_hits += len(items) - len(work)
        return [done[i] if keys[i] is None else self._memo[str(keys[i])] for i in range(len(items))]

    def _compute(
        self, stored: StoredRun, humans: Humans, panel: judges.JudgePanel
    ) -> judges.PanelResult:
        return judges.evaluate(
            stored.inp,
            panel,
            self.eligibility(),
            humans,
            seated=self.seated(panel),
        )

    def process_pool(self, panel: judges.JudgePanel, workers: int) -> Executor | None:
        """A pool of forked processes that judge with ``panel`` outside the GIL.

        ``None`` when processes cannot be forked here. They inherit the seated judges and the
        eligibility; inputs and results cross as picklable data.
        """
        global _WORKER
        if "fork" not in multiprocessing.get_all_start_methods():
            return None
        self.seated(panel)
        _WORKER = (self, panel)
        return ProcessPoolExecutor(
            max_workers=max(1, workers), mp_context=multiprocessing.get_context("fork")
        )

    def start(
        self, stored: StoredRun, humans: Humans, panel: judges.JudgePanel, pool: Executor
    ) -> Started:
        """Begin judging one run on a process pool (see :meth:`process_pool`).

        The handle gives the result and the measurement memo as the judging process left it. An
        input already started (same content) is not judged again: its handle shares the result.
        """
        key = content_key(stored.inp, humans, panel) if self._reusable(panel) else None
        if key is not None and key in self._started:
            self.memo_hits += 1
            return Started(self._started[key], reused=True)
        self.judged += 1
        future = pool.submit(_judge_in_worker, stored, tuple(humans))
        if key is not None:
            self._started[key] = future
        return Started(future)


Judged = tuple[judges.PanelResult, judges.MeasurementMemo | None]
"""A result judged in another process, with the memo that process filled."""


class Started:
    """A judgement begun on a process pool (or one reused from an identical input)."""

    def __init__(self, future: Future[Judged], *, reused: bool = False) -> None:
        """Wrap the future; a reused one gives no memo (nothing new was measured for it)."""
        self.future = future
        self.reused = reused

    def done(self) -> bool:
        """Whether :meth:`result` would return without waiting."""
        return self.future.done()

    def result(self) -> Judged:
        """The result and the memo to store."""
        result, memo = self.future.result()
        return result, None if self.reused else memo


def _judge_in_worker(stored: StoredRun, humans: Humans) -> Judged:
    """Entry point of a judging process: the inherited evaluator and panel."""
    assert _WORKER is not None, "judging process started without an evaluator"
    evaluator, panel = _WORKER
    return evaluator._compute(stored, humans, panel), stored.inp.measurements


def check_panel(panel_id: str, task: TaskSpec) -> judges.JudgePanel:
    """The registered panel ``panel_id`` when it may judge ``task``.

    Raises :class:`NotFoundError` (unknown panel, listing the known ones) or
    :class:`InputError` (a panel of another task family).
    """
    panel = judges.require_panel(panel_id)
    if not panel.fits(task.family):
        raise InputError(
            f"judge panel {panel.id} is for task family {panel.family}, not {task.family} "
            f"({task.ref})"
        )
    return panel


def content_key(inp: judges.EvalInput, humans: Humans, panel: judges.JudgePanel) -> str:
    """Content key of one evaluation input (artifact hashes, task hash, human verdicts).

    The work's provider is part of it only when the panel keeps judges off their own
    provider's work.
    """
    doc = (
        panel.id,
        inp.provider if panel.exclude_own_provider else None,
        panel.content_hash(),
        rubric_hash(inp.task),
        inp.checks,
        inp.machinery_error,
        inp.render,
        tuple((f.time_s, f.artifact_ref) for f in inp.frames),
        tuple((m.time_s, m.part, m.kind, m.artifact_ref) for m in inp.masks),
        tuple((v.criterion, v.status.value, v.evidence.description) for v in humans),
    )
    return hashlib.sha256(repr(doc).encode()).hexdigest()
