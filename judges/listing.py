"""How profiles and panels are listed (``regua judges list``, ``GET /v1/judges``, ``/v1/panels``).

A listed profile shows its declaration and content hash, where it came from, and the identity
it votes under with the given settings (a vision profile completed by ``REGUA_JUDGE_MODEL``
votes as ``NAME+MODEL@VERSION``, with its own hash): the id a calibration records and the gate
reads. Keys are never listed, only the name of the environment variable holding one. Pure.
"""

from __future__ import annotations

from typing import Any

from judges.default_registry import create_judge
from judges.judge_files import source_of
from judges.model import JudgeProfile
from judges.panel import JudgePanel
from regua.errors import ReguaError
from regua.settings import Settings


def describe_profile(profile: JudgeProfile, settings: Settings | None) -> dict[str, Any]:
    """One profile as listed: declaration, hash, source and the identity it votes under."""
    line = profile.to_dict()
    line.pop("prompt_template", None)  # the text is frozen under prompt_version
    line["description"] = profile.description
    line["source"] = source_of(profile.id)
    line["problem"] = None
    try:
        seated = create_judge(profile, settings).profile
    except (ReguaError, ValueError) as exc:
        line["votes_as"] = None
        line["problem"] = str(exc)
        return line
    line["votes_as"] = {"id": seated.id, "content_hash": seated.content_hash()}
    return line


def describe_panel(panel: JudgePanel) -> dict[str, Any]:
    """One panel as listed: id, family, assignments, provider rule, hash and source."""
    return {**panel.to_dict(), "source": source_of(panel.id)}
