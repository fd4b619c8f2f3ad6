"""Calibration by the service: render a set in the sandbox, judge it, decide, store the run.

One path for the CLI and the HTTP API; the run is stored with its gate decisions.

Sets are found by name (:mod:`.sets`: the bundled set, a ``.jsonl`` set, a CSV set folder or a
label folder); review labels are exported as a label folder (:mod:`.export`). The measuring
itself (metrics, the gate rule) is pure and lives in :mod:`judges.calibration`.
"""
