"""Bundles without rendering: who exports what over HTTP, reserved tasks, conflicting versions.

Runs are seeded as the pipeline stores them (:mod:`tests.helpers.review_runs`), on a live
server (:mod:`tests.helpers.web`).
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from regua.errors import InputError, TaskIntegrityError
from regua.settings import Settings
from service.bundles.archive import pack, unpack
from service.bundles.restore import restore
from service.cli import app
from service.context import ServiceContext
from service.storage import GateDecisionRow, Run, TaskRow
from tasks import TaskSpec
from tests.helpers.gallery import seed_gallery
from tests.helpers.review_runs import TASK_REF
from tests.helpers.runs import grant
from tests.helpers.web import Site, seeded_site
from tests.service.pools.world import reserved_spec


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """Seven seeded runs of the structured task (five of them alice's) on a live server."""
    with seeded_site(Settings(data_dir=tmp_path / "data")) as found:
        seed_gallery(found)
        yield found


def _manifest(data: bytes) -> dict[str, object]:
    return unpack(data).manifest


def test_exports_follow_the_run_rules(site: Site) -> None:
    admin = site.client("admin").get("/v1/exports", params={"task": TASK_REF})
    assert admin.status_code == 200 and admin.headers["content-type"] == "application/gzip"
    assert admin.headers["content-disposition"].endswith('.tar.gz"')
    every = _manifest(admin.content)
    assert isinstance(every["runs"], list) and len(every["runs"]) == 7
    own = _manifest(site.client("alice").get("/v1/exports", params={"task": TASK_REF}).content)
    assert isinstance(own["runs"], list) and len(own["runs"]) == 6  # runpassed is nobody's
    only = site.client("alice").get(
        "/v1/exports", params={"task": "pelican-bicycle-structured", "model": "gamma-model"}
    )
    assert _manifest(only.content)["runs"] == ["g1"]
    assert site.client("reviewer").get("/v1/exports", params={"task": TASK_REF}).status_code == 403
    missing = site.client("admin").get("/v1/exports", params={"task": "no-such-task@1"})
    assert missing.status_code == 404


def test_a_reserved_task_leaves_only_with_admin_and_include_reserved(
    site: Site, tmp_path: Path
) -> None:
    spec = reserved_spec()
    with site.ctx.db.write() as s:
        s.add(
            TaskRow(
                ref=spec.ref,
                task_id=spec.id,
                version=spec.version,
                content_hash=spec.content_hash(),
                spec=spec.to_wire(),
            )
        )
    asked = {"task": spec.ref}
    assert site.client("alice").get("/v1/exports", params=asked).status_code == 403
    refused = site.client("admin").get("/v1/exports", params=asked)
    assert refused.status_code == 403 and "include_reserved" in refused.text
    allowed = site.client("admin").get("/v1/exports", params={**asked, "include_reserved": True})
    assert allowed.status_code == 200
    assert _manifest(allowed.content)["include_reserved"] is True
    env = {"REGUA_DATA_DIR": str(site.ctx.settings.data_dir)}
    args = ["export", "--task", spec.ref, "--out", str(tmp_path / "r.tar.gz")]
    got = CliRunner().invoke(app, args, env=env)
    assert got.exit_code == 2 and "--include-reserved" in got.output, got.output
    assert not (tmp_path / "r.tar.gz").exists()
    got = CliRunner().invoke(app, [*args, "--include-reserved"], env=env)
    assert got.exit_code == 0 and "exported 0 runs" in got.output, got.output


def test_a_bundle_whose_task_version_conflicts_is_refused(site: Site, tmp_path: Path) -> None:
    grant(site.ctx.db, ("geometry@1",))  # gate decisions travel with the runs
    data = site.client("admin").get("/v1/exports", params={"task": TASK_REF}).content
    contents = unpack(data)
    row = contents.tables["tasks"][0]
    changed = {**row["spec"], "title": "another title under the same version"}
    spec = TaskSpec.model_validate(changed)
    contents.tables["tasks"][0] = {
        **row,
        "spec": spec.to_wire(),
        "content_hash": spec.content_hash(),
    }
    meta = {k: v for k, v in contents.manifest.items() if k not in ("files", "rows")}
    forged = unpack(pack(meta, contents.tables, contents.artifacts))  # a well-formed bundle
    target = ServiceContext.open(Settings(data_dir=tmp_path / "target"))
    try:
        with pytest.raises(TaskIntegrityError, match="registered here with other content"):
            restore(target.db, target.blobs, target.registry, forged)
        with target.db.read() as s:
            assert s.scalar(select(func.count(Run.id))) == 0
        # the genuine bundle imports, twice without a change
        first = restore(target.db, target.blobs, target.registry, unpack(data))
        again = restore(target.db, target.blobs, target.registry, unpack(data))
        assert len(first.runs) == 7 and again.runs == [] and len(again.already) == 7
        assert sum(again.rows.values()) == 0 and again.artifacts_stored == 0
        with target.db.read() as s:
            gate = s.scalars(select(GateDecisionRow)).all()
        assert first.rows["gate_decisions"] == len(gate) > 0
        assert {g.profile_id for g in gate} == {"geometry@1"} and all(g.passed for g in gate)
    finally:
        target.close()


def test_the_bundle_lists_every_file_with_its_sha256(site: Site) -> None:
    data = site.client("admin").get("/v1/exports", params={"task": TASK_REF}).content
    manifest = _manifest(data)
    files = manifest["files"]
    assert isinstance(files, dict)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = {m.name for m in tar.getmembers()}
    assert names == {"manifest.json", *files}
    assert {"regua_version", "schema_revision", "task_versions"} <= set(manifest)
    assert sum(1 for f in files if f.startswith("artifacts/")) >= 8  # frames, replies, logs


def test_a_bundle_from_a_newer_schema_is_refused(site: Site, tmp_path: Path) -> None:
    contents = unpack(site.client("admin").get("/v1/exports", params={"task": TASK_REF}).content)
    contents.tables["runs"][0]["column_of_the_future"] = "kept somewhere"
    meta = {k: v for k, v in contents.manifest.items() if k not in ("files", "rows")}
    newer = unpack(pack(meta, contents.tables, contents.artifacts))
    target = ServiceContext.open(Settings(data_dir=tmp_path / "target"))
    try:
        with pytest.raises(InputError, match="column_of_the_future"):
            restore(target.db, target.blobs, target.registry, newer)
        with target.db.read() as s:
            assert s.scalar(select(func.count(Run.id))) == 0
    finally:
        target.close()
