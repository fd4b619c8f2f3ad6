"""``/v1/docs``: the API documentation page, Swagger UI served from an installed package.

Nothing is loaded from another site: the script and stylesheet are Swagger UI 5's bundle as the
``fastapi-swagger`` package ships it (only its files are used, not its routes; Swagger UI 4, as in
``swagger-ui-bundle``, cannot read the OpenAPI 3.1 document FastAPI writes), served under
``/v1/docs/assets/``; the starter script is a static file of the service, and the page is sent
with the same Content-Security-Policy and frame headers as every other page
(:data:`service.api.headers.PAGE_HEADERS`). It works offline.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from service.api.headers import PAGE_HEADERS
from service.web.pages import allowed_file, static_url

router = APIRouter(include_in_schema=False)

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
}
"""The bundle's files the page needs (an allow-list; nothing else of the package is served)."""

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>regua API · docs</title>
  <link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="{starter}"></script>
</body>
</html>
"""


@lru_cache(maxsize=4)
def _asset(name: str) -> bytes:
    """A file of the installed Swagger UI bundle."""
    return (resources.files("fastapi_swagger") / "resources" / name).read_bytes()


@router.get("/v1/docs")
def docs_page() -> HTMLResponse:
    """The Swagger UI page over ``/v1/openapi.json``, with the pages' security headers."""
    return HTMLResponse(PAGE.format(starter=static_url("docs.js")), headers=PAGE_HEADERS)


@router.get("/v1/docs/assets/{name}")
def docs_asset(name: str) -> Response:
    """One file of the Swagger UI bundle (404 for anything not on the allow-list)."""
    return allowed_file(name, ASSETS, _asset, "docs asset")
