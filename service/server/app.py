"""Building the FastAPI app around a :class:`ServiceContext`: every router, mounted explicitly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

import regua
from service.api.errors import BodyLimitMiddleware, install_error_handlers
from service.api.routes import (
    artifacts,
    calibrations,
    evaluations,
    experiments,
    exports,
    gate,
    generations,
    health,
    judges,
    pairwise,
    reports,
    reviews,
    runs,
    task_proposals,
    tasks,
    tokens,
)
from service.context import ServiceContext
from service.generation.orphans import recover_generate_jobs
from service.web import (
    docs,
    experiment_pages,
    gallery_pages,
    pages,
    proposal_pages,
    report_pages,
)

ROUTERS = (
    runs.router,
    artifacts.router,
    tasks.router,
    task_proposals.router,
    tokens.router,
    health.router,
    reviews.router,
    reports.router,
    calibrations.router,
    gate.router,
    evaluations.router,
    judges.router,
    pairwise.router,
    experiments.router,
    generations.router,
    exports.router,
    pages.router,
    report_pages.router,
    experiment_pages.router,
    proposal_pages.router,
    gallery_pages.router,
    docs.router,
)
"""Every router of the service, in the order the OpenAPI document lists them."""


def create_app(ctx: ServiceContext, *, run_executor: bool = False) -> FastAPI:
    """The web application: the API under ``/v1`` and the web pages.

    OpenAPI is served at ``/v1/openapi.json`` and the API docs at ``/v1/docs``
    (:mod:`service.web.docs`: Swagger UI from the installed bundle, the pages' headers). With
    ``run_executor`` the in-process executor starts and stops with it, and the generate jobs a
    killed process left are resumed or interrupted first (:func:`recover_generate_jobs`).
    """

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if run_executor:
            await asyncio.to_thread(recover_generate_jobs, ctx)
        if run_executor and ctx.executor is None and ctx.settings.serve_worker:
            ctx.start_workers()
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
        docs_url=None,  # service.web.docs serves it from the installed bundle, no CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(BodyLimitMiddleware, max_bytes=ctx.settings.max_body_bytes)
    return app
