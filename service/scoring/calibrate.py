"""Running a calibration through the real pipeline and storing it (CLI ``--store`` and the API).

The run itself is :func:`judges.calibration.run_calibration` over
:class:`service.cli.calibrate_cmd.PipelineVerdicts` (sandboxed render once per artifact, then the
judge); this module only adds the database.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from judges.calibration import DEFAULT_GATE, CalibrationRun, GateConfig, run_calibration
from judges.calibration.runner import SPLIT_NAMES
from regua.errors import InputError
from regua.settings import Settings
from service.artifacts import BlobStore
from service.db import Database
from service.scoring.calibration import invalidate, store_calibration_run
from tasks import bundled_registry


def should_store(store: bool | None, data_dir: Path | None) -> bool:
    """``--store/--no-store`` wins; otherwise store when a data folder or database is configured
    (``--data-dir``, ``REGUA_DATA_DIR`` or ``REGUA_DATABASE_URL``)."""
    if store is not None:
        return store
    return data_dir is not None or any(
        os.environ.get(k) for k in ("REGUA_DATA_DIR", "REGUA_DATABASE_URL")
    )


def store_run(
    run: CalibrationRun,
    *,
    settings: Settings | None = None,
    data_dir: Path | None = None,
    db: Database | None = None,
    requested_by: int | None = None,
) -> str:
    """Store a run and its decisions in the configured database; returns the run id."""
    settings = settings or Settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    own = db is None
    database = db or Database(settings.resolved_database_url())
    try:
        with database.write() as s:
            store_calibration_run(s, run, requested_by=requested_by)
    finally:
        if own:
            database.dispose()
    invalidate(database.url)
    return run.run_id


def calibrate(
    judge: str,
    set_name: str = "bundled",
    *,
    split: str = "held_out",
    repeats: int = 2,
    seed: int = 0,
    n_boot: int = 1000,
    gate: GateConfig | None = None,
    pool: Any = None,
    db: Database | None = None,
    blobs: BlobStore | None = None,
) -> CalibrationRun:
    """Calibrate ``judge`` on a set ('bundled', a .jsonl set or a CSV folder) via the pipeline.

    With ``db`` and ``blobs``, renders are read from / kept in the artifact store
    (:mod:`service.scoring.renders`): a drawing already rendered under the same render profile
    and renderer is re-judged from its stored frames and masks, not rendered again."""
    from service.cli.calibrate_cmd import PipelineVerdicts, _load_set
    from service.scoring.renders import KeepingVerdicts, StoredRenders

    cal_set, artifact = _load_set(set_name)
    task = bundled_registry().get(cal_set.task_ref)
    verdicts: PipelineVerdicts
    split_name = SPLIT_NAMES.get(split)
    if split_name is None:
        raise InputError(f"split must be one of {sorted(SPLIT_NAMES)}, got {split!r}")
    if db is not None and blobs is not None:
        renders = StoredRenders(db, blobs, task)
        verdicts = KeepingVerdicts(task, judge, artifact, renders, pool=pool)
    else:
        verdicts = PipelineVerdicts(task, judge, artifact, pool=pool)
    try:
        return run_calibration(
            judge.partition("@")[0],
            judge,
            cal_set,
            verdicts,
            split=split_name,
            repeats=repeats,
            seed=seed,
            n_boot=n_boot,
            gate=gate or DEFAULT_GATE,
        )
    finally:
        verdicts.close()
