"""Building the FastAPI app around a :class:`ServiceContext`."""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI

import regua
from service.api import misc, runs
from service.api.errors import BodyLimitMiddleware, install_error_handlers
from service.context import ServiceContext

log = logging.getLogger("regua.api")

#: Routers of other areas, mounted when their module exists (``module:attribute``).
OPTIONAL_ROUTERS = (
    "service.review.api:router",
    "service.reports.api:router",
    "service.web.pages:router",
    "service.scoring.api:router",
)


def _optional_routers() -> list[APIRouter]:
    found: list[APIRouter] = []
    for spec in OPTIONAL_ROUTERS:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue
            raise
        router = getattr(module, attr, None)
        if isinstance(router, APIRouter):
            found.append(router)
    return found


def create_app(ctx: ServiceContext, *, run_executor: bool = False) -> FastAPI:
    """The API app. With ``run_executor`` the in-process executor starts and stops with it."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if run_executor and ctx.executor is None:
            ctx.start_executor()
        try:
            yield
        finally:
            if run_executor:
                ctx.close()

    app = FastAPI(
        title="regua",
        version=regua.__version__,
        description="Sandboxed, evidence-first evaluation of SVG drawings made by language models.",
        openapi_url="/v1/openapi.json",
        docs_url="/v1/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    install_error_handlers(app)
    app.include_router(runs.router)
    app.include_router(misc.router)
    for router in _optional_routers():
        app.include_router(router)
    app.add_middleware(BodyLimitMiddleware, max_bytes=ctx.settings.max_body_bytes)
    return app
