"""Fixtures of the access tests: a seeded site on a live HTTP server, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from regua.settings import Settings
from tests.helpers.web import Site, seeded_site


@pytest.fixture
def site(tmp_path: Path, database_url: str) -> Iterator[Site]:
    """See :func:`tests.helpers.web.seeded_site` (the parametrised database, audit rate 1)."""
    settings = Settings(
        data_dir=tmp_path / "data", database_url=database_url, review_audit_rate=1.0
    )
    with seeded_site(settings) as found:
        yield found
