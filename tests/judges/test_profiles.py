"""Data types, immutable judge profiles, the registry (plugins) and panels."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

import pytest

from judges import (
    Evidence,
    JudgeFailure,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    Verdict,
    VerdictStatus,
    get_profile,
    list_profiles,
    panel_for_family,
    registry,
)
from judges.static import StaticJudge
from regua.errors import ConfigurationError, NotFoundError

BUILTIN_IDS = {"static@1", "geometry@1", "vision-llm-openai@1", "vision-llm-anthropic@1", "human@1"}


def test_builtin_profiles_are_registered_with_pinned_hashes() -> None:
    assert {p.id for p in list_profiles()} >= BUILTIN_IDS
    assert set(registry().kinds()) >= {"static", "geometry", "vision-llm", "human"}
    for pid in BUILTIN_IDS:
        prof = get_profile(pid)
        assert prof.expected_hash == prof.content_hash()  # frozen: edit => new version
    geo = get_profile("geometry@1")
    assert geo.thresholds["contact_pass_max"] == 0.03
    assert geo.thresholds["contact_uncertain_max"] == 0.08


def test_any_change_gives_another_hash_and_a_pinned_profile_refuses_it() -> None:
    geo = get_profile("geometry@1")
    base = geo.content_hash()
    changed = {**dict(geo.thresholds), "contact_pass_max": 0.04}
    variants = [
        dataclasses.replace(geo, expected_hash=None, thresholds=changed),
        dataclasses.replace(geo, expected_hash=None, model="x"),
        dataclasses.replace(geo, expected_hash=None, prompt_version="2"),
        dataclasses.replace(geo, expected_hash=None, params={"mask_threshold": 100}),
        dataclasses.replace(geo, expected_hash=None, kind="static"),
    ]
    assert len({v.content_hash() for v in variants} | {base}) == 6
    with pytest.raises(ConfigurationError, match="new version"):
        dataclasses.replace(geo, thresholds=changed)  # keeps the pinned hash


def test_profiles_are_immutable() -> None:
    geo = get_profile("geometry@1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cast(Any, geo).model = "other"  # what the type forbids, tried at run time
    with pytest.raises(TypeError):
        cast(Any, geo.thresholds)["contact_pass_max"] = 1.0
    with pytest.raises(ConfigurationError):
        JudgeProfile(id="no-version", kind="static")


def test_registry_refuses_other_content_under_a_known_id() -> None:
    reg = JudgeRegistry()
    reg.register_profile(JudgeProfile(id="mine@1", kind="static", params={"a": 1}))
    reg.register_profile(JudgeProfile(id="mine@1", kind="static", params={"a": 1}))  # same: ok
    with pytest.raises(ConfigurationError):
        reg.register_profile(JudgeProfile(id="mine@1", kind="static", params={"a": 2}))
    with pytest.raises(NotFoundError):
        reg.profile("absent@1")


def test_plugins_register_like_builtins() -> None:
    reg = JudgeRegistry()
    reg.register_kind("rules", lambda profile, _settings: StaticJudge(profile))
    reg.register_profile(JudgeProfile(id="rules@3", kind="rules"))
    judge = reg.create("rules@3")
    assert judge.profile.id == "rules@3"
    with pytest.raises(ConfigurationError):
        reg.register_kind("rules", lambda profile, _settings: StaticJudge(profile))
    with pytest.raises(ConfigurationError):
        reg.create(JudgeProfile(id="x@1", kind="unknown"))


def test_verdict_and_failure_are_json_and_round_trip() -> None:
    v = Verdict(
        "R2",
        VerdictStatus.FAIL,
        Evidence("mask-0-foot-left-visible.png", None, "gap 0.1"),
        "geometry@1",
        12.5,
        usage={"input_tokens": 3},
        cost_usd=0.001,
        details={"gap_ratio": {"left": 0.1}},
    )
    data = json.loads(json.dumps(v.to_dict()))
    assert data["status"] == "fail" and data["evidence"]["time_s"] is None
    assert Verdict.from_dict(data) == v
    f = JudgeFailure("R2", "vision-llm-openai@1", "timeout", "no reply in 60s")
    assert json.loads(json.dumps(f.to_dict()))["cause"] == "timeout"
    with pytest.raises(ValueError):
        Verdict("R2", cast(Any, "maybe"), Evidence(None, None, ""), "x@1")


def test_panels_are_versioned_data() -> None:
    panel = panel_for_family("pelican-bicycle")
    assert panel.id == "pelican-bicycle-default@1"
    assert panel.profiles_for("R2") == ("static@1", "geometry@1")
    llm = JudgePanel("p@1", "fam", {"*": ("a@1", "b@1"), "F1": ("a@1",)})
    assert llm.profiles_for("F1") == ("a@1",) and llm.profiles_for("R1") == ("a@1", "b@1")
    other = JudgePanel("p@1", "fam", {"*": ("a@1",)})
    assert llm.content_hash() != other.content_hash()
    assert json.loads(json.dumps(llm.to_dict()))["assignments"]["F1"] == ["a@1"]
