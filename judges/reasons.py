"""The jury's review reasons: why a criterion was left ``uncertain`` for a person.

One place for the codes, shared by the pass/fail jury (:mod:`judges.jury`), the graded jury
(:mod:`judges.graded_jury`) and adjudication (:mod:`judges.adjudication`). Pure.
"""

NO_RELIABLE_JUDGE = "no_reliable_judge"
JUDGE_FAILURE = "judge_failure"
JUDGES_DISAGREE = "judges_disagree"
JUDGE_UNCERTAIN = "judge_uncertain"
REVIEWERS_DISAGREE = "reviewers_disagree"
REVIEWER_UNCERTAIN = "reviewer_uncertain"
NO_RECOGNISING_JUDGE = "no_recognising_judge"
ADJUDICATOR_UNCERTAIN = "adjudicator_uncertain"
"""The judges disagreed and the adjudicator could not decide either."""
ADJUDICATOR_FAILED = "adjudicator_failed"
"""The judges disagreed and the adjudicator gave no usable answer."""
ADJUDICATOR_NOT_TRUSTED = "adjudicator_not_trusted"
"""The judges disagreed and the gate does not trust the adjudicator on this criterion."""

ADJUDICATION = "adjudication"
"""A human verdict whose ``details`` set this key true settles a dispute: it decides alone."""
