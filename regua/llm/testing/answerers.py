"""The usual answerers of the fake model server: scripted, by truth, pairwise, failures.

Failures are 429 with ``Retry-After``, 500, a timeout and garbage.
Each is a callable ``Request -> Reply`` with the state a test inspects (what it was asked).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from regua.llm.call import Image, Text
from regua.llm.testing.server import Answerer, FakeModelServer, Reply, Request

CRITERION_LINE = re.compile(r"Criterion (\w+) \(")
"""How regua's judge prompts name the criterion asked about (``Criterion R2 (relation): …``)."""
LEVEL_LINE = re.compile(r"Criterion \w+ \(\w+, graded \d+\.\.\d+\)")
"""How regua asks for a level on a graded criterion (``Criterion P (necessary, graded 0..5)``)."""
ADJUDICATION_LINE = "Answers of the other judges"
"""What an adjudication prompt carries after its question (the other judges' answers)."""


def asks_level(request: Request) -> bool:
    """Whether a judge request asks for a level (a graded criterion) rather than a status."""
    return LEVEL_LINE.search("\n".join(request.texts())) is not None


def is_adjudication(request: Request) -> bool:
    """Whether a judge request is an adjudication (it lists other judges' answers)."""
    return any(ADJUDICATION_LINE in t for t in request.texts())


def sha256(data: bytes) -> str:
    """The hex sha256 of an image (how the fakes know a frame)."""
    return hashlib.sha256(data).hexdigest()


def criterion_and_frames(request: Request) -> tuple[str, list[str]]:
    """The criterion a judge request asks about (``?`` if none) and the sha256 of each image.

    All a model server can know: the prompt text and the images (never the run or its model).
    """
    match = CRITERION_LINE.search("\n".join(request.texts()))
    return (match.group(1) if match else "?"), [sha256(i) for i in request.images()]


@dataclass
class Scripted:
    """Answers with ``script`` in order; with the script used up, a 500 ``no script``."""

    script: list[Reply] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """The next scripted reply."""
        del request  # the script decides, whatever was asked
        with self.lock:
            return self.script.pop(0) if self.script else Reply(status=500, body="no script")


def _truth_evidence(criterion: str, status: str, known: bool) -> str:
    del known  # the plain fake says the same whether it knew the frames or not
    return f"{criterion} looks {status}"


@dataclass
class FrameTruth:
    """A vision model that answers from a truth table: frame sha256 → criterion → status.

    For the frames it is shown and the criterion it is asked about it replies with the status
    the table holds (the first frame that has one), else ``default``.
    """

    truth: dict[str, dict[str, str]] = field(default_factory=dict)
    default: str = "uncertain"
    evidence: Callable[[str, str, bool], str] = _truth_evidence
    """(criterion, status, known) → the evidence sentence of the answer."""
    time_s: float | None = None
    """The frame time every answer names (None: no particular frame)."""
    levels: dict[str, dict[str, int]] = field(default_factory=dict)
    """Frame sha256 → graded criterion → level, for level requests (graded criteria)."""
    criterion_levels: dict[str, int] = field(default_factory=dict)
    """Criterion → the level given whatever the frames, when ``levels`` knows none of them."""
    default_level: int | None = None
    """The level given when neither table knows (None: ``"level": null``)."""
    usage: tuple[int, int] = (1000, 20)
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    """(criterion, frame shas) of every request."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def learn(self, frame_shas: Iterable[str], statuses: Mapping[str, str]) -> None:
        """Declare the truth of the drawing whose frames have these hashes."""
        with self.lock:
            for sha in frame_shas:
                self.truth.setdefault(sha, {}).update(statuses)

    def status(self, criterion: str, shas: list[str]) -> tuple[str, bool]:
        """The status for these frames (and whether the table knew it)."""
        with self.lock:
            self.asked.append((criterion, tuple(shas)))
            known = [self.truth[s][criterion] for s in shas if criterion in self.truth.get(s, {})]
        return (known[0], True) if known else (self.default, False)

    def level(self, criterion: str, shas: list[str]) -> tuple[int | None, bool]:
        """The level for these frames (and whether the table knew it)."""
        with self.lock:
            self.asked.append((criterion, tuple(shas)))
            known = [self.levels[s][criterion] for s in shas if criterion in self.levels.get(s, {})]
        if known:
            return known[0], True
        if criterion in self.criterion_levels:
            return self.criterion_levels[criterion], True
        return self.default_level, False

    def __call__(self, request: Request) -> Reply:
        """The judge's JSON answer for one request (a level when a level is asked)."""
        criterion, shas = criterion_and_frames(request)
        answer: dict[str, object]
        if asks_level(request):
            level, known = self.level(criterion, shas)
            said = "no level" if level is None else f"level {level}"
            answer = {"level": level, "evidence": self.evidence(criterion, said, known)}
        else:
            status, known = self.status(criterion, shas)
            answer = {"status": status, "evidence": self.evidence(criterion, status, known)}
        return Reply(
            json.dumps({**answer, "time_s": self.time_s}),
            input_tokens=self.usage[0],
            output_tokens=self.usage[1],
        )


def shown_drawings(request: Request) -> tuple[list[str], list[str]]:
    """(X image shas, Y image shas) of one pairwise request (images after "Drawing X"/"Y")."""
    x: list[str] = []
    y: list[str] = []
    current = x
    for part in request.parts():
        if isinstance(part, Text):
            if part.text.startswith("Drawing X"):
                current = x
            elif part.text.startswith("Drawing Y"):
                current = y
        elif isinstance(part, Image):
            current.append(sha256(part.data))
    return x, y


@dataclass
class Pairwise:
    """A vision model asked which of two drawings is better, by ``mode``.

    ``prefer`` names the drawing with the higher ``quality`` (a tie when equal), ``always_x``
    always answers X (a position-biased model), ``garbage`` replies with prose.
    """

    mode: str = "prefer"
    quality: dict[str, int] = field(default_factory=dict)
    """Image sha256 → quality (higher wins in ``prefer`` mode)."""
    prompts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """The pairwise answer for one request."""
        xs, ys = shown_drawings(request)
        with self.lock:
            self.prompts.append("\n".join(request.texts()))
        if self.mode == "garbage":
            return Reply("Honestly the first drawing is nicer, I think.")
        if self.mode == "always_x":
            return Reply(json.dumps({"winner": "X", "reason": "X comes first"}))
        qx = max((self.quality.get(s, 0) for s in xs), default=0)
        qy = max((self.quality.get(s, 0) for s in ys), default=0)
        winner = "X" if qx > qy else "Y" if qy > qx else "tie"
        return Reply(json.dumps({"winner": winner, "reason": f"quality {qx} vs {qy}"}))


def rate_limited(retry_after_s: float = 1.0) -> Reply:
    """A 429 with ``Retry-After`` (seconds)."""
    body = '{"error": {"message": "rate limited, slow down"}}'
    return Reply(status=429, headers={"Retry-After": f"{retry_after_s:g}"}, body=body)


def server_error(status: int = 500) -> Reply:
    """An error status with an error body."""
    return Reply(status=status, body='{"error": {"message": "internal error"}}')


def garbage() -> Reply:
    """A 200 whose body is no JSON at all."""
    return Reply(body="<html>502 bad gateway, or so</html>")


def slow(delay_s: float, reply: Reply | None = None) -> Reply:
    """``reply`` (default: an empty answer) after ``delay_s``: a timeout for a shorter client."""
    base = reply or Reply()
    return Reply(base.text, base.status, base.headers, base.body, delay_s)


@dataclass
class FailFirst:
    """Answers each distinct path's first ``times`` requests with ``failure``, then ``then``."""

    failure: Reply
    then: Answerer
    times: int = 1
    seen: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """The failure while it lasts, then the other answerer's reply."""
        with self.lock:
            n = self.seen[request.path] = self.seen.get(request.path, 0) + 1
        return self.failure if n <= self.times else self.then(request)


@dataclass
class ByModel:
    """Several fake models behind one endpoint: each request goes to its ``model``'s answerer.

    A strict / balanced / lenient trio and an adjudicator can share one server this way;
    ``asked`` keeps (model, every text part) of each request, so a test can check what each
    model was shown (and that an adjudicator never saw a judge's name).
    """

    models: dict[str, Answerer]
    default: Answerer | None = None
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        """The answer of the model the request names (a 404 for a model nobody serves)."""
        body = request.json if isinstance(request.json, dict) else {}
        model = str(body.get("model") or "")
        with self.lock:
            self.asked.append((model, tuple(request.texts())))
        answerer = self.models.get(model, self.default)
        if answerer is None:
            return Reply(status=404, body=f'{{"error": {{"message": "no model {model}"}}}}')
        return answerer(request)

    def prompts(self, model: str) -> list[str]:
        """Every request's joined text sent to one model, in order."""
        with self.lock:
            return ["\n".join(texts) for m, texts in self.asked if m == model]


class ScriptedServer(FakeModelServer[Scripted]):
    """A server answering from a script (``script``: the replies still to give)."""

    def __init__(self) -> None:
        """Bind the port with an empty script."""
        super().__init__(Scripted())

    @property
    def script(self) -> list[Reply]:
        """The replies still to give, in order."""
        return self.model.script

    @script.setter
    def script(self, replies: list[Reply]) -> None:
        with self.model.lock:
            self.model.script = list(replies)


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """Run a :class:`ScriptedServer` for the duration."""
    server = ScriptedServer().start()
    try:
        yield server
    finally:
        server.stop()
