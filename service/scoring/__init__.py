"""Calibration storage, the stored gate's eligibility, and append-only re-scoring (issue 6).

- :mod:`service.scoring.calibration`: store calibration runs and gate decisions, and
  ``latest_eligibility(session)`` (what the jury reads).
- :mod:`service.scoring.rescore`: re-judge stored runs with another panel or rubric from stored
  frames and masks (``rescore``), appending evaluations.
- :mod:`service.scoring.batches`: a re-scoring batch's state and progress (its summary).
- :mod:`service.scoring.diff`: per-criterion diff between two sets of evaluations.
- :mod:`service.scoring.jobs`: the one-at-a-time background job runner the context owns.
- :mod:`service.scoring.api`: ``/v1/calibrations`` (+ ``/jobs``), ``/v1/gate``,
  ``/v1/evaluations`` (+ ``/batches``, ``/diff``).
"""

from service.scoring.models import CalibrationRunRow, GateDecisionRow, RescoreBatch, RescoreItem

__all__ = ["CalibrationRunRow", "GateDecisionRow", "RescoreBatch", "RescoreItem"]
