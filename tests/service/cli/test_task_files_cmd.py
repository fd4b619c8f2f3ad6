"""``regua tasks add`` and ``regua tasks variants`` against a running service; REGUA_TASKS_DIR."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from regua.errors import InvalidTaskError, TaskIntegrityError
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

BASE = "pelican-bicycle-static@1"


class Live:
    """A running service (real HTTP on loopback) and an admin token."""

    def __init__(self, url: str, token: str, ctx: ServiceContext) -> None:
        self.url, self.token, self.ctx = url, token, ctx

    def cli(self, *args: str) -> Result:
        """The real CLI, pointed at the service."""
        argv = [*args, "--url", self.url, "--token", self.token]
        return CliRunner().invoke(_app(), argv, env={"COLUMNS": "200"})

    def refs(self) -> list[str]:
        """The refs ``GET /v1/tasks`` lists."""
        with Http(headers={"Authorization": f"Bearer {self.token}"}) as http:
            got = http.get(f"{self.url}/v1/tasks").json()
        return [t["ref"] for t in got["tasks"]]

    def spec(self, ref: str) -> dict[str, object]:
        """The ``spec`` of ``GET /v1/tasks/{ref}``."""
        with Http(headers={"Authorization": f"Bearer {self.token}"}) as http:
            got = http.get(f"{self.url}/v1/tasks/{ref}")
        spec: dict[str, object] = got.json()["spec"]
        return spec


def _app() -> typer.Typer:
    from service.cli import app

    return app


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    ctx = ServiceContext.open(Settings(data_dir=tmp_path / "data"))
    token = create_token(ctx.db, "admin", "admin")[0]
    try:
        with serve_in_thread(create_app(ctx)) as url:
            yield Live(url, token, ctx)
    finally:
        ctx.close()


def test_export_edit_add_then_changed_content_is_refused(live: Live, tmp_path: Path) -> None:
    spec = live.spec(BASE) | {"id": "heron-scooter", "prompt": "A heron riding a scooter."}
    path = tmp_path / "heron.json"
    path.write_text(json.dumps(spec))
    added = live.cli("tasks", "add", str(path))
    assert added.exit_code == 0, added.output
    assert "heron-scooter@1  added" in added.output
    assert "heron-scooter@1" in live.refs()
    assert live.spec("heron-scooter@1") == spec
    submitter = create_token(live.ctx.db, "submitter", "s")[0]
    argv = ["tasks", "add", str(path), "--url", live.url, "--token", submitter]
    denied = CliRunner().invoke(_app(), argv)
    assert denied.exit_code == 1 and "needs an admin token" in denied.output
    assert "regua token create --role admin" in denied.output
    same = live.cli("tasks", "add", str(path))
    assert same.exit_code == 0 and "unchanged (already registered)" in same.output
    path.write_text(yaml.safe_dump(spec | {"prompt": "A stork."}))
    changed = live.cli("tasks", "add", str(path))
    assert changed.exit_code == 1
    assert "HTTP 409" in changed.output and "A changed task is a new version" in changed.output
    assert "registered versions are heron-scooter@1; register it as heron-scooter@2" in (
        changed.output
    )
    assert live.spec("heron-scooter@1")["prompt"] == "A heron riding a scooter."
    # a bad file never reaches the service: field and line named, exit 2
    path.write_text(yaml.safe_dump(spec | {"id": "Bad Id"}, sort_keys=False))
    bad = live.cli("tasks", "add", str(path))
    assert bad.exit_code == 2
    assert f"{path}: invalid task spec" in bad.output and "id (line 1): String should match" in (
        bad.output
    )
    _variants_register(live, tmp_path)


def _variants_register(live: Live, tmp_path: Path) -> None:
    body = live.spec(BASE) | {"id": "{subject}-on-{vehicle}", "family": "birds"}
    template = {
        "template": "birds",
        "dimensions": {"subject": ["heron", "stork"], "vehicle": ["bicycle", "tram"]},
        "spec": body | {"prompt": "Draw a {subject} on a {vehicle}."},
    }
    path = tmp_path / "birds.yaml"
    path.write_text(yaml.safe_dump(template, sort_keys=False))
    out = tmp_path / "variants"
    made = live.cli("tasks", "variants", str(path), "--out", str(out), "--register")
    assert made.exit_code == 0, made.output
    assert "stork-on-tram@1  family birds  subject=stork, vehicle=tram" in made.output
    assert sorted(p.name for p in out.iterdir()) == [
        "heron-on-bicycle-1.yaml",
        "heron-on-tram-1.yaml",
        "stork-on-bicycle-1.yaml",
        "stork-on-tram-1.yaml",
    ]
    assert {"heron-on-bicycle@1", "stork-on-tram@1"} <= set(live.refs())
    shown = live.spec("heron-on-tram@1")
    assert shown["dimensions"] == {"subject": "heron", "vehicle": "tram"}
    assert shown["template"] == "birds" and shown["prompt"] == "Draw a heron on a tram."
    # a written variant file is the frozen version: adding it again is a no-op
    again = live.cli("tasks", "add", str(out / "heron-on-tram-1.yaml"))
    assert again.exit_code == 0 and "unchanged" in again.output


def test_no_service_and_no_token_say_what_to_do(tmp_path: Path, refused_url: str) -> None:
    path = tmp_path / "t.yaml"
    from tasks import bundled_registry

    path.write_text(yaml.safe_dump(bundled_registry().get(BASE).to_wire()))
    url = refused_url
    runner = CliRunner()
    down = runner.invoke(_app(), ["tasks", "add", str(path), "--url", url, "--token", "rg_x"])
    assert down.exit_code == 1
    assert f"no regua service answers at {url}/" in down.output
    assert "Start one with `regua serve`" in down.output
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["tasks", "add", str(path), "--url", url, "--data-dir", str(empty)]
    no_token = runner.invoke(_app(), args, env={"REGUA_TOKEN": None})
    assert no_token.exit_code == 2
    assert "needs an admin token" in no_token.output
    assert "regua token create --role admin" in no_token.output
    missing = runner.invoke(_app(), ["tasks", "add", str(tmp_path / "nope.yaml"), "--url", url])
    assert missing.exit_code == 2 and "nope.yaml: no such file" in missing.output


def test_tasks_dir_is_registered_at_start(tmp_path: Path) -> None:
    from tasks import bundled_registry

    folder = tmp_path / "tasks"
    folder.mkdir()
    spec = bundled_registry().get(BASE).to_wire() | {"id": "from-folder"}
    (folder / "a.yaml").write_text(yaml.safe_dump(spec))
    (folder / "notes.txt").write_text("not a task")
    settings = Settings(data_dir=tmp_path / "data", tasks_dir=folder)
    ctx = ServiceContext.open(settings)
    try:
        assert ctx.registry.get("from-folder@1").id == "from-folder"
    finally:
        ctx.close()
    ctx = ServiceContext.open(settings)  # the same files at the next start: no-op
    ctx.close()
    (folder / "b.yaml").write_text("id: [oops\n")
    with pytest.raises(InvalidTaskError, match=r"b.yaml: not valid YAML/JSON at line 2"):
        ServiceContext.open(settings)
    (folder / "b.yaml").unlink()
    (folder / "a.yaml").write_text(yaml.safe_dump(spec | {"prompt": "changed"}))
    with pytest.raises(TaskIntegrityError, match=r"a.yaml: from-folder@1 is already registered"):
        ServiceContext.open(settings)
