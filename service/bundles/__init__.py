"""Run bundles: runs of a task with their evidence in one verified file, between installations.

:mod:`service.bundles.export` writes one, :mod:`service.bundles.restore` imports one,
:mod:`service.bundles.archive` is the file format (manifest of sha256 sums and versions) and
:mod:`service.bundles.tables` which rows travel and how their ids are translated.
"""
