"""The judge protocol and the registry class of judge kinds and profiles.

The process-wide registry, with the built-ins loaded, lives in :mod:`judges.default_registry`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from judges.inputs import JudgeInput
from judges.model import JudgeFailure, JudgeProfile, Verdict
from regua.errors import ConfigurationError, NotFoundError
from regua.settings import Settings
from tasks import Criterion, TaskSpec


@runtime_checkable
class Judge(Protocol):
    """A judge answers one criterion at a time from the evidence in a :class:`JudgeInput`."""

    profile: JudgeProfile

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """True when this judge can decide (or at least weigh in on) the criterion."""
        ...

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure | None:
        """Judge one criterion on one input.

        Returns a verdict, a :class:`JudgeFailure` when no verdict could be produced, or
        ``None`` when this input is outside what the judge can decide (it abstains).
        """
        ...


JudgeFactory = Callable[[JudgeProfile, Settings | None], Judge]
"""Builds a judge from its profile (and settings for judges that need endpoints or keys)."""


class JudgeRegistry:
    """Judge kinds (factories) and immutable profiles, keyed by kind and by profile id."""

    def __init__(self) -> None:
        """Start with no judge kinds and no profiles."""
        self._kinds: dict[str, JudgeFactory] = {}
        self._profiles: dict[str, JudgeProfile] = {}
        self._lock = threading.Lock()

    def register_kind(self, kind: str, factory: JudgeFactory, *, replace: bool = False) -> None:
        """Register the factory for a judge kind."""
        with self._lock:
            if kind in self._kinds and not replace and self._kinds[kind] is not factory:
                raise ConfigurationError(f"judge kind {kind!r} is already registered")
            self._kinds[kind] = factory

    def register_profile(self, profile: JudgeProfile) -> JudgeProfile:
        """Register a profile and return it.

        The same id with different content is refused (profiles are immutable: change anything,
        change the version).
        """
        with self._lock:
            known = self._profiles.get(profile.id)
            if known is not None and known.content_hash() != profile.content_hash():
                raise ConfigurationError(
                    f"judge profile {profile.id} is already registered with other content; "
                    "a changed profile needs a new id"
                )
            self._profiles[profile.id] = profile
            return profile

    def kinds(self) -> tuple[str, ...]:
        """Registered judge kinds, sorted."""
        return tuple(sorted(self._kinds))

    def profiles(self) -> tuple[JudgeProfile, ...]:
        """Registered profiles, sorted by id."""
        return tuple(self._profiles[k] for k in sorted(self._profiles))

    def profile(self, profile_id: str) -> JudgeProfile:
        """The profile with this id (:class:`NotFoundError` otherwise)."""
        try:
            return self._profiles[profile_id]
        except KeyError:
            known = ", ".join(sorted(self._profiles)) or "(none)"
            raise NotFoundError(f"unknown judge profile {profile_id!r}; known: {known}") from None

    def create(self, profile: JudgeProfile | str, settings: Settings | None = None) -> Judge:
        """Instantiate the judge for a profile (or profile id)."""
        prof = self.profile(profile) if isinstance(profile, str) else profile
        factory = self._kinds.get(prof.kind)
        if factory is None:
            raise ConfigurationError(f"no judge kind {prof.kind!r} registered for {prof.id}")
        return factory(prof, settings)
