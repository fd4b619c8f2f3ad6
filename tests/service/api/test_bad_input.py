"""Issue 14 item 13: bad input over real HTTP is a documented ``{error, detail}`` answer, never 500.

Each body is sent as raw bytes (``content=``) so the JSON escapes, invalid UTF-8, ``NaN`` and
chunked transfer reach the server exactly as written; nothing refused may be stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sqlalchemy import update
from sqlalchemy.exc import DBAPIError

from regua.errors import InputError
from service.context import ServiceContext
from service.pipeline.submit import Submission
from service.server import create_app
from service.storage import Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.service.api.store_counts import GOOD, TASK, stored
from tests.service.conftest import Api

JSON = {"content-type": "application/json"}


def _raw(api: Api, content: bytes, path: str = "/v1/runs") -> dict[str, object]:
    r = api.client.post(path, content=content, headers={**api.h("submitter"), **JSON})
    body = r.json()
    assert set(body) >= {"error", "detail"}, body
    return {"status": r.status_code, **body}


def _doc(output: str = '"<svg/>"', params: str = "{}") -> bytes:
    """A run request with ``output`` and ``model.params`` spliced in as raw JSON text."""
    return (
        f'{{"task": "{TASK}", "model": {{"label": "m", "params": {params}}}, "output": {output}}}'
    ).encode()


@pytest.mark.parametrize(
    ("content", "field", "words"),
    [
        (_doc(output=r'"a \ud800 b"'), "output", "lone surrogate"),
        (_doc(params=r'{"seed": "x\udc00"}'), "model.params", "at 'seed'"),
        (_doc(params=r'{"a": {"b": ["ok", "\ud83d"]}}'), "model.params", "at 'a.b[1]'"),
        (_doc(params=r'{"\ud800": 1}'), "model.params", "lone surrogate"),
        (_doc(params='{"temperature": NaN}'), "model.params", "NaN and Infinity are refused"),
        (_doc(params='{"t": [1, -Infinity]}'), "model.params", "at 't[1]'"),
    ],
)
def test_unstorable_text_and_numbers_are_422_naming_the_field(
    api: Api, content: bytes, field: str, words: str
) -> None:
    """Surrogates in ``output`` (was 500) or ``params`` (was stored, then 500 on every GET)."""
    before = stored(api.ctx)
    got = _raw(api, content)
    assert got["status"] == 422 and got["error"] == "invalid_request"
    assert f"invalid field '{field}'" in str(got["detail"]) and words in str(got["detail"])
    assert stored(api.ctx) == before
    listed = api.client.get("/v1/runs", headers=api.h("submitter"))
    assert listed.status_code == 200 and listed.json()["runs"] == []


def test_invalid_utf8_bytes_are_422(api: Api) -> None:
    """A surrogate encoded as raw bytes (CESU-8) or a stray byte: 422, not 400 or 500."""
    before = stored(api.ctx)
    for bad in (b"\xed\xa0\x80", b"\xff"):
        got = _raw(api, _doc(output=b'"a '.decode() + "X" + '"').replace(b"X", bad))
        assert got["status"] == 422 and got["error"] == "invalid_encoding"
        assert "not valid UTF-8 (byte" in str(got["detail"])
    assert stored(api.ctx) == before


def test_malformed_json_names_the_position(api: Api) -> None:
    """Was: ``invalid field '45': JSON decode error``."""
    doc = b'{"task": "' + TASK.encode() + b'",\n  "model": {"label": "m"},\n  "output": oops}'
    got = _raw(api, doc)
    assert got["status"] == 422 and got["error"] == "invalid_json"
    assert str(got["detail"]).startswith("malformed JSON at line 3 column 13 (character ")
    assert "Expecting value" in str(got["detail"]) and "field '" not in str(got["detail"])


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    head = _doc(output='"')[:-1]  # up to the opening quote of output
    yield head
    sent = len(head)
    while sent < total:
        yield b"x" * size
        sent += size
    yield b'"}'


def test_chunked_body_over_the_limit_is_413(api: Api) -> None:
    """No ``Content-Length``, sent in chunks: 413 like a declared one (was 400)."""
    limit = api.ctx.settings.max_body_bytes
    before = stored(api.ctx)
    r = api.client.post(
        "/v1/runs", content=_chunks(limit + 100_000), headers={**api.h("submitter"), **JSON}
    )
    assert r.status_code == 413, r.text
    assert r.json() == {
        "error": "payload_too_large",
        "detail": f"request body exceeds {limit} bytes",
    }
    assert stored(api.ctx) == before
    small = api.client.post(
        "/v1/runs", content=_chunks(10_000), headers={**api.h("submitter"), **JSON}
    )
    assert small.status_code == 202, small.text  # a chunked body under the limit still works
    assert stored(api.ctx).runs == before.runs + 1


def test_framework_errors_have_the_documented_shape(api: Api) -> None:
    """Unknown path, wrong method, no body: ``{error, detail}`` like every other error."""
    h = api.h("submitter")
    missing = api.client.get("/v1/nothing-here", headers=h)
    assert missing.status_code == 404
    assert missing.json() == {"error": "not_found", "detail": "Not Found"}
    wrong = api.client.delete("/v1/runs", headers=h)
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    assert "allow" in {k.lower() for k in wrong.headers}
    empty = api.client.post("/v1/runs", content=b"", headers={**h, **JSON})
    assert empty.status_code == 422 and set(empty.json()) >= {"error", "detail"}
    ok = api.client.post(
        "/v1/runs",
        content=json.dumps({"task": TASK, "model": {"label": "m"}, "output": GOOD}).encode(),
        headers={**h, **JSON},
    )
    assert ok.status_code == 202


def test_params_stored_before_the_fix_are_answered_not_500(api: Api) -> None:
    """A run whose stored params hold a lone surrogate and NaN (accepted by the old code)."""
    h = api.h("submitter")
    run_id = api.client.post("/v1/runs", content=_doc(), headers={**h, **JSON}).json()["run_id"]
    legacy = {"seed": "x\udc00", "t": float("nan")}
    if api.ctx.db.is_sqlite:  # SQLite kept such JSON (escaped); PostgreSQL refuses to store it
        with api.ctx.db.write() as s:
            s.execute(update(Run).where(Run.id == run_id).values(model_params=legacy))
        got = api.client.get(f"/v1/runs/{run_id}", headers=h)
        assert got.status_code == 200, got.text  # was 500 on every GET
        assert got.json()["model"]["params"] == {"seed": "x\ufffd", "t": None}
    else:
        with pytest.raises(DBAPIError), api.ctx.db.write() as s:
            s.execute(update(Run).where(Run.id == run_id).values(model_params=legacy))


def test_other_callers_of_submit_are_refused_too(api: Api) -> None:
    """``ServiceContext.submit`` (CLI, jobs) refuses what the API refuses: InputError, no row."""
    before = stored(api.ctx)
    for bad in (
        Submission(TASK, "m", "a \ud800"),
        Submission(TASK, "m", GOOD, model_params={"x": "\udc01"}),
        Submission(TASK, "m", GOOD, model_params={"t": float("inf")}),
    ):
        with pytest.raises(InputError, match=r"run 0: (output|model\.params)"):
            api.ctx.submit([bad], None)
    assert stored(api.ctx) == before


def test_an_unhandled_error_is_500_with_the_documented_shape(ctx: ServiceContext) -> None:
    """A bug in a handler answers ``{error: internal_error, detail}``, not Starlette's text."""
    app = create_app(ctx)

    def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/v1/broken", broken)  # a route of the test: the handler is under test
    with serve_in_thread(app) as url, Http(base_url=url, timeout=120) as http:
        got = http.get("/v1/broken")
    assert got.status_code == 500
    assert got.json() == {
        "error": "internal_error",
        "detail": "internal error (RuntimeError); the server log has the details",
    }
