r"""The experiment file: a YAML document declaring arms, items, repeats, seed and judge panel.

Example::

    id: pelican-prompts
    seed: 7
    repeats: 3
    panel: static-only@1
    items: [pelican-bicycle-restricted, pelican-bicycle-open]   # or: family: pelican-bicycle
    prompts:
      terse: "{prompt}\\nReply with the SVG only."
    arms:
      - name: base
        model: {api: mock, model: mock-a}
      - name: terse
        model: {api: mock, model: mock-a}
        prompt: terse                                     # a named prompt variant
      - name: v2
        model: {api: mock, model: mock-a}
        task_version: 2                                   # a task version
      - name: revised
        model: {api: mock, model: mock-a}
        revise: 2                  # render-and-revise rounds, reported apart from first answers

A bad file is refused with each broken field located (``arms.1.model.api: ...``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from regua.errors import ExperimentFileError
from regua.safe_yaml import load_yaml
from regua.storable import MAX_INT, NotStorableError, check_storable

NAME = r"^[A-Za-z0-9][\w.-]{0,99}$"
PROMPT_MAX_CHARS = 50_000
"""The longest string an experiment file holds, and the longest prompt one case may send."""


class Strict(BaseModel):
    """Frozen and closed: an unknown key is an error, not silently ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelParams(Strict):
    """Which model an arm asks, and how (the generation runner's ``GenerationParams``)."""

    api: Literal["openai", "anthropic", "mock"]
    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = Field(None, max_length=2000)
    api_key_env: str | None = Field(None, max_length=200)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    label: str | None = Field(None, min_length=1, max_length=200)
    timeout_s: float = Field(120.0, gt=0.0, le=3600.0)
    provider: str | None = Field(None, max_length=200)
    """Who serves the model (default: the base URL's host, else the API)."""


class Arm(Strict):
    """One arm: a model and a prompt variant (a task version or a named prompt)."""

    name: str = Field(pattern=NAME)
    model: ModelParams
    task_version: int | None = Field(None, ge=1, le=2**31 - 1)
    """Every item at this version of its task (default: the item's own or newest version)."""
    prompt: str | None = Field(None, max_length=100)
    """A name from the file's ``prompts`` (default: the task's own prompt)."""
    revise: int = Field(0, ge=0, le=5)
    """Render-and-revise rounds after each first answer (reported apart, never compared)."""
    revise_findings: bool = False
    """Also show the static checks' findings in each round."""


class ExperimentFile(Strict):
    """An experiment as declared in its file."""

    id: str = Field(pattern=NAME)
    description: str = Field("", max_length=10_000)
    arms: list[Arm] = Field(min_length=1, max_length=20)
    items: list[str] | None = Field(None, min_length=1, max_length=1000)
    """Task ids (``pelican-bicycle-static``) or versions (``...@1``)."""
    family: str | None = Field(None, max_length=100)
    """Instead of ``items``: every task of this family."""
    repeats: int = Field(1, ge=1, le=100)
    seed: int = Field(0, ge=0, le=MAX_INT)
    panel: str | None = Field(None, max_length=200)
    """The judge panel every run asks for (default: each task version's own)."""
    prompts: dict[str, str] = Field(default_factory=dict, max_length=20)
    """Named prompt variants; ``{prompt}`` stands for the task's prompt."""

    @model_validator(mode="after")
    def _consistent(self) -> ExperimentFile:
        if (self.items is None) == (self.family is None):
            raise ValueError("give exactly one of 'items' (task ids) or 'family'")
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names):
            raise ValueError(f"arm names must be unique, got {names}")
        for arm in self.arms:
            if arm.prompt is not None and arm.prompt not in self.prompts:
                known = ", ".join(sorted(self.prompts)) or "(none)"
                raise ValueError(f"arm {arm.name!r} names prompt {arm.prompt!r}; prompts: {known}")
        if self.items is not None and len(set(self.items)) != len(self.items):
            raise ValueError("items must be unique")
        return self

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of the file's content (what makes a run the same).

        An arm's ``revise`` options and its model's ``provider`` are left out at their defaults,
        so a file written before they existed keeps its hash (and its stored experiments resume).
        """
        doc = self.model_dump(mode="json")
        for arm in doc["arms"]:
            for name, default in (("revise", 0), ("revise_findings", False)):
                if arm.get(name) == default:
                    del arm[name]
            if arm["model"].get("provider") is None:
                arm["model"].pop("provider", None)
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def located(exc: ValidationError, source: str) -> str:
    """One line per broken field: ``SOURCE: arms.0.model.api: Input should be ...``."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"{source}: {where}: {err['msg']}")
    return "\n".join(lines)


def parse_experiment(data: object, source: str = "<experiment>") -> ExperimentFile:
    """Validate a decoded experiment document; :class:`ExperimentFileError` names each field."""
    if not isinstance(data, dict):
        raise ExperimentFileError(f"{source}: an experiment file is a mapping (id, arms, ...)")
    try:
        check_storable(data, max_chars=PROMPT_MAX_CHARS)
    except NotStorableError as exc:
        where = exc.field or "(top level)"
        raise ExperimentFileError(f"{source}: {where}: {exc.problem}") from None
    try:
        return ExperimentFile.model_validate(data)
    except ValidationError as exc:
        raise ExperimentFileError(located(exc, source)) from exc


def load_experiment_text(text: str, source: str = "<experiment>") -> ExperimentFile:
    """Parse YAML text into an :class:`ExperimentFile`."""
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ExperimentFileError(f"{source}: not valid YAML: {exc}") from exc
    return parse_experiment(data, source)


def load_experiment_file(path: Path) -> ExperimentFile:
    """Read and parse an experiment file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExperimentFileError(f"{path}: cannot read the experiment file: {exc}") from exc
    return load_experiment_text(text, str(path))
