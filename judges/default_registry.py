"""The process-wide judge registry, with the built-in judges and profiles loaded.

Built-in judges register through exactly the same calls a plugin uses
(:meth:`JudgeRegistry.register_kind`, :meth:`JudgeRegistry.register_profile`, which
:func:`register_judge_kind` and :func:`register_profile` call on this registry).
"""

from __future__ import annotations

import threading

from judges.base import Judge, JudgeFactory, JudgeRegistry
from judges.builtin import register_builtins
from judges.model import JudgeProfile
from regua.settings import Settings

_REGISTRY = JudgeRegistry()
_BUILTINS_LOADED = False
_BUILTINS_LOCK = threading.Lock()


def registry() -> JudgeRegistry:
    """The process-wide registry, with the built-in judges and profiles loaded."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        with _BUILTINS_LOCK:
            if not _BUILTINS_LOADED:
                register_builtins(_REGISTRY)
                _BUILTINS_LOADED = True
    return _REGISTRY


def register_judge_kind(kind: str, factory: JudgeFactory, *, replace: bool = False) -> None:
    """Register a judge kind in the process-wide registry (plugins and built-ins alike)."""
    registry().register_kind(kind, factory, replace=replace)


def register_profile(profile: JudgeProfile) -> JudgeProfile:
    """Register a judge profile in the process-wide registry."""
    return registry().register_profile(profile)


def get_profile(profile_id: str) -> JudgeProfile:
    """Look up a registered profile."""
    return registry().profile(profile_id)


def list_profiles() -> tuple[JudgeProfile, ...]:
    """All registered profiles."""
    return registry().profiles()


def create_judge(profile: JudgeProfile | str, settings: Settings | None = None) -> Judge:
    """Instantiate a judge from the process-wide registry."""
    return registry().create(profile, settings)
