"""Static checks of docker/: no Docker engine runs here, so the files are parsed and asserted."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"
HARDENED = ("service", "worker", "renderer", "postgres", "minio", "minio-init")


def compose() -> dict[str, Any]:
    data = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def dockerfile(name: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (DOCKER / name).read_text().replace("\\\n", " ")
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in lines]


def test_compose_has_service_worker_renderer_and_postgres() -> None:
    services = compose()["services"]
    assert set(HARDENED) <= set(services)
    assert "postgres" in services["postgres"]["image"]
    assert services["worker"]["command"][0] == "worker"
    assert services["service"]["command"][0] == "serve"


@pytest.mark.parametrize("name", HARDENED)
def test_every_container_is_hardened(name: str) -> None:
    service = compose()["services"][name]
    assert service["read_only"] is True
    assert service["cap_drop"] == ["ALL"]
    assert not service.get("cap_add")
    assert "no-new-privileges:true" in service["security_opt"]
    assert not any("unconfined" in opt for opt in service["security_opt"])
    assert service.get("privileged") is not True
    user = str(service["user"]).split(":")[0]
    assert user not in ("0", "root") and int(user) > 0


def test_renderer_has_no_network_and_bounded_resources() -> None:
    services = compose()["services"]
    renderer = services["renderer"]
    assert renderer["network_mode"] == "none"
    assert "networks" not in renderer and "ports" not in renderer
    assert renderer["mem_limit"] and renderer["pids_limit"] > 0
    assert any(opt.startswith("seccomp=") for opt in renderer["security_opt"])
    assert "render-socket:/run/regua" in renderer["volumes"]
    # only the renderer's socket is shared: no data, database or secret volume reaches it
    assert renderer["volumes"] == ["render-socket:/run/regua"]
    assert "environment" not in renderer
    for name in ("service", "worker"):
        env = services[name]["environment"]
        assert env["REGUA_SANDBOX_BACKEND"] == "socket"
        assert "render-socket:/run/regua" in services[name]["volumes"]


def test_database_is_on_an_internal_network_only() -> None:
    data = compose()
    assert data["networks"]["db"]["internal"] is True
    assert data["services"]["postgres"]["networks"] == ["db"]
    assert "ports" not in data["services"]["postgres"]


@pytest.mark.parametrize("name", ["renderer.Dockerfile", "service.Dockerfile", "minio.Dockerfile"])
def test_dockerfiles_run_as_non_root(name: str) -> None:
    instructions = dockerfile(name)
    users = [args for op, args in instructions if op == "USER"]
    assert users, f"{name} has no USER"
    last_user = users[-1].split(":")[0]
    assert last_user not in ("0", "root")
    assert instructions.index(("USER", users[-1])) > max(
        i for i, (op, _) in enumerate(instructions) if op == "RUN"
    ), "USER must come after the last RUN"
    assert instructions[0][0] == "FROM"
    if name != "minio.Dockerfile":  # our images are Debian's; MinIO's is upstream's
        assert "bookworm" in instructions[0][1]


def test_renderer_uses_debian_chromium_and_the_bridge() -> None:
    instructions = dockerfile("renderer.Dockerfile")
    runs = " ".join(args for op, args in instructions if op == "RUN")
    assert "apt-get install" in runs and " chromium " in f" {runs} "
    assert "playwright install" not in runs
    env = " ".join(args for op, args in instructions if op == "ENV")
    assert "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1" in env
    entry = next(args for op, args in instructions if op == "ENTRYPOINT")
    argv = json.loads(entry)
    assert argv[:3] == ["python", "-m", "sandbox.socket_bridge"]
    assert "render.worker:create_handler" in argv
    assert "--no-sandbox" not in shlex.join(argv)


def test_seccomp_helper_only_adds_chromium_sandbox_calls() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mk", DOCKER / "make_seccomp_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    base = {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "a"}]}
    derived = module.derive(base)
    assert derived["defaultAction"] == "SCMP_ACT_ERRNO"
    assert derived["syscalls"][0] == base["syscalls"][0]
    assert derived["syscalls"][-1]["names"] == ["clone", "unshare", "setns", "chroot"]


def test_readme_explains_running_elsewhere() -> None:
    text = (DOCKER / "README.md").read_text()
    assert "docker compose" in text and "seccomp-chromium.json" in text


def test_service_and_worker_keep_artifacts_in_minio() -> None:
    data = compose()
    services = data["services"]
    bucket_url = services["service"]["environment"]["REGUA_ARTIFACTS_URL"]
    assert bucket_url.startswith("s3://")
    for name in ("service", "worker"):
        env = services[name]["environment"]
        assert env["REGUA_ARTIFACTS_URL"] == bucket_url
        assert env["REGUA_S3_ENDPOINT_URL"] == "http://minio:9000"
        assert env["REGUA_DATABASE_URL"].split("@")[1].startswith("postgres:5432/")
        # credentials come from the operator's environment, never written in the file
        assert env["AWS_SECRET_ACCESS_KEY"].startswith("${") and "?" in env["AWS_SECRET_ACCESS_KEY"]
        assert "storage" in services[name]["networks"]
        deps = services[name]["depends_on"]
        assert deps["minio-init"]["condition"] == "service_completed_successfully"
    assert services["worker"]["image"] == services["service"]["image"]
    assert services["worker"]["command"][0] == "worker"
    # MinIO sits on an internal network only, with no published port; its data on a volume
    assert data["networks"]["storage"]["internal"] is True
    for name in ("minio", "minio-init"):
        assert services[name]["networks"] == ["storage"] and "ports" not in services[name]
    assert "s3data:/data" in services["minio"]["volumes"]
    assert services["minio"]["environment"]["MINIO_ROOT_PASSWORD"].startswith("${")
    assert "curl" in services["minio"]["healthcheck"]["test"]


def test_minio_init_creates_the_bucket_once_minio_is_healthy() -> None:
    services = compose()["services"]
    init = services["minio-init"]
    bucket = services["worker"]["environment"]["REGUA_ARTIFACTS_URL"].split("/")[2]
    script = " ".join(init["command"])
    assert f"mc mb --ignore-existing local/{bucket}" in script
    assert "mc admin user add" in script  # the services get their own key, not MinIO's root
    assert init["depends_on"]["minio"]["condition"] == "service_healthy"
    assert init["restart"] == "no"
    assert "AWS_SECRET_ACCESS_KEY" not in init["environment"]
