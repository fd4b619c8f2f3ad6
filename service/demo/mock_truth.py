"""The declared truth of the bundled samples, and teaching it to the demo's mock judge.

A sample's truth is declared in ``manifest.json``: ``truth`` (criterion → status) when given,
else derived from ``intent``: ``good`` → every visual criterion passes; ``fail:X`` → X fails,
the rest pass; ``uncertain:X`` → X is a case a person must look at, the rest pass. The mock
knows a drawing only by the sha256 of its rendered frames, which the demo learns by rendering
each sample once, on the service's own renderer, before submitting it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from regua.llm.testing import FrameTruth
from service.context import ServiceContext
from service.demo.mock_judge import VISUAL
from service.demo.samples import Sample
from service.pipeline.local import evidence_of


def declared_truth(sample: Sample) -> dict[str, str]:
    """Criterion → status the sample declares for the criteria the mock answers."""
    if sample.truth:
        return dict(sample.truth)
    statuses = dict.fromkeys(VISUAL, "pass")
    kind, _, criterion = sample.intent.partition(":")
    if kind in ("fail", "uncertain") and criterion in statuses:
        statuses[criterion] = kind
    return statuses


def teach(model: FrameTruth, ctx: ServiceContext, folder: Path, samples: list[Sample]) -> int:
    """Render each distinct (sample, task) once and tell the mock its declared truth.

    Returns how many drawings were rendered (replies without SVG have no frames to learn).
    """
    distinct = {(s.file, s.task): s for s in samples}

    def learn(sample: Sample) -> int:
        task = ctx.registry.get(sample.task)
        found = evidence_of((folder / sample.file).read_bytes(), task, ctx.renderer)
        shas = [f.artifact_ref for f in found.inp.frames]
        model.learn(shas, declared_truth(sample))
        return 1 if shas else 0

    workers = max(1, ctx.settings.render_workers or 1)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="demo-teach") as pool:
        return sum(pool.map(learn, distinct.values()))
