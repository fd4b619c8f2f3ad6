"""Fixtures shared by every test area. Area fixtures live in tests/<area>/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.render_pool"]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPORA = REPO_ROOT.parent / "shared" / "corpora"
SAMPLES = REPO_ROOT / "samples"


def corpus_dir(name: str) -> Path:
    """Path of ``../shared/corpora/<name>``; skips the test with a clear reason when absent."""
    path = SHARED_CORPORA / name
    if not path.is_dir():
        pytest.skip(
            f"external corpus {name!r} not found at {path} (../shared is absent in this checkout; "
            "CI provides it)"
        )
    return path


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """The project's own bundled sample outputs."""
    return SAMPLES
