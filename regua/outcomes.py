"""The words of a verdict: a criterion's status and a run's outcome (shared by every layer).

The jury (:mod:`judges.outcomes`) decides them, the service stores them, the API's read models
(:mod:`regua.views`) and the public client (:mod:`regua.client`) carry them.
"""

from __future__ import annotations

from typing import Literal

CriterionStatus = Literal["pass", "fail", "uncertain", "not_applicable"]
"""Status of a criterion after the jury: exactly the four statuses of the method.

A criterion no judge could answer is ``uncertain`` with the review reason ``judge_failure``.
"""

OutcomeStatus = Literal["pass", "fail", "pending", "incomplete"]
"""Overall status of one evaluation, as decided by :func:`judges.decide_outcome`."""
