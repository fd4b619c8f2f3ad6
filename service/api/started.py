"""How a request that starts long work answers: 202 with what to poll, or 201 when it waited.

The routes that can run their work in a job or at once (``wait``) declare the two answers the
same way; :func:`started_or_done` is that declaration, spread into the route decorator.
"""

from __future__ import annotations

from typing import Any, TypedDict


class StartedOrDone(TypedDict):
    """The route decorator's arguments of a start-or-wait route."""

    status_code: int
    response_model: Any
    response_model_exclude_none: bool
    responses: dict[int | str, dict[str, Any]]


def started_or_done(response_model: Any, done: str) -> StartedOrDone:
    """202 by default; 201 (described by ``done``) when the work finished in the request.

    ``response_model`` is the union of the finished result's model and the job's.
    """
    return {
        "status_code": 202,
        "response_model": response_model,
        "response_model_exclude_none": True,
        "responses": {201: {"description": done}},
    }
