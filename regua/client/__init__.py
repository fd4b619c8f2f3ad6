"""The public Python client of a regua service (``docs/client.md``).

>>> from regua.client import Client, RunInput
>>> with Client("http://127.0.0.1:8000", token) as regua:          # doctest: +SKIP
...     views = regua.evaluate([RunInput(task="pelican-bicycle-open@1", output=reply, model="m")])

:class:`Client` (sync) and :class:`AsyncClient` send the same calls and answer with the service's
own read models (:mod:`regua.views`); 429 and 503 are retried after ``Retry-After`` within the
bounds of :class:`Backoff`; an error answer is :class:`~regua.errors.ApiError`.
"""

from __future__ import annotations

from regua.client.aio import AsyncClient
from regua.client.calls import RunInput
from regua.client.common import Progress
from regua.client.sync import Client
from regua.client.transport import Backoff, ServiceHttp, ServiceResponse, no_service_text
from regua.errors import ApiError, ServiceUnreachableError
from regua.views.submissions import RunView

__all__ = [
    "ApiError",
    "AsyncClient",
    "Backoff",
    "Client",
    "Progress",
    "RunInput",
    "RunView",
    "ServiceHttp",
    "ServiceResponse",
    "ServiceUnreachableError",
    "no_service_text",
]
