"""The synchronous client: :class:`Client`."""

from __future__ import annotations

import time
from typing import Any, TypeVar

import httpx
from tenacity import Retrying

from regua.client.common import ClientBase
from regua.client.methods import Methods, Plan, Steps
from regua.client.transport import Call, ServiceHttp, decoded, read

T = TypeVar("T")


class Client(Methods, ClientBase[httpx.BaseTransport, ServiceHttp]):
    """The synchronous client of one regua service (``/v1``), what :class:`ClientBase` says.

    ``Client(url, token, timeout_s=60.0, backoff=None, transport=None)``; every answer is the
    service's own read model (:mod:`regua.views`). Use as ``with Client(...) as client:``.
    Its methods (:class:`~regua.client.methods.Methods`) are carried out by :meth:`perform`.
    """

    def open_http(self, transport: httpx.BaseTransport | None, **session: Any) -> ServiceHttp:
        """A blocking HTTP session."""
        return ServiceHttp(transport=transport, **session)

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def __enter__(self) -> Client:
        """Use as ``with Client(...) as client:`` (closed on exit)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connection pool."""
        self.close()

    def send(self, call: Call[T]) -> T:
        """Send one call (retrying 429 and 503) and read its answer."""
        retrying = Retrying(sleep=time.sleep, **self.backoff.tenacity_args())
        answer = retrying(
            self.http.request, call.method, call.path, params=call.query(), json=call.json
        )
        return read(call, answer)

    def perform(self, plan: Plan[T]) -> T:
        """Carry out a method's plan: send its calls, sleep its pauses; its result."""
        steps, answer = Steps(plan), None
        while (step := steps.next(answer)) is not None:
            answer = None
            if isinstance(step, Call):
                answer = self.send(step)
            else:
                time.sleep(step.seconds)
        return steps.result

    def artifact(self, sha256: str) -> bytes:
        """One stored artifact's bytes."""
        answer = self.http.get(f"/v1/artifacts/{sha256}")
        if answer.status_code >= 400:
            decoded(answer)
        return answer.content
