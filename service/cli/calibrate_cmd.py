"""``regua perturb`` and ``regua calibrate``: perturbation sets and judge calibration.

``regua perturb BASE.svg... --task ID@VERSION --out DIR [--seed N]`` writes single-factor
variants and ``manifest.jsonl``. ``regua calibrate --judge PROFILE --set SET`` runs a judge
profile over a calibration set (the bundled one by default) through the real pipeline — sandboxed
render, then the judge on the frames and masks — computes the metrics on the held-out split and
prints (and optionally writes) the run with its gate decisions. Storage of runs in the database
is the service's job; this command writes JSON.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

from judges.calibration.bundled import load_bundled_set
from judges.calibration.gate import DEFAULT_GATE, GateConfig
from judges.calibration.perturb import (
    Recipe,
    default_recipes,
    list_perturbations,
    manifest_jsonl,
    perturb_many,
)
from judges.calibration.runner import (
    SPLIT_NAMES,
    CalibrationRun,
    VerdictFn,
    VerdictLike,
    run_calibration,
)
from judges.calibration.setio import read_set
from judges.calibration.sets import CalibrationItem, CalibrationSet
from judges.model import JudgeFailure
from regua.errors import ReguaError
from tasks import TaskSpec, bundled_registry

BUNDLED_NAMES = ("bundled", "pelican-bicycle-structured-perturbations@1")


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def perturb_command(
    bases: list[Path] = typer.Argument(None, help="Structured base drawings (SVG files)"),
    task: str = typer.Option("pelican-bicycle-structured@1", "--task", help="Task ID@VERSION"),
    out: Path = typer.Option(None, "--out", help="Output directory (variants + manifest.jsonl)"),
    seed: int = typer.Option(0, "--seed", help="Seed (same seed, same bytes)"),
    perturbation: list[str] = typer.Option(
        None, "--perturbation", "-p", help="Perturbation id (repeatable; default: the battery)"
    ),
    params: str = typer.Option(
        None,
        "--params",
        help="JSON parameters for every --perturbation, e.g. '{\"fraction\": 0.1}'",
    ),
    list_only: bool = typer.Option(False, "--list", help="List the perturbations and exit"),
) -> None:
    """Build single-factor variants of structured drawings, with a manifest line each."""
    if list_only:
        for spec in list_perturbations():
            typer.echo(f"{spec.id}@{spec.version}\t{spec.family}\t{spec.description}")
        return
    if not bases or out is None:
        raise _fail("give at least one BASE.svg and --out DIR")
    try:
        task_spec: TaskSpec = bundled_registry().get(task)
        extra = json.loads(params) if params else {}
        recipes = (
            [Recipe(p, extra) for p in perturbation] if perturbation else list(default_recipes())
        )
        sources = [(p.stem, p.read_bytes()) for p in bases]
        variants, skipped = perturb_many(sources, recipes, task=task_spec, seed=seed)
    except (ReguaError, OSError, json.JSONDecodeError) as exc:
        raise _fail(str(exc)) from exc
    out.mkdir(parents=True, exist_ok=True)
    for v in variants:
        (out / v.file_name).write_bytes(v.svg)
    (out / "manifest.jsonl").write_text(manifest_jsonl(variants), encoding="utf-8")
    for note in skipped:
        typer.echo(f"skipped {note['perturbation']} on {note['base']}: {note['reason']}", err=True)
    typer.echo(f"{len(variants)} variants written to {out} (manifest.jsonl)")


def _load_set(name: str) -> tuple[CalibrationSet, Callable[[CalibrationItem], bytes]]:
    """A set and a function returning each item's artifact bytes."""
    if name in BUNDLED_NAMES:
        bundle = load_bundled_set()
        return bundle.calibration_set, lambda item: bundle.artifacts[item.artifact_sha256]
    path = Path(name)
    cal_set = read_set(path)
    root = path if path.is_dir() else path.parent

    def artifact(item: CalibrationItem) -> bytes:
        if not item.artifact_file:
            raise ReguaError(f"item {item.item_id} names no artifact file")
        return (root / item.artifact_file).read_bytes()

    return cal_set, artifact


Rendered = tuple[tuple[Any, ...], tuple[Any, ...], Mapping[str, Any]] | str


class PipelineVerdicts:
    """A ``verdict_fn`` over the real pipeline: sandboxed render once per artifact, then the judge.

    Repeats re-run the judge on the same render (a render is a stored artifact; re-rendering is
    a machinery question, not the judge's). ``prepare`` renders every artifact up front, in
    parallel over the worker pool. The judge abstains (``None``) on criteria it does not answer.
    ``stored(item)`` may return frames, masks and render.json already stored for the artifact
    (the service's re-scoring hook): then nothing is rendered. ``pool`` is created lazily.
    """

    def __init__(
        self,
        task: TaskSpec,
        profile_id: str,
        artifact: Callable[[CalibrationItem], bytes],
        *,
        pool: Any = None,
        workers: int | None = None,
        stored: Callable[[CalibrationItem], Rendered | None] | None = None,
    ) -> None:
        import judges
        from regua.settings import Settings
        from service import rendering

        settings = Settings()
        self._judges: Any = judges
        self._rendering: Any = rendering
        self.task = task
        self.profile_id = profile_id
        self.judge = judges.create_judge(judges.get_profile(profile_id), settings)
        self._artifact = artifact
        self._settings = settings
        self._own_pool = pool is None
        self._pool = pool
        self.workers = workers or int(getattr(settings, "render_workers", 2) or 2)
        self._stored = stored
        self._cache: dict[str, Rendered] = {}
        self._lock = threading.Lock()

    def render(self, item: CalibrationItem) -> Rendered:
        """Frames, masks and render.json of an item's artifact (rendered once), or the failure."""
        key = item.artifact_sha256
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        kept = self._stored(item) if self._stored is not None else None
        if kept is not None:  # re-judging stored frames and masks: nothing is rendered
            with self._lock:
                self._cache[key] = kept
            return kept
        j = self._judges
        out = self._rendering.render_artifact(
            self._artifact(item).decode("utf-8"), self.task, self.pool
        )
        rendered: Rendered
        if out.status != "ok" or out.result is None:
            rendered = f"render_{out.status}: {getattr(out, 'cause', None)}"
        else:
            res, files = out.result, out.files
            frames = tuple(
                j.FrameImage(f["time_s"], files[f["name"]], f["sha256"])
                for f in res.get("frames", [])
            )
            masks = tuple(
                j.MaskImage(
                    m["time_s"], m["part"], j.mask_kind(m["kind"]), files[m["name"]], m["sha256"]
                )
                for m in res.get("masks", [])
            )
            rendered = (frames, masks, res)
        with self._lock:
            self._cache[key] = rendered
        return rendered

    @property
    def pool(self) -> Any:
        """The render worker pool (created on first use when none was given)."""
        with self._lock:
            if self._pool is None:
                self._pool = self._rendering.create_pool(self._settings)
            return self._pool

    def prepare(self, items: Sequence[CalibrationItem]) -> None:
        """Render every distinct artifact once, in parallel."""
        unique = {i.artifact_sha256: i for i in items if self._answers(i)}
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as ex:
            list(ex.map(self.render, unique.values()))

    def _answers(self, item: CalibrationItem) -> bool:
        return bool(self.judge.answers(self.task, self.task.criterion(item.criterion)))

    def __call__(self, item: CalibrationItem, repeat: int) -> VerdictLike:
        """The judge's verdict on one item (``None`` when it does not answer the criterion)."""
        if not self._answers(item):
            return None
        rendered = self.render(item)
        j = self._judges
        if isinstance(rendered, str):
            return JudgeFailure(item.criterion, self.profile_id, "render_incomplete", rendered)
        frames, masks, res = rendered
        criterion = self.task.criterion(item.criterion)
        result: VerdictLike = self.judge.judge(
            j.JudgeInput(self.task, criterion, frames, masks, {}, res)
        )
        return result

    def close(self) -> None:
        """Shut the worker pool down when this object created it."""
        if self._own_pool and self._pool is not None:
            self._pool.close()
            self._pool = None


def pipeline_verdict_fn(
    task: TaskSpec,
    profile_id: str,
    artifact: Callable[[CalibrationItem], bytes],
    *,
    pool: Any = None,
) -> tuple[VerdictFn, Callable[[], None]]:
    """The pipeline verdict function for a profile and its ``close`` (see PipelineVerdicts)."""
    verdicts = PipelineVerdicts(task, profile_id, artifact, pool=pool)
    return verdicts, verdicts.close


def summary_lines(run: CalibrationRun) -> list[str]:
    """Human-readable lines: never accuracy alone; intervals beside every rate."""

    def est(d: Mapping[str, Any]) -> str:
        v = d.get("value")
        if v is None:
            return "n/a"
        lo, hi = d.get("ci_low"), d.get("ci_high")
        ci = "" if lo is None else f" [{lo:.2f}, {hi:.2f}]"
        num, den = d.get("numerator"), d.get("denominator")
        frac = "" if num is None or den is None else f" ({num}/{den})"
        return f"{v:.3f}{ci}{frac}"

    def wilson(d: Mapping[str, Any]) -> str:
        lo, hi = d.get("wilson_low"), d.get("wilson_high")
        return "" if lo is None or hi is None else f" Wilson [{lo:.2f}, {hi:.2f}]"

    m = run.metrics.to_dict()
    h = run.human.to_dict()
    lines = [
        f"run {run.run_id}: {run.profile_id} on {run.set_id} ({run.split}, seed {run.split_seed})",
        f"items {m['n_items']}, scored {m['n_scored']}, disputed {m['n_disputed']}, "
        f"judge errors {m['n_judge_errors']}",
        f"  macro-F1 {est(m['macro_f1'])}  kappa {est(m['kappa'])}  accuracy {est(m['accuracy'])}",
        f"  missed critical {est(m['missed_critical'])}{wilson(m['missed_critical'])}  "
        f"false rejects {est(m['false_reject'])}",
        f"  uncertain {est(m['uncertain_rate'])}  invariance violations "
        f"{est(m['invariance_violation'])}  sensitivity {est(m['sensitivity'])}",
        f"  repeat agreement {est(m['repeat_agreement'])}",
        f"  humans (n={h['n_items']}): agreement {est(h['agreement'])}  kappa {est(h['kappa'])}",
    ]
    for d in run.decisions:
        verdict = "PASS" if d.passed else "REJECT"
        lines.append(f"gate {d.criterion}: {verdict} — {'; '.join(d.reasons)}")
    return lines


def calibrate_command(
    judge: str = typer.Option(..., "--judge", help="Judge profile id (NAME@VERSION)"),
    set_name: str = typer.Option("bundled", "--set", help="'bundled', a .jsonl set or a CSV dir"),
    split: str = typer.Option("held_out", "--split", help="held_out (gate) | tuning | all"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="Judge each item this many times"),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    n_boot: int = typer.Option(1000, "--n-boot", min=100, help="Bootstrap resamples"),
    gate_file: Path = typer.Option(None, "--gate", help="Gate rule as JSON (GateConfig)"),
    out: Path = typer.Option(None, "--out", help="Write the run (JSON) here"),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON"),
    store: bool = typer.Option(
        None, "--store/--no-store", help="Store in the database (default: when one is configured)"
    ),
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Calibrate a judge profile on a labelled set and decide the reliability gate."""
    split_name = SPLIT_NAMES.get(split)
    if split_name is None:
        raise _fail("--split must be held_out, tuning or all")
    close: Callable[[], None] = lambda: None  # noqa: E731
    try:
        cal_set, artifact = _load_set(set_name)
        task = bundled_registry().get(cal_set.task_ref)
        gate = (
            GateConfig.from_dict(json.loads(gate_file.read_text(encoding="utf-8")))
            if gate_file
            else DEFAULT_GATE
        )
        fn, close = pipeline_verdict_fn(task, judge, artifact)
        run = run_calibration(
            judge.partition("@")[0],
            judge,
            cal_set,
            fn,
            split=split_name,
            repeats=repeats,
            seed=seed,
            n_boot=n_boot,
            gate=gate,
        )
    except (ReguaError, OSError, ImportError, json.JSONDecodeError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        close()
    data = run.to_dict()
    from service.scoring.calibrate import should_store, store_run

    if should_store(store, data_dir):  # the run and its gate decisions, for the jury to read
        typer.echo(f"stored calibration run {store_run(run, data_dir=data_dir)}", err=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(data, sort_keys=True))
    else:
        for line in summary_lines(run):
            typer.echo(line)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("perturb")(perturb_command)
    app.command("calibrate")(calibrate_command)
