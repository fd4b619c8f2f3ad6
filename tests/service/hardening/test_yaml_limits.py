"""One safe YAML loader for every user file: alias bombs, deep nesting and huge prompt templates.

Was: ``POST /v1/experiments`` with ``prompts: {k0: &s "<100 KB>", k1: *s, ...}`` expanded every
alias and stored the result (a 125 KB body raised server memory by ~800 MB and the database by
390 MB); a ``{prompt}`` template repeated 50,000 times asked for 11.5 MB per case. Now each is
refused with 422 naming the line or field, and nothing is stored.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from judges.profiles import parse_judge_text
from regua.errors import ConfigurationError, ReguaError, TaskError
from regua.safe_yaml import MAX_ALIASES, YamlLimitError, load_yaml
from regua.settings import Settings
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.server import create_app
from service.storage import ExperimentRow, GenerationRow, Run
from tasks.authoring import parse_task
from tasks.bank import load_bank_text
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

ARM = "arms:\n  - {name: a, model: {api: mock, model: m1}, prompt: k0}\n"
HEAD = "id: bomb\nitems: [pelican-bicycle-static]\n" + ARM


def alias_bomb(aliases: int = 1000, size: int = 100_000) -> str:
    """The issue's body: one 100 KB anchored prompt and ``aliases`` aliases of it."""
    lines = [f'  k0: &s "{"x" * size}"'] + [f"  k{i}: *s" for i in range(1, aliases + 1)]
    return HEAD + "prompts:\n" + "\n".join(lines) + "\n"


def laughs(levels: int = 30) -> str:
    """Billion laughs: each level is two aliases of the one before (few aliases, 2^30 leaves)."""
    lines = ['l0: &l0 ["lol"]']
    lines += [f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Any]]:
    """One service for the module (SQLite, no rendering) and a submitter's client."""
    tmp = tmp_path_factory.mktemp("yaml")
    settings = Settings(data_dir=tmp / "data", database_url=f"sqlite:///{tmp / 'r.sqlite3'}")
    ctx = ServiceContext.open(settings)
    token = create_token(ctx.db, "submitter", "s")[0]
    try:
        with (
            serve_in_thread(create_app(ctx)) as url,
            Http(base_url=url, timeout=120, headers={"Authorization": f"Bearer {token}"}) as client,
        ):
            yield client, ctx
    finally:
        ctx.close()


def stored(ctx: ServiceContext) -> tuple[int, int, int]:
    """Experiments, generations and runs stored."""
    with ctx.db.read() as s:
        experiments, generations, runs = (
            int(s.scalar(select(func.count()).select_from(t)) or 0)
            for t in (ExperimentRow, GenerationRow, Run)
        )
        return experiments, generations, runs


def test_the_alias_bomb_is_refused_with_its_line_and_nothing_stored(
    served: tuple[httpx.Client, ServiceContext],
) -> None:
    client, ctx = served
    body = alias_bomb()
    assert 100_000 < len(body) < 200_000  # the issue's ~125 KB body
    before = stored(ctx)
    tracemalloc.start()
    try:
        got = client.post("/v1/experiments", json={"file": body})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.status_code == 422, got.text[:300]
    detail = got.json()["detail"]
    # what the submitter sees: the field, the limit and the line of the first alias too many
    assert detail.startswith(f"file: not valid YAML: more than {MAX_ALIASES} aliases (*s)")
    assert f"line {MAX_ALIASES + 7}" in detail
    assert stored(ctx) == before  # nothing stored
    assert peak < 50_000_000, f"the refused request allocated {peak} bytes at its peak"


def test_few_aliases_expanding_past_the_limit_are_refused(
    served: tuple[httpx.Client, ServiceContext],
) -> None:
    client, ctx = served
    before = stored(ctx)
    got = client.post("/v1/experiments", json={"file": HEAD + laughs()})
    assert got.status_code == 422
    assert "its aliases expand it to" in got.json()["detail"]
    assert stored(ctx) == before


def test_a_prompt_template_repeating_the_prompt_is_refused_per_case(
    served: tuple[httpx.Client, ServiceContext],
) -> None:
    client, ctx = served
    before = stored(ctx)
    doc = {
        "id": "amp",
        "items": ["pelican-bicycle-static"],
        "arms": [{"name": "a", "model": {"api": "mock", "model": "m"}, "prompt": "k"}],
        "prompts": {"k": "{prompt}" * 5_000},
    }
    got = client.post("/v1/experiments", json={"experiment": doc})
    assert got.status_code == 422, got.text[:300]
    assert (
        got.json()["detail"].startswith("arms.0 (a): prompt 'k' expands to ")
        and "for pelican-bicycle-static@1 (at most 50000 per case)" in got.json()["detail"]
    )
    doc["prompts"] = {"k": "{prompt}" * 50_000}  # the template: over the file limit too
    got = client.post("/v1/experiments", json={"experiment": doc})
    assert got.status_code == 422
    assert "experiment: prompts.k: text of 400000 characters (at most 50000)" in got.text
    assert stored(ctx) == before
    doc["prompts"] = {"k": "{prompt}\nReply with the SVG only."}  # an ordinary template passes
    assert client.post("/v1/experiments", json={"experiment": doc}).status_code == 202


def test_deep_nesting_is_refused_with_its_line() -> None:
    with pytest.raises(YamlLimitError) as caught:
        load_yaml("a:\n  b: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested more than 64 deep" in str(caught.value) and "line 2" in str(caught.value)


@pytest.mark.parametrize(
    ("loader", "error"),
    [
        (lambda text: parse_task(text, "t.yaml"), TaskError),
        (lambda text: load_bank_text(text, "b.yaml"), TaskError),
        (lambda text: parse_judge_text(text, "j.yaml"), ConfigurationError),
    ],
    ids=["task", "bank", "judge"],
)
def test_every_user_file_goes_through_the_safe_loader(
    loader: Callable[[str], object], error: type[ReguaError]
) -> None:
    with pytest.raises(error) as caught:
        loader(laughs())
    assert "its aliases expand it to" in str(caught.value)
    with pytest.raises(error) as caught:
        loader(alias_bomb(aliases=100, size=10))
    assert f"more than {MAX_ALIASES} aliases" in str(caught.value)


def test_cli_names_the_file_and_the_line(tmp_path: Path) -> None:
    bomb = tmp_path / "exp.yaml"
    bomb.write_text(alias_bomb(aliases=100, size=10))
    res = CliRunner().invoke(app, ["experiment", "run", str(bomb), "--data-dir", str(tmp_path)])
    assert res.exit_code == 2
    assert f"{bomb}: not valid YAML: more than {MAX_ALIASES} aliases (*s)" in res.output
    assert f"line {MAX_ALIASES + 7}" in res.output
    assert not (tmp_path / "regua.sqlite3").exists()
