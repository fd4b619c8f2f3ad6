"""Fixtures of the page tests that need no rendering: a seeded site on a live HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from regua.settings import Settings
from tests.helpers.web import Site, seeded_site


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """See :func:`tests.helpers.web.seeded_site` (SQLite in a temp data folder, audit rate 1)."""
    settings = Settings(
        data_dir=tmp_path / "data",
        review_audit_rate=1.0,
        web_origins=["https://regua.example"],
    )
    with seeded_site(settings) as found:
        yield found
