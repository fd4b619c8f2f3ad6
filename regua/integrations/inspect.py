"""An Inspect AI scorer that asks regua (``pip install regua[inspect]``).

>>> from regua.integrations.inspect import regua_scorer
>>> Task(dataset=..., solver=generate(),                                  # doctest: +SKIP
...      scorer=regua_scorer(task="pelican-bicycle-open@1", url=URL, token=TOKEN))

Each sample's completion is submitted as a run (model label and provider from the Inspect model
that wrote it), regua renders it in its sandbox and judges it, and the outcome becomes the
sample's score: ``pass`` is ``CORRECT``, ``fail`` is ``INCORRECT``; ``pending`` (a person must
decide) and ``incomplete`` (the machinery failed) are :meth:`Score.unscored`, so undecided
items and machinery failures never count against the model. Every score carries the run id,
the run page's address and the per-criterion verdicts in ``metadata`` and the reasons in
``explanation``. Without ``url`` the scorer starts regua in this process
(:mod:`regua.integrations.embedded`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from regua.client import AsyncClient, RunInput, RunView
from regua.integrations.embedded import embedded_service


def score_of(view: RunView, url: str) -> Score:
    """The Inspect score of a finished run (see the module's docstring)."""
    outcome = view.outcome
    status = outcome.status if outcome is not None else "incomplete"
    reasons = list(outcome.reasons) if outcome is not None else []
    cause = outcome.cause if outcome is not None else "no outcome recorded"
    criteria = view.evaluation.criteria if view.evaluation is not None else []
    metadata: dict[str, Any] = {
        "regua_run_id": view.run_id,
        "regua_run_url": f"{url.rstrip('/')}/runs/{view.run_id}",
        "regua_task": view.task,
        "regua_outcome": status,
        "regua_cause": cause,
        "regua_criteria": {c.criterion: c.status for c in criteria},
    }
    explanation = "; ".join([*([cause] if cause else []), *reasons]) or f"regua: {status}"
    if status in ("pass", "fail"):
        value = CORRECT if status == "pass" else INCORRECT
        return Score(value=value, explanation=explanation, metadata=metadata)
    why = f"regua: {status}" + (f" ({cause})" if cause else "")
    return Score.unscored(reason=why, explanation=explanation, metadata=metadata)


@scorer(metrics=[accuracy(), stderr()])
def regua_scorer(
    task: str,
    url: str | None = None,
    token: str | None = None,
    panel: str | None = None,
    *,
    data_dir: str | Path | None = None,
    timeout_s: float = 900.0,
    poll_s: float = 1.0,
) -> Scorer:
    """Score each completion with regua's outcome on ``task`` (``ID@VERSION``).

    ``url`` and ``token`` name a running service; without ``url`` regua runs in this process on
    ``data_dir`` (default: the settings' data folder) with its admin token. ``panel`` picks a
    judge panel (``ID@VERSION``; default: the service's). A run not done after ``timeout_s``
    is an error of the sample.
    """

    async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001
        base, secret = url, token
        if base is None:
            folder = Path(data_dir) if data_dir is not None else None
            started = await asyncio.to_thread(embedded_service, folder)
            base, secret = started.url, secret or started.token
        run = RunInput(
            task=task,
            output=state.output.completion,
            model=state.model.name,
            provider=state.model.api,
            params={"inspect_sample_id": str(state.sample_id), "epoch": state.epoch},
            panel=panel,
        )
        async with AsyncClient(base, secret) as client:
            run_id = (await client.submit(run)).run_id
            views = await client.wait([run_id], timeout_s=timeout_s, poll_s=poll_s)
        return score_of(views[run_id], base)

    return score
