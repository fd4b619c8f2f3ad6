"""Issue 16 part 5: the reference-drawing check renders in the real sandbox pool and judges."""

from __future__ import annotations

from pathlib import Path

from judges.perturbation.declared_recipes import declared_recipes
from judges.perturbation.generate import perturb
from sandbox import WorkerPool
from service.pipeline.reference_check import ReferenceDrawing
from tasks import load_task_file
from tasks.acceptance import AcceptanceSubject

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
TASK_TEXT = (FIXTURES / "flamingo-unicycle-structured-1.yaml").read_text()
REFERENCE = (FIXTURES / "flamingo-unicycle-reference.svg").read_text()


def test_reference_passes_and_a_foot_off_the_pedal_fails(render_pool: WorkerPool) -> None:
    check = ReferenceDrawing(pool=render_pool)
    ok = check.run(AcceptanceSubject.from_text(TASK_TEXT, "f.yaml", REFERENCE))
    assert (ok.status, ok.reason) == (
        "pass",
        "the reference drawing passes F1, B1, B2, R1, R2; "
        "not checked here (needs a recognising judge): P1",
    )
    task = load_task_file(FIXTURES / "flamingo-unicycle-structured-1.yaml")
    recipe = declared_recipes(task)["R2"]
    lifted = perturb(REFERENCE, recipe.perturbation_id, task=task, params=recipe.params)
    bad = check.run(AcceptanceSubject.from_text(TASK_TEXT, "f.yaml", lifted.svg.decode()))
    assert bad.status == "fail"
    assert bad.reason.startswith("R2 fail: foot-left-pedal-left gap")


def test_static_failure_and_missing_drawing_are_reported(render_pool: WorkerPool) -> None:
    check = ReferenceDrawing(pool=render_pool)
    scripted = REFERENCE.replace("</svg>", "<script>alert(1)</script></svg>")
    bad = check.run(AcceptanceSubject.from_text(TASK_TEXT, "f.yaml", scripted))
    assert bad.status == "fail" and bad.reason.startswith("static checks fail:")
    assert "script" in bad.reason
    none = check.run(AcceptanceSubject.from_text(TASK_TEXT, "f.yaml"))
    assert (none.status, none.reason) == ("skip", "no reference drawing given (--reference SVG)")
