"""A token's share of background work: jobs in flight, and the work they have left.

One rule for generations (:mod:`service.generation.jobs`: 4 running, 200 model calls left) and
experiments (:mod:`service.experiments.admission`: 2 generating,
``REGUA_EXPERIMENT_CASES_PER_TOKEN`` cases left). A request larger than the whole share can
never be accepted (:class:`BatchTooLargeError`, 422: retrying cannot help); one that does not
fit beside the token's work in flight is refused for now (:class:`QueueShareError`, 429
``queue_share_full`` with ``Retry-After``). Both are decided before anything is stored, while
:data:`ADMIT_LOCK` is held (the stored rows are the count, so one process admits in turn).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from regua.errors import BatchTooLargeError, QueueShareError

ADMIT_LOCK = threading.Lock()
"""Held from counting a token's work in flight until the admitted request is stored."""


@dataclass(frozen=True)
class Share:
    """At most ``jobs`` jobs in flight per token, with at most ``units`` units of work left."""

    jobs: int
    units: int
    noun: str
    """What a job is: ``generation``, ``experiment``."""
    state: str
    """What in flight means for it: ``running``, ``generating``."""
    unit: str
    """What the work is counted in: ``model call``, ``case``."""
    retry_after_s: int
    setting: str | None = None
    """The setting that sets ``units``, named in the refusals (None: a constant)."""

    def _cap(self) -> str:
        return f" ({self.setting})" if self.setting else ""

    def check_size(self, wanted: int, field: str) -> None:
        """422 when one request of ``wanted`` units exceeds the share; ``field`` counts it."""
        if wanted > self.units:
            raise BatchTooLargeError(
                f"{field}: {wanted} {self.unit}s in one {self.noun}; at most {self.units} "
                f"per token at a time{self._cap()}: split it"
            )

    def check_room(self, jobs: int, held: int, wanted: int) -> None:
        """429 when ``jobs`` in flight with ``held`` units left leave no room for ``wanted``."""
        if jobs >= self.jobs or held + wanted > self.units:
            raise QueueShareError(
                f"this token has {jobs} {self.noun}(s) {self.state} with {held} "
                f"{self.unit}(s) left (at most {self.jobs} {self.noun}s and {self.units} "
                f"{self.unit}s{self._cap()}); retry when they finish",
                self.retry_after_s,
            )
