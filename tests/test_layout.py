"""Guards of the project's shape (each would catch a change that no other test notices):
small modules, small functions, typed stage boundaries, and no module-level import cycle."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
SOURCE_FOLDERS = (
    "regua",
    "tasks",
    "checks",
    "sandbox",
    "render",
    "judges",
    "service",
    "tests",
    "benchmarks",
    "scripts",
)


def _python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        REPO_ROOT / f
        for f in listed
        if f.split("/")[0] in SOURCE_FOLDERS and (REPO_ROOT / f).exists()
    ]


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(REPO_ROOT)): n
        for p in _python_files()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    }
    assert long == {}, f"modules past {MAX_FILE_LINES} lines: {long}"


def test_no_function_is_over_60_lines_outside_migrations() -> None:
    long: dict[str, int] = {}
    for path in _python_files():
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}"] = size
    assert long == {}, f"functions past {MAX_FUNCTION_LINES} lines: {long}"


def test_stage_boundaries_carry_typed_data() -> None:
    """The pipeline and the evaluation pass typed values between stages, not loose dicts."""
    loose = [
        f"{p.relative_to(REPO_ROOT)}:{i}"
        for folder in ("service/pipeline", "service/evaluation")
        for p in sorted((REPO_ROOT / folder).rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "dict[str, Any]" in line
    ]
    assert loose == []


def test_no_import_cycle_among_project_modules() -> None:
    import grimp

    graph = grimp.build_graph(
        *("regua", "tasks", "checks", "sandbox", "render", "judges", "service"), cache_dir=None
    )
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(imported, module):
                cycles.append((module, imported))
    assert cycles == [], f"import cycles: {cycles[:10]}"
