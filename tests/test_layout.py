"""Guards of the project's shape (each would catch a change that no other test notices):
small modules, small functions, typed stage boundaries, and no module-level import cycle."""

from __future__ import annotations

import ast
import re
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


LOOSE_DICTS = ("dict[str, Any]", "dict[str, object]")
STAGE_FOLDERS = ("service/pipeline", "service/evaluation")
"""Where pipeline stages and the evaluation hand values to each other."""
VIEW_MODULES = (
    "regua/views/pairwise.py",
    "regua/views/runs.py",
    "regua/views/submissions.py",
    "service/api/schemas.py",
    "service/reports/leaks.py",
    "service/reports/runs.py",
    "service/reports/votes.py",
    "service/review/actions.py",
    "service/review/payloads.py",
    "service/review/views.py",
    "service/web/data.py",
    "service/web/rows.py",
)
"""The run view and its parts, the reviewer's payloads and the pages' rows."""


def _loose_lines(paths: list[Path]) -> list[str]:
    return [
        f"{p.relative_to(REPO_ROOT)}:{i}"
        for p in paths
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if any(loose in line for loose in LOOSE_DICTS)
    ]


def test_stage_boundaries_carry_typed_data() -> None:
    """The pipeline and the evaluation pass typed values between stages, not loose dicts."""
    paths = [p for folder in STAGE_FOLDERS for p in sorted((REPO_ROOT / folder).rglob("*.py"))]
    assert paths and _loose_lines(paths) == []


def test_views_are_typed_read_models() -> None:
    """The run view, the reviewer's payloads and the pages' rows are declared models.

    Free JSON (a stage's detail, an artifact's metadata) is typed as JSON, never as a loose dict.
    """
    paths = [REPO_ROOT / m for m in VIEW_MODULES]
    assert all(p.exists() for p in paths), [str(p) for p in paths if not p.exists()]
    assert _loose_lines(paths) == []


def test_no_response_model_accepts_undeclared_fields() -> None:
    """A response field is declared before it is sent (no ``extra="allow"`` on the run view)."""
    allowing = [
        f"{p.relative_to(REPO_ROOT)}:{i}"
        for p in (REPO_ROOT / m for m in VIEW_MODULES)
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if 'extra="allow"' in line
    ]
    assert allowing == []


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


PACKAGES = ("regua", "tasks", "checks", "sandbox", "render", "judges", "service")
ISSUE_MENTION = re.compile(r"\bissue ?#?\d+", re.IGNORECASE)


def _package_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *PACKAGES],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO_ROOT / f for f in listed if (REPO_ROOT / f).suffix in TEXT_SUFFIXES]


TEXT_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".html", ".j2", ".css", ".js", ".md", ".txt"}


def test_packages_keep_history_in_the_changelog() -> None:
    """Code states its rule; which issue brought it is the changelog's business."""
    mentions = [
        f"{p.relative_to(REPO_ROOT)}:{i}"
        for p in _package_files()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE_MENTION.search(line) and "procrastinate issues" not in line
    ]
    assert mentions == []


def test_package_docstrings_say_what_the_package_owns() -> None:
    """A package's docstring is more than its folder's name."""
    bare = []
    for init in sorted(p for folder in PACKAGES for p in (REPO_ROOT / folder).rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        folder = init.parent.relative_to(REPO_ROOT).as_posix()
        words = {folder, folder.replace("/", "."), f"regua: {init.parent.name}"}
        if "migrations" not in init.parts and doc.strip().rstrip(".") in words | {""}:
            bare.append(folder)
    assert bare == []


def test_every_http_client_of_the_tests_names_its_timeout() -> None:
    """httpx's default timeout is 5 s: on a loaded machine an in-thread server answers later than
    that, and the test fails for the machine's sake. Every client a test makes says how long it
    waits (a deadline that only bounds a hang)."""
    unnamed: list[str] = []
    for path in _python_files():
        if path.relative_to(REPO_ROOT).parts[0] != "tests":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("Client", "AsyncClient")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "httpx"
                and not any(k.arg == "timeout" for k in node.keywords)
            ):
                unnamed.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert unnamed == [], f"httpx clients without a timeout: {unnamed}"


def test_every_browser_page_of_the_tests_is_patient() -> None:
    """Playwright's 30 s defaults are deadlines a page misses on a loaded machine: every page
    or context a test opens goes through ``tests.helpers.browser.patient``."""
    impatient: list[str] = []
    for path in _python_files():
        if path.relative_to(REPO_ROOT).parts[0] != "tests":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrapped = {
            id(arg)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "patient"
            for arg in node.args
        }
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("new_page", "new_context")
            ):
                continue
            receiver = node.func.value  # a page of a (patient) context inherits its deadlines
            name = receiver.id if isinstance(receiver, ast.Name) else ""
            name = receiver.attr if isinstance(receiver, ast.Attribute) else name
            if id(node) not in wrapped and "context" not in name:
                impatient.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert impatient == [], f"pages or contexts without patient(): {impatient}"
