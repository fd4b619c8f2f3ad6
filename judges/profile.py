"""Judge profiles: the immutable, versioned configuration a judge runs under.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judges.frozen import canonical_json, freeze, plain
from regua.errors import ConfigurationError

JUDGE_KINDS = ("static", "geometry", "vision-llm", "human")


@dataclass(frozen=True)
class JudgeProfile:
    """An immutable, versioned judge configuration.

    ``id`` is a readable ``NAME@VERSION``; :meth:`content_hash` covers every other field, so a
    change of kind, model, prompt (or its version), parameters or thresholds gives another hash.
    When ``expected_hash`` is set (built-ins pin it), construction fails if the content no longer
    matches — the signal to bump the version. The registry refuses two contents under one id.
    """

    id: str
    kind: str
    model: str | None = None
    prompt_template: str | None = None
    prompt_version: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    expected_hash: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        """Check the id's ``NAME@VERSION`` form, freeze the settings and verify a pinned hash."""
        name, sep, version = self.id.partition("@")
        if not sep or not name or not version:
            raise ConfigurationError(f"judge profile id must look like NAME@VERSION: {self.id!r}")
        object.__setattr__(self, "params", freeze(self.params))
        object.__setattr__(self, "thresholds", freeze(self.thresholds))
        if self.expected_hash is not None and self.expected_hash != self.content_hash():
            raise ConfigurationError(
                f"judge profile {self.id} changed (hash {self.content_hash()[:16]} != pinned "
                f"{self.expected_hash[:16]}); give it a new version"
            )

    def content(self) -> dict[str, Any]:
        """The hashed content: everything that defines the judge's behaviour."""
        return {
            "kind": self.kind,
            "model": self.model,
            "prompt_template": self.prompt_template,
            "prompt_version": self.prompt_version,
            "params": plain(self.params),
            "thresholds": plain(self.thresholds),
        }

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of :meth:`content` (computed once: profiles are frozen)."""
        found = self.__dict__.get("_content_hash")
        if found is None:
            found = hashlib.sha256(canonical_json(self.content()).encode()).hexdigest()
            object.__setattr__(self, "_content_hash", found)
        return str(found)

    def param(self, name: str, default: Any = None) -> Any:
        """A parameter or threshold value (thresholds win), or ``default``."""
        if name in self.thresholds:
            return self.thresholds[name]
        return self.params.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, with the content hash."""
        return {"id": self.id, **self.content(), "content_hash": self.content_hash()}
