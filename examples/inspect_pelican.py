"""An Inspect AI task scored by regua: a model draws pelicans on bicycles, regua judges them.

    pip install 'regua[inspect]'
    inspect eval examples/inspect_pelican.py --model openai/gpt-4o \
        -T url=http://127.0.0.1:8000 -T token=$REGUA_TOKEN

Without ``url`` regua runs inside the eval's process on the default data folder (or ``-T
data_dir=DIR``). Each sample's score is regua's outcome: pass ``C``, fail ``I``, pending and
incomplete unscored (they never count against the model); the run id, its page and every
criterion's verdict are in the score's metadata. ``tests/integrations/test_inspect.py`` runs it
offline with Inspect's ``mockllm`` model answering bundled drawings.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

import tasks
from regua.integrations.inspect import regua_scorer


@task
def pelican(
    ref: str = "pelican-bicycle-structured@1",
    samples: int = 6,
    url: str | None = None,
    token: str | None = None,
    panel: str | None = None,
    data_dir: str | None = None,
) -> Task:
    """``samples`` drawings of the bundled task ``ref``, each scored by regua."""
    prompt = tasks.bundled_registry().get(ref).prompt
    dataset = [Sample(id=f"drawing-{i + 1}", input=prompt) for i in range(samples)]
    scorer = regua_scorer(task=ref, url=url, token=token, panel=panel, data_dir=data_dir)
    return Task(dataset=dataset, solver=generate(), scorer=scorer)
