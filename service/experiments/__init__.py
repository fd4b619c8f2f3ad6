"""Experiments: arms (model x prompt variant) x items x repeats, run resumably.

An experiment file (:mod:`service.experiments.spec`) is resolved into a stored plan
(:mod:`service.experiments.store`); the runner (:mod:`service.experiments.runner`) asks a
:class:`~service.experiments.generator.Generator` for each case under a stable case key, so an
interrupted experiment continues where it stopped; the report
(:mod:`service.experiments.report`) pairs the arms by item with the pure statistics of
:mod:`service.experiments.paired`.
"""
