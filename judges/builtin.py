"""Built-in judge kinds and profiles, registered exactly like a plugin would register.

Profiles are frozen: every built-in pins its content hash (``expected_hash``); editing a
profile without giving it a new id fails at import time.
"""

from __future__ import annotations

import dataclasses

from judges.base import Judge, JudgeRegistry
from judges.model import JudgeProfile
from judges.vision.prompt import DEFAULT_TEMPLATE
from regua.settings import Settings


def _static(profile: JudgeProfile, settings: Settings | None) -> Judge:
    from judges.static import create_static_judge

    return create_static_judge(profile, settings)


def _geometry(profile: JudgeProfile, settings: Settings | None) -> Judge:
    from judges.geometry.judge import create_geometry_judge

    return create_geometry_judge(profile, settings)


def _vision(profile: JudgeProfile, settings: Settings | None) -> Judge:
    from judges.vision.judge import create_vision_judge

    return create_vision_judge(profile, settings)


def _human(profile: JudgeProfile, settings: Settings | None) -> Judge:
    from judges.human import create_human_judge

    return create_human_judge(profile, settings)


GEOMETRY_THRESHOLDS = {
    # a part is visible when its visible pixels reach this share of the pixels it paints alone
    "visible_min_fraction": 0.03,
    "visible_min_pixels": 8,
    # contact gap between visible regions / wheel diameter (R1, R2, R3, A2)
    "contact_pass_max": 0.03,
    "contact_uncertain_max": 0.08,
    # R1: body bottom below the saddle bottom by more than this (x wheel diameter) = sunk through
    "seat_sink_max": 0.15,
    # B1 wheel roundness: minor/major axis of the fitted ellipse
    "wheel_round_pass_min": 0.85,
    "wheel_round_uncertain_min": 0.65,
    # B1: a pedal's largest extent / wheel diameter must stay below this
    "pedal_max_extent": 0.5,
    # B2: distance from a wheel centre to the frame, and pedal to crank (x wheel diameter)
    "join_pass_max": 0.06,
    "join_uncertain_max": 0.15,
    # A1: measured revolutions per loop / expected (1.0)
    "rotation_pass_band": [0.8, 1.25],
    "rotation_uncertain_band": [0.5, 1.6],
}

VISION_TEMPLATE_VERSION = "criterion-json@1"  # the text itself is DEFAULT_TEMPLATE
VISION_PARAMS = {
    "temperature": 0.0,
    "max_tokens": 400,
    "max_frames": 8,
    "max_retries": 3,
    "backoff_s": 0.5,
    "max_retry_wait_s": 30.0,
    "skip_criteria": ["F1"],
}


def vision_profile(
    profile_id: str, api: str, description: str, model: str | None = None
) -> JudgeProfile:
    """A vision-LLM judge profile on the default template and parameters, calling ``api``."""
    return JudgeProfile(
        id=profile_id,
        kind="vision-llm",
        model=model,
        prompt_template=DEFAULT_TEMPLATE,
        prompt_version=VISION_TEMPLATE_VERSION,
        params={"api": api, **VISION_PARAMS},
        description=description,
    )


PINNED_HASHES = {
    "static@1": "03f29f7423749822d1efe762dada53ed1cb1f5a949521d803de9646b1894e5cf",
    "geometry@1": "dde5c2bd35d84130f970a0ce71cbc6dbf5727b3d37644d7a4e1e80da740f1b96",
    "geometry@2": "7688eaf3cc866e20a6519eebf924f14c0dba823564990418a4d91e0bec9a7f52",
    "vision-llm-openai@1": "40fb487b116e1a93927b3ff23fc6d5ba562a3d9264b58b4184b35f768cebbad2",
    "vision-llm-anthropic@1": "44f2899753a44f216292e4e17b29d7ff23be78b379a538980f2957143e5b96fd",
    "human@1": "517451bb80773f109974d3d4f20a20f3119c7810d7bdb35ba2c93db2fe34b196",
}
"""Content hashes of the built-in profiles. A mismatch raises at import: bump the version."""


def _pinned(profile: JudgeProfile) -> JudgeProfile:
    return dataclasses.replace(profile, expected_hash=PINNED_HASHES[profile.id])


BUILTIN_PROFILES = tuple(
    _pinned(p)
    for p in (
        JudgeProfile(
            id="static@1",
            kind="static",
            params={"rules": ["F1: checks + render log", "A1: no animation detected"]},
            description="Decidable rules from the static checks and the render log.",
        ),
        JudgeProfile(
            id="geometry@1",
            kind="geometry",
            params={"mask_threshold": 128, "measure_on": "first frame; every frame for A1/A2"},
            thresholds=GEOMETRY_THRESHOLDS,
            description="Part-mask geometry with OpenCV and Shapely (structured tasks).",
        ),
        JudgeProfile(
            id="geometry@2",
            kind="geometry",
            params={
                "mask_threshold": 128,
                "measure_on": "first frame; every frame for A1/A2",
                "veto_only": ["B1"],
            },
            thresholds=GEOMETRY_THRESHOLDS,
            description="Part-mask geometry for relations (B2, R1-R3, A1, A2); on B1 only a "
            "visible failure (a part missing, hidden or malformed), never a pass: recognising a "
            "bicycle needs a recognising judge.",
        ),
        vision_profile(
            "vision-llm-openai@1",
            "openai",
            "One criterion per request to an OpenAI-compatible chat-completions "
            "endpoint; model and base URL from settings (REGUA_JUDGE_MODEL, REGUA_JUDGE_BASE_URL).",
        ),
        vision_profile(
            "vision-llm-anthropic@1",
            "anthropic",
            "One criterion per request to the Anthropic messages API.",
        ),
        JudgeProfile(
            id="human@1",
            kind="human",
            description="Verdicts from human review; they decide their criterion.",
        ),
    )
)


def register_builtins(registry: JudgeRegistry) -> None:
    """Register the built-in kinds and profiles on ``registry``."""
    registry.register_kind("static", _static)
    registry.register_kind("geometry", _geometry)
    registry.register_kind("vision-llm", _vision)
    registry.register_kind("human", _human)
    for profile in BUILTIN_PROFILES:
        registry.register_profile(profile)
