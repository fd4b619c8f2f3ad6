"""Evaluation of stored runs: the evaluator, the one writer of evaluations, re-scoring.

The evaluator is :func:`judges.evaluate` with the panel, the stored gate and the settings;
:mod:`.record` writes and reads evaluations; people's verdicts come from review
(:mod:`.humans`); re-scoring appends evaluations in batches and diffs them.

Nothing is overwritten: every evaluation names the one it supersedes, and a run's current
outcome is a pointer to its newest evaluation.
"""
