"""A service context on SQLite with fast retries, and a scripted fake model API on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from regua.llm.testing import ScriptedServer, scripted_server
from regua.settings import Settings
from service.context import ServiceContext


@pytest.fixture
def gen_settings(tmp_path: Path) -> Settings:
    """SQLite in a temp folder; three attempts 10 ms apart (no browser is started)."""
    return Settings(
        data_dir=tmp_path / "data",
        generation_max_attempts=3,
        generation_backoff_s=0.01,
        render_workers=1,
    )


@pytest.fixture
def gen_ctx(gen_settings: Settings) -> Iterator[ServiceContext]:
    """A service context without an executor (tests drain runs themselves when they need to)."""
    context = ServiceContext.open(gen_settings)
    yield context
    context.close()


@pytest.fixture
def llm() -> Iterator[ScriptedServer]:
    """The fake OpenAI / Anthropic server (scripted replies, recorded requests)."""
    with scripted_server() as state:
        yield state
