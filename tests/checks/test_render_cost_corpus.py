"""The render-cost limits are calibrated on real drawings: no file of the project's samples and
fixtures, the real model outputs or the SVG test suites goes over ``max_layer_pixels`` or
``max_selector_steps`` at their defaults (issue 24, finding 8).

Each test prints the largest estimate it found and its margin to the limit (run with ``-s``). The
external corpora skip with a clear reason when ``../shared/corpora`` is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import parse_document
from checks.css_cost import sheet_cost
from checks.paint_cost import paint_cost
from checks.render_cost import STYLE_TAG
from tasks import TaskSpec
from tests.checks.conftest import read_fixture
from tests.conftest import corpus_dir

REPO = Path(__file__).resolve().parents[2]
CORPORA = ("llm_svgs", "resvg", "w3c_svg11", "wpt_svg2_subset", "animation")


def _own_files() -> list[Path]:
    """Sample outputs, fixtures (but those meant to fail render-cost) and test fixtures."""
    files = sorted((REPO / "samples").rglob("*.svg")) + sorted((REPO / "tests").rglob("*.svg"))
    return [
        p for p in files if not (p.parent.name == "fail" and read_fixture(p).fails == "render-cost")
    ]


def _worst(files: list[Path], task: TaskSpec) -> tuple[int, int, int, str, str]:
    """(files parsed, largest layer-pixels, largest selector-steps, and where each was)."""
    parsed, layers, steps, at_layers, at_steps = 0, 0, 0, "", ""
    for path in files:
        doc = parse_document(path.read_bytes())
        if doc.root is None:
            continue
        parsed += 1
        cost = paint_cost(doc, task)
        assert not cost.stopped, path
        if cost.layer_pixels > layers:
            layers, at_layers = cost.layer_pixels, path.name
        styles = doc.elements(STYLE_TAG)
        if styles:
            sel = sheet_cost(styles, doc.scan.element_count, task.output.max_depth).steps
            if sel > steps:
                steps, at_steps = sel, path.name
    return parsed, layers, steps, at_layers, at_steps


def _assert_within(name: str, files: list[Path], task: TaskSpec) -> None:
    parsed, layers, steps, at_layers, at_steps = _worst(files, task)
    out = task.output
    print(
        f"\n{name}: {parsed} files; largest {layers} layer-pixels ({at_layers}) vs limit"
        f" {out.max_layer_pixels} (margin {out.max_layer_pixels / max(layers, 1):.1f}x);"
        f" largest {steps} selector-steps ({at_steps}) vs limit {out.max_selector_steps}"
        f" (margin {out.max_selector_steps / max(steps, 1):.0f}x)"
    )
    assert parsed > 0
    assert layers <= out.max_layer_pixels // 4, (at_layers, layers)  # a margin of 4x at least
    assert steps <= out.max_selector_steps // 20, (at_steps, steps)  # a margin of 20x at least


def test_no_sample_or_fixture_of_the_project_goes_over_the_render_cost_limits(
    static_task: TaskSpec,
) -> None:
    _assert_within("project samples and fixtures", _own_files(), static_task)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPORA)
def test_no_file_of_the_real_corpora_goes_over_the_render_cost_limits(
    static_task: TaskSpec, name: str
) -> None:
    files = sorted(corpus_dir(name).rglob("*.svg"))
    _assert_within(name, files, static_task)
