"""Tokens: keyed hashes, revocation and expiry that bite at once, a list that shows no secret."""

from __future__ import annotations

import hashlib
import hmac
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from regua.errors import AuthError
from regua.settings import Settings
from service.access.secret import bind_secret, installation_secret
from service.access.tokens import KEYED, LEGACY, principal_of
from service.cli import app
from service.storage import ApiToken, Database
from tests.helpers.web import Site, web_login


def _new_token(site: Site, role: str, **extra: str) -> dict[str, str]:
    r = site.client("admin").post("/v1/tokens", json={"role": role, "name": "t", **extra})
    assert r.status_code == 201, r.text
    made: dict[str, str] = r.json()
    return made


def test_revoked_token_is_refused_at_once(site: Site) -> None:
    made = _new_token(site, "submitter")
    user = site.client()
    user.headers["Authorization"] = f"Bearer {made['token']}"
    assert user.get("/v1/runs").status_code == 200  # used once: any cache would now hold it
    r = site.client("admin").delete(f"/v1/tokens/{made['id']}")
    assert r.status_code == 200 and r.json()["state"] == "revoked"
    refused = user.get("/v1/runs")
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    again = site.client("admin").delete(f"/v1/tokens/{made['id']}")
    assert again.status_code == 200 and again.json()["revoked_at"] == r.json()["revoked_at"]
    assert site.client("admin").delete("/v1/tokens/999999").status_code == 404
    assert site.client("alice").delete(f"/v1/tokens/{site.ids['bob']}").status_code == 403
    assert site.client("bob").get("/v1/runs").status_code == 200  # bob's token untouched


def test_revoking_a_token_ends_its_web_sessions(site: Site) -> None:
    browser = site.client()
    web_login(browser, site.tokens["reviewer"])
    assert browser.get("/review").url.path == "/review"
    site.client("admin").delete(f"/v1/tokens/{site.ids['reviewer']}")
    assert browser.get("/review").url.path == "/login"


def _lifetime_token(site: Site, lifetime: str) -> tuple[dict[str, str], datetime, datetime]:
    """A submitter token of ``lifetime`` and the clock just before and after it was made."""
    before = datetime.now(UTC).replace(microsecond=0)
    made = _new_token(site, "submitter", expires_in=lifetime)
    after = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    return made, before, after


def test_token_with_a_lifetime_expires(site: Site) -> None:
    # the expiry is the moment of creation plus the lifetime, bounded by the clock read before
    # and after the request (not by how long the request took on a loaded machine)
    lasting, before, after = _lifetime_token(site, "1h")
    expires = datetime.fromisoformat(str(lasting["expires_at"]))
    assert before + timedelta(hours=1) <= expires <= after + timedelta(hours=1)
    user = site.client()
    user.headers["Authorization"] = f"Bearer {lasting['token']}"
    assert user.get("/v1/runs").status_code == 200

    made, before, after = _lifetime_token(site, "2s")
    expires = datetime.fromisoformat(str(made["expires_at"]))
    assert before + timedelta(seconds=2) <= expires <= after + timedelta(seconds=2)
    user.headers["Authorization"] = f"Bearer {made['token']}"
    time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 0.3)
    r = user.get("/v1/runs")
    assert r.status_code == 401 and "expired" in r.json()["detail"]
    states = {t["id"]: t["state"] for t in site.client("admin").get("/v1/tokens").json()["tokens"]}
    assert states[made["id"]] == "expired" and states[lasting["id"]] == "active"
    bad = site.client("admin").post("/v1/tokens", json={"role": "submitter", "expires_in": "soon"})
    assert bad.status_code == 422


def test_token_list_shows_states_but_never_a_secret_or_hash(site: Site) -> None:
    site.client("admin").delete(f"/v1/tokens/{site.ids['bob']}")
    r = site.client("admin").get("/v1/tokens")
    assert r.status_code == 200
    lines = {t["name"]: t for t in r.json()["tokens"]}
    assert lines["bob"]["state"] == "revoked" and lines["alice"]["state"] == "active"
    assert lines["alice"]["prefix"] == site.tokens["alice"][:10] + "…"
    with site.ctx.db.read() as s:
        hashes = list(s.scalars(select(ApiToken.token_hash)))
    for secret in [*site.tokens.values(), *hashes]:
        assert secret not in r.text
    assert site.client("reviewer").get("/v1/tokens").status_code == 403


def test_stored_hash_is_keyed_with_the_installation_secret(site: Site) -> None:
    """A copy of the database alone cannot confirm a guessed token: the hash is an HMAC."""
    token = site.tokens["alice"]
    secret = installation_secret(site.ctx.settings)
    with site.ctx.db.read() as s:
        row = s.get(ApiToken, site.ids["alice"])
        assert row is not None
        stored, scheme = row.token_hash, row.hash_scheme
    assert scheme == KEYED
    assert stored != hashlib.sha256(token.encode()).hexdigest()
    assert stored == hmac.new(secret, b"token\x1f" + token.encode(), hashlib.sha256).hexdigest()
    copy = Database(site.ctx.settings.resolved_database_url())  # same rows, another secret
    bind_secret(copy, b"\x01" * 32)
    try:
        with pytest.raises(AuthError):
            principal_of(copy, token)
    finally:
        copy.dispose()


def test_a_legacy_sha256_row_works_once_and_is_rehashed(site: Site) -> None:
    """Rows from before the keyed hash (migration 0400 marks them ``sha256``) keep working."""
    legacy_secret = "rg_legacy-token-from-an-old-installation"
    with site.ctx.db.write() as s:
        row = ApiToken(
            name="old",
            role="submitter",
            token_hash=hashlib.sha256(legacy_secret.encode()).hexdigest(),
            hash_scheme=LEGACY,
            prefix=legacy_secret[:10],
        )
        s.add(row)
        s.flush()
        row_id = row.id
    r = site.client().get("/v1/runs", headers={"Authorization": f"Bearer {legacy_secret}"})
    assert r.status_code == 200
    with site.ctx.db.read() as s:
        after = s.get(ApiToken, row_id)
        assert after is not None and after.hash_scheme == KEYED
        assert after.token_hash != hashlib.sha256(legacy_secret.encode()).hexdigest()
    r = site.client().get("/v1/runs", headers={"Authorization": f"Bearer {legacy_secret}"})
    assert r.status_code == 200


def test_cli_token_create_list_revoke_bite_on_a_running_server(site: Site) -> None:
    """``regua token …`` works on the database directly; the server sees a revocation at once
    (it reads the token's row on every request, in every process)."""
    settings: Settings = site.ctx.settings
    env = {"REGUA_DATABASE_URL": settings.resolved_database_url(), "COLUMNS": "200"}
    args = ["--data-dir", str(settings.data_dir)]
    runner = CliRunner()
    made = runner.invoke(
        app,
        ["token", "create", "--role", "submitter", "--name", "carol", "--expires-in", "7d", *args],
        env=env,
    )
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip().splitlines()[0]
    user = site.client()
    user.headers["Authorization"] = f"Bearer {secret}"
    assert user.get("/v1/runs").status_code == 200
    listed = runner.invoke(app, ["token", "list", *args], env=env)
    assert listed.exit_code == 0, listed.output
    line = next(x for x in listed.stdout.splitlines() if x.endswith(" carol"))
    assert "active" in line and secret not in listed.stdout
    token_id = line.split()[0]
    revoked = runner.invoke(app, ["token", "revoke", token_id, *args], env=env)
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    assert user.get("/v1/runs").status_code == 401
    listed = runner.invoke(app, ["token", "list", *args], env=env)
    assert "revoked" in next(x for x in listed.stdout.splitlines() if x.endswith(" carol"))
    unknown = runner.invoke(app, ["token", "revoke", "99999", *args], env=env)
    assert unknown.exit_code == 2 and "no token" in unknown.output
    bad = runner.invoke(
        app, ["token", "create", "--role", "submitter", "--expires-in", "x", *args], env=env
    )
    assert bad.exit_code == 2
