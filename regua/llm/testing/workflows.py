"""Answerers for the evaluation workflows: a model that revises, a proposer, a biased judge.

- :class:`FixesAfterFrame`: a drawing model whose first answer is broken and that answers a
  fixed drawing once it has been shown a frame (render-and-revise).
- :class:`YesManWhen`: a vision judge that says ``pass`` to everything when its prompt holds
  a marker (a lenient wording gone too far) and defers to another answerer otherwise.
- :class:`Proposer`: a case-proposing model answering the JSON list a proposal prompt asks for.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from regua.llm.testing.server import Answerer, Reply, Request


@dataclass
class FixesAfterFrame:
    """Answers ``first`` until a request carries an image, then ``fixed``.

    ``shown`` records how many images each request carried (0 for the first answer).
    """

    first: str
    fixed: str
    shown: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """``fixed`` once a frame was seen, else ``first``."""
        images = len(request.images())
        with self.lock:
            self.shown.append(images)
        return Reply(self.fixed if images else self.first)


@dataclass
class YesManWhen:
    """``pass`` (with a confident sentence) whenever the request's text holds ``marker``.

    Any other request goes to ``otherwise``; ``yes`` counts the requests it waved through.
    """

    marker: str
    otherwise: Answerer
    yes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """A ``pass`` for a marked prompt, else the other answerer's reply."""
        if self.marker in "\n".join(request.texts()):
            with self.lock:
                self.yes += 1
            return Reply(json.dumps({"status": "pass", "evidence": "Looks fine.", "time_s": None}))
        return self.otherwise(request)


N_LINE = re.compile(r"Propose exactly (\d+) variants")
Values = Callable[[int], dict[str, str]]


@dataclass
class Proposer:
    """Answers a proposal prompt with the JSON list it asks for: ``values(i)`` for variant i.

    ``prompts`` keeps every prompt text it was sent.
    """

    values: Values
    prompts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """The JSON list of variants, as many as the prompt asks for."""
        text = "\n".join(request.texts())
        with self.lock:
            self.prompts.append(text)
        match = N_LINE.search(text)
        n = int(match.group(1)) if match else 1
        items = [{**self.values(i), "rationale": f"variant {i + 1}"} for i in range(n)]
        return Reply(json.dumps({"variants": items}))
