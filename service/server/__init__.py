"""The HTTP service: the FastAPI app (API routes and web pages) and the uvicorn runner."""

from service.server.app import create_app

__all__ = ["create_app"]
