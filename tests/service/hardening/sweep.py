"""A generated bad-input sweep of every route of a served app: hostile values in each parameter.

For every route (API and pages), every path parameter, query parameter and body field gets, one
at a time, each hostile value below, the others left at a valid value (a real id, the request
body a test gives, or a minimal body built from the route's OpenAPI schema). Every answer is
recorded; the test asserts that none is a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute

HUGE = 2**70
BIG_TEXT = "x" * 300_000
HOSTILE_JSON: tuple[Any, ...] = (
    HUGE,
    -1,
    -HUGE,
    "\ud800",
    "a\udfffb",
    BIG_TEXT,
    ["x"],
    {"x": 1},
    1.5,
)
"""Hostile JSON values: huge and negative integers, lone surrogates, 300 KB, wrong types."""
HOSTILE_URL: tuple[str, ...] = (str(HUGE), "-1", str(-HUGE), "%ED%A0%80", "%FF", "y" * 3000, "1.5")
"""Hostile path and query values (already percent-encoded: ``%ED%A0%80`` is a lone surrogate
written as UTF-8, ``%FF`` no UTF-8 at all)."""


@dataclass(frozen=True)
class Endpoint:
    """One method of one route, with the names of its parameters."""

    method: str
    path: str
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    form_fields: tuple[str, ...]


def _params(route: APIRoute) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    stack, path, query, body = [route.dependant], [], [], []
    while stack:
        d = stack.pop()
        path += [p.alias for p in d.path_params]
        query += [p.alias for p in d.query_params]
        body += [p.alias for p in d.body_params]
        stack.extend(d.dependencies)
    return tuple(dict.fromkeys(path)), tuple(dict.fromkeys(query)), tuple(dict.fromkeys(body))


def endpoints(routes: list[Any], prefix: str = "") -> Iterator[Endpoint]:
    """Every method of every route of the app, entering included routers."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            sub = prefix + str(getattr(route.include_context, "prefix", ""))
            yield from endpoints(list(included.routes), sub)
        elif isinstance(route, APIRoute):
            path, query, body = _params(route)
            for method in sorted(set(route.methods or ()) - {"HEAD"}):
                yield Endpoint(method, prefix + route.path, path, query, body)


def example(schema: dict[str, Any], components: dict[str, Any], depth: int = 0) -> Any:
    """A minimal valid value of a JSON schema (its required properties only)."""
    if "$ref" in schema:
        return example(components[schema["$ref"].rsplit("/", 1)[1]], components, depth)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return example(options[0], components, depth) if options else None
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" and depth < 6:
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {k: example(props.get(k, {}), components, depth + 1) for k in required}
    return {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(
        str(kind), "x"
    )


def leaves(value: Any, loc: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every leaf (and of every container) of a JSON value."""
    if loc:
        yield loc
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from leaves(item, (*loc, index))


def replaced(value: Any, loc: tuple[str | int, ...], new: Any) -> Any:
    """A copy of ``value`` with the item at ``loc`` replaced by ``new``."""
    if not loc:
        return new
    head, rest = loc[0], loc[1:]
    if isinstance(value, dict):
        return {**value, str(head): replaced(value.get(str(head)), rest, new)}
    items = list(value)
    items[int(head)] = replaced(items[int(head)], rest, new)
    return items


def json_bytes(value: Any) -> bytes:
    """JSON with every non-ASCII character escaped (so a lone surrogate is sent as ``\\ud800``)."""
    return json.dumps(value, ensure_ascii=True).encode()


@dataclass
class Sweep:
    """Sends the requests of one endpoint and keeps every answer that is a 500."""

    http: httpx.Client
    fill: dict[str, str]
    bodies: dict[tuple[str, str], Any]
    components: dict[str, Any]
    schema_paths: dict[str, Any]
    sent: int = 0
    reached: set[tuple[str, str]] = field(default_factory=set)
    """(method, path template) of every endpoint a request was sent to."""

    def url(self, ep: Endpoint, path: dict[str, str], query: dict[str, str]) -> str:
        """The request URL (values already percent-encoded)."""
        url = ep.path
        for name in ep.path_params:
            url = url.replace("{" + name + "}", path.get(name, self.fill.get(name, "1")))
        url = url.replace(":path}", "}")
        query = {**self.quick(ep), **query}
        pairs = "&".join(f"{k}={v}" for k, v in query.items())
        return f"{url}?{pairs}" if pairs else url

    def quick(self, ep: Endpoint) -> dict[str, str]:
        """``resamples`` at its smallest allowed value where a route takes it (a report's
        bootstrap per request would make the sweep minutes longer and test nothing more)."""
        if "resamples" not in ep.query_params:
            return {}
        op = self.schema_paths.get(ep.path, {}).get(ep.method.lower(), {})
        for param in op.get("parameters", []):
            if param.get("name") == "resamples":
                return {"resamples": str(param.get("schema", {}).get("minimum", 0))}
        return {"resamples": "0"}

    def body_of(self, ep: Endpoint) -> Any:
        """The valid body of an endpoint (given, or built from its OpenAPI schema)."""
        if (ep.method, ep.path) in self.bodies:
            return self.bodies[(ep.method, ep.path)]
        op = self.schema_paths.get(ep.path, {}).get(ep.method.lower(), {})
        content = op.get("requestBody", {}).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        return None if schema is None else example(schema, self.components)

    def send(self, ep: Endpoint, url: str, body: Any) -> httpx.Response:
        """One request: JSON bodies for the API, form fields for the pages."""
        self.sent += 1
        self.reached.add((ep.method, ep.path))
        if ep.method == "GET":
            return self.http.get(url)
        if ep.form_fields and not ep.path.startswith("/v1"):
            data = body if isinstance(body, dict) else {}
            form = "&".join(f"{k}={v}" for k, v in data.items())
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            return self.http.request(ep.method, url, content=form.encode(), headers=headers)
        content = b"" if body is None else json_bytes(body)
        headers = {"Content-Type": "application/json"}
        return self.http.request(ep.method, url, content=content, headers=headers)

    def requests(self, ep: Endpoint, *, refused: bool) -> Iterator[tuple[str, Any, str]]:
        """(url, body, what is hostile) of every request of one endpoint but the valid one.

        ``refused``: the valid request was refused to this caller (401/403), so the body gets
        each hostile value whole instead of in each of its fields: a route that refuses the
        caller never reaches them (the role that may call it sweeps every field).
        """
        body = self.body_of(ep)
        base = self.url(ep, {}, {})
        for name in ep.path_params:
            for value in HOSTILE_URL:
                yield self.url(ep, {name: value}, {}), body, f"path {name}={value[:20]}"
        for name in ep.query_params:
            for value in HOSTILE_URL:
                yield self.url(ep, {}, {name: value}), body, f"query {name}={value[:20]}"
        if ep.form_fields and not ep.path.startswith("/v1"):
            for name in ep.form_fields:
                for value in HOSTILE_URL:
                    yield base, {**(body or {}), name: value}, f"form {name}={value[:20]}"
        elif body is not None:
            for loc in [()] if refused else [(), *leaves(body)]:
                for value in HOSTILE_JSON:
                    yield base, replaced(body, loc, value), f"body {loc}={str(value)[:20]!r}"

    def run(self, ep: Endpoint) -> list[str]:
        """Every request of ``ep`` that answered 500, described (the valid request first)."""
        valid = self.send(ep, self.url(ep, {}, {}), self.body_of(ep))
        failed = [] if valid.status_code < 500 else [self.described(ep, "the valid request", valid)]
        for url, body, what in self.requests(ep, refused=valid.status_code in (401, 403)):
            try:
                got = self.send(ep, url, body)
            except httpx.TransportError:
                # the body limit answers 413 and closes before reading a too big body; the
                # connection may also be the one such an answer closed: ask again once
                if len(json_bytes(body)) > 100_000:
                    continue
                got = self.send(ep, url, body)
            if got.status_code >= 500:
                failed.append(self.described(ep, what, got))
        return failed

    @staticmethod
    def described(ep: Endpoint, what: str, got: httpx.Response) -> str:
        """One line for an answer that was a 500."""
        return f"{ep.method} {ep.path} [{what}] -> {got.status_code} {got.text[:200]}"


def sweep_app(
    app: FastAPI,
    sweep: Sweep,
    skipped: set[tuple[str, str]],
    api: bool | None = None,
) -> list[str]:
    """Sweep every endpoint of ``app`` but ``skipped`` (``api``: only the ``/v1`` routes, or
    only the pages; ``None``: both); every 500, described."""
    failed: list[str] = []
    for ep in endpoints(list(app.routes)):
        if api is not None and ep.path.startswith("/v1") != api:
            continue
        if (ep.method, ep.path) not in skipped:
            failed += sweep.run(ep)
    return failed
