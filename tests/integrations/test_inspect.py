"""Acceptance: an Inspect AI eval of 6 samples scored by regua, offline, through the sandbox.

The example task (``examples/inspect_pelican.py``) runs with Inspect's built-in ``mockllm``
model answering bundled drawings, two of each kind: one that passes, one that breaks a declared
rule (no SVG at all) and one a person must decide (a foot hovering over its pedal). regua is the
service ``regua run`` starts (the real checker, sandboxed Chromium and judges, with the demo's
MOCK vision judge answering from the samples' declared truth); the scorer talks to it by URL.
The ``.eval`` log must carry, for each sample, regua's decision as its score: ``C``/``I`` for
pass/fail, unscored for pending, with the run id and page in the metadata. A second test runs
the scorer's embedded mode (no URL: regua in this process, on its own data folder).

Offline: ``mockllm`` counts tokens with tiktoken (a download on first use) unless the reply
states its usage, so every mock reply here states it.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from regua.settings import Settings
from service.api.client import read_token
from tests.helpers.ports import HOST, free_port
from tests.helpers.server import require_real_rendering

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from regua.integrations.embedded import stop_embedded  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "outputs"
KINDS = {
    "pass": "structured-good.svg",
    "fail": "no-svg-prose.txt",
    "pending": "uncertain-R2-foot-hovering.svg",
}
pytestmark = [
    pytest.mark.browser,
    pytest.mark.sandbox,
    pytest.mark.timeout(900),
    # Inspect's own code: a tenacity argument it still uses, anyio streams it leaves to the GC
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in.*MemoryObjectReceiveStream"
        ":pytest.PytestUnraisableExceptionWarning"
    ),
]


def _pelican(**params: Any) -> Any:
    """The example task, loaded from ``examples/`` like ``inspect eval`` does."""
    where = REPO / "examples" / "inspect_pelican.py"
    spec = importlib.util.spec_from_file_location("inspect_pelican", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pelican(**params)


def _reply(kind: str, copy: int) -> ModelOutput:
    """A bundled drawing as the mock model's reply, marked with its kind (usage stated)."""
    text = (SAMPLES / KINDS[kind]).read_text() + f"\n<!-- kind={kind} copy={copy} -->\n"
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    out.usage = ModelUsage(input_tokens=100, output_tokens=len(text) // 4, total_tokens=0)
    return out


def _eval(task: Any, kinds: list[str], logs: Path) -> EvalLog:
    replies = [_reply(kind, n) for n, kind in enumerate(kinds)]
    model = get_model("mockllm/model", custom_outputs=replies)
    done = inspect_eval(task, model=model, log_dir=str(logs), display="none")
    assert done[0].status == "success", done[0].error
    return read_eval_log(done[0].location)  # the .eval file as written


def _scores(log: EvalLog) -> list[tuple[str, Any, dict[str, Any], str]]:
    """(kind the mock answered, score value, metadata, explanation) per sample of the log."""
    assert log.samples is not None
    found = []
    for sample in log.samples:
        kind = sample.output.completion.split("<!-- kind=")[1].split()[0]
        assert sample.scores is not None and len(sample.scores) == 1
        score = next(iter(sample.scores.values()))
        found.append((kind, score.value, dict(score.metadata or {}), str(score.explanation)))
    return found


@pytest.fixture
def demo_service(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``regua run``'s service (MOCK vision judge) on a thread: its URL and admin token."""
    from service.demo.mock_service import start_mock_service
    from service.demo.samples import default_samples_dir

    data = tmp_path / "demo-data"
    # one render worker, like every served test's service (another costs ~2.5 CPU s to start)
    settings = Settings(data_dir=data, host=HOST, port=free_port(), render_workers=1)
    service = start_mock_service(settings, default_samples_dir())
    try:
        token = read_token(data)
        assert token
        yield service.server.url, token
    finally:
        service.stop()


def test_inspect_eval_carries_reguas_scores(tmp_path: Path, demo_service: tuple[str, str]) -> None:
    require_real_rendering()
    url, token = demo_service
    task = _pelican(samples=6, url=url, token=token)
    log = _eval(task, [kind for _copy in (1, 2) for kind in KINDS], tmp_path / "logs")
    scores = _scores(log)
    assert len(scores) == 6
    values: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for kind, value, meta, explanation in scores:
        assert meta["regua_outcome"] == kind, (kind, meta, explanation)
        assert len(str(meta["regua_run_id"])) == 32
        assert meta["regua_run_url"] == f"{url}/runs/{meta['regua_run_id']}"
        assert meta["regua_task"] == "pelican-bicycle-structured@1" and meta["regua_criteria"]
        values[kind].append(value)
        if kind != "pass":
            assert explanation and explanation != f"regua: {kind}", (kind, explanation)
    assert len({meta["regua_run_id"] for _k, _v, meta, _e in scores}) == 6
    assert values["pass"] == ["C", "C"] and values["fail"] == ["I", "I"], values
    assert all(isinstance(v, float) and math.isnan(v) for v in values["pending"]), values
    assert log.results is not None
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert accuracy == 0.5  # 2 of the 4 decided samples; the pending ones left out


@pytest.fixture
def embedded_dir(tmp_path: Path) -> Iterator[Path]:
    """The embedded service's data folder, stopped after the test."""
    folder = tmp_path / "regua-data"
    folder.mkdir()
    yield folder
    stop_embedded(folder)


def test_embedded_mode_needs_no_service(tmp_path: Path, embedded_dir: Path) -> None:
    require_real_rendering()
    task = _pelican(samples=2, data_dir=str(embedded_dir))
    scores = _scores(_eval(task, ["fail", "pass"], tmp_path / "logs"))
    by_kind = {kind: (value, meta) for kind, value, meta, _e in scores}
    assert by_kind["fail"][0] == "I" and by_kind["fail"][1]["regua_outcome"] == "fail"
    # a fresh folder has no calibrated judge: the good drawing waits for a person, unscored
    assert by_kind["pass"][1]["regua_outcome"] == "pending"
    assert isinstance(by_kind["pass"][0], float) and math.isnan(by_kind["pass"][0])
    assert (embedded_dir / "admin-token").exists() and any(embedded_dir.iterdir())
