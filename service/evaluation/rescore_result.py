"""What one re-scoring batch did (kept in memory, stored as its summary)."""

from __future__ import annotations

from dataclasses import dataclass, field

from service.evaluation.batches import BatchSummary


@dataclass
class RescoreResult:
    """What one re-scoring batch did."""

    batch_id: str
    task_ref: str
    panel_id: str
    appended: list[tuple[str, int, int | None]] = field(default_factory=list)
    rerendered: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    judged: int = 0
    memo_hits: int = 0
    remeasured: int = 0
    blob_reads: int = 0
    elapsed_s: float = 0.0

    @property
    def done(self) -> int:
        """Runs of the batch finished so far: appended or skipped."""
        return len(self.appended) + len(self.skipped)

    def summary(self, runs: int) -> BatchSummary:
        """The batch's stored summary once done."""
        return BatchSummary(
            state="done",
            runs=runs,
            done=self.done,
            elapsed_s=round(self.elapsed_s, 3),
            appended=len(self.appended),
            rerendered=list(self.rerendered),
            rendered_nothing=not self.rerendered,
            skipped=dict(self.skipped),
            judged=self.judged,
            memo_hits=self.memo_hits,
            remeasured=self.remeasured,
            blob_reads=self.blob_reads,
        )
