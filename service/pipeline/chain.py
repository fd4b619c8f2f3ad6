"""Which stage a stage job goes on with itself, and which one it hands to the queue.

Each queue hop costs a run a notification, a job fetch, the job's own bookkeeping transactions
and its finish, and on a fleet of several workers it may land on another process, which then
reads back from the store the blobs the first one has just written (about 33 S3 reads for the
evaluate stage). So a stage job goes on with the next stage itself whenever that stage would go
to a queue with the same kind of work; it defers a job only where the kind of work changes:

* the render of a heavy-lane run goes to ``render_heavy`` (its own workers and concurrency);
* an evaluation whose panel waits on a model behind HTTP goes to the ``judge`` queue (so a slow
  model API never holds the slots rendering needs);
* everything else (a cheap render after its check, a deterministic panel after its render, the
  finalize after the evaluate) runs in the same job, on the same worker, right away.

The decision is taken inside the transaction that records the stage (where the check stage has
just set the run's lane), so a job for the next stage exists exactly when it is needed: a job
cut off after a record goes on from there when it is delivered again (its stage is recorded,
the chain continues), and the maintenance task requeues any run that no job advances.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import ReguaError
from service.evaluation.evaluator import Evaluator
from service.pipeline.lanes import HEAVY
from service.pipeline.pgqueue import defer_stage, next_stage
from service.storage import Run
from tasks import TaskSpec


class Chain:
    """One stage job's choice of what follows each stage it records (a recorded-stage hook)."""

    def __init__(
        self, evaluator: Evaluator, task: TaskSpec, asked: Callable[[], str | None]
    ) -> None:
        """Decide for a run of ``task`` judged by ``evaluator``'s panels.

        ``asked``: the panel the run's submission asked for (the stage context's).
        """
        self.evaluator, self.task, self.asked = evaluator, task, asked
        self._next: str | None = None

    def on_recorded(self, session: Session, run_id: str, stage: str) -> None:
        """Keep the next stage for this job, or defer its job (in the recording transaction)."""
        following = next_stage(stage)
        self._next = None
        if following is None:
            return
        if self.inline(session, run_id, following):
            self._next = following
        else:
            defer_stage(session, run_id, following)

    def peek(self) -> str | None:
        """The stage this job goes on with, left for :meth:`take`."""
        return self._next

    def take(self) -> str | None:
        """The stage this job goes on with (None: the job is done), once."""
        following, self._next = self._next, None
        return following

    def inline(self, session: Session, run_id: str, stage: str) -> bool:
        """Whether ``stage`` of ``run_id`` runs in the job that recorded the stage before it."""
        if stage == "render":
            return session.scalar(select(Run.lane).where(Run.id == run_id)) != HEAVY
        if stage == "evaluate":
            try:
                panel = self.evaluator.panel_for(self.task, self.asked())
                return not self.evaluator.waits_on_io(panel)
            except ReguaError:  # the evaluate job records what is wrong with the panel
                return False
        return True
