"""The FastAPI application (``/v1``, OpenAPI at ``/v1/openapi.json``, docs at ``/v1/docs``)."""

from service.api.app import create_app

__all__ = ["create_app"]
