"""The bundled samples (``samples/outputs/manifest.json``) and submitting them over HTTP."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from regua.client import Client, RunInput

DEMO_LABEL = "demo-samples (mock judge)"
"""The model label of the demo's runs: reports show them apart from any live model's runs."""


def default_samples_dir() -> Path:
    """``samples/outputs`` of the source tree."""
    return Path(__file__).resolve().parents[2] / "samples" / "outputs"


@dataclass(frozen=True)
class Sample:
    """One bundled output, the task it answers and its declared truth."""

    file: str
    task: str
    intent: str
    description: str
    truth: dict[str, str] = field(default_factory=dict)
    """criterion → status, when the manifest declares it (else derived from ``intent``)."""


def load_samples(folder: Path) -> list[Sample]:
    """The manifest of a samples folder (``manifest.json``)."""
    data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return [
        Sample(
            d["file"],
            d["task"],
            d.get("intent", ""),
            d.get("description", ""),
            {str(k): str(v) for k, v in (d.get("truth") or {}).items()},
        )
        for d in data
    ]


def submit_samples(client: Client, folder: Path) -> list[tuple[Sample, str]]:
    """Submit every sample as one batch; returns (sample, run id) pairs."""
    samples = load_samples(folder)
    runs = [
        RunInput(
            task=s.task,
            model=DEMO_LABEL,
            provider="regua",
            params={"sample": s.file},
            output=(folder / s.file).read_text(encoding="utf-8"),
        )
        for s in samples
    ]
    ids = [r.run_id for r in client.submit_batch(runs).runs]
    return list(zip(samples, ids, strict=True))
