"""The judge protocol and the registry class of judge kinds and profiles.

The process-wide registry, with the built-ins loaded, lives in :mod:`judges.default_registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from judges.inputs import JudgeInput
from judges.model import JudgeFailure, JudgeProfile, Verdict
from regua.errors import ConfigurationError
from regua.registry import Registry, UnknownPluginError
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


class UnknownJudgeKindError(UnknownPluginError, ConfigurationError):
    """A profile names a judge kind nothing registered."""


class JudgeRegistry:
    """Judge kinds (factories) and immutable profiles, keyed by kind and by profile id."""

    def __init__(self) -> None:
        """Start with no judge kinds and no profiles."""
        self._kinds: Registry[JudgeFactory] = Registry("judge kind", unknown=UnknownJudgeKindError)
        self._profiles: Registry[JudgeProfile] = Registry(
            "judge profile", content=JudgeProfile.content_hash
        )

    def register_kind(self, kind: str, factory: JudgeFactory, *, replace: bool = False) -> None:
        """Register the factory for a judge kind."""
        self._kinds.register(kind, factory, replace=replace)

    def register_profile(self, profile: JudgeProfile) -> JudgeProfile:
        """Register a profile and return it.

        The same id with different content is refused (profiles are immutable: change anything,
        change the version).
        """
        return self._profiles.register(profile.id, profile)

    def kinds(self) -> tuple[str, ...]:
        """Registered judge kinds, sorted."""
        return tuple(self._kinds.names())

    def profiles(self) -> tuple[JudgeProfile, ...]:
        """Registered profiles, sorted by id."""
        return tuple(self._profiles.get(k) for k in self._profiles.names())

    def profile(self, profile_id: str) -> JudgeProfile:
        """The profile with this id (:class:`~regua.registry.UnknownPluginError` otherwise)."""
        return self._profiles.get(profile_id)

    def create(self, profile: JudgeProfile | str, settings: Settings | None = None) -> Judge:
        """Instantiate the judge for a profile (or profile id)."""
        prof = self.profile(profile) if isinstance(profile, str) else profile
        return self._kinds.get(prof.kind)(prof, settings)
