"""Judge profiles and panels declared in YAML: loading, clear errors, freezing, ``regua judges``.

Every test declares ids of its own (profiles and panels register process-wide, like plugins).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judges
from judges.builtin import GEOMETRY_THRESHOLDS, VISION_PARAMS
from judges.vision.templates import STRICT_RULE, TEMPLATES
from regua.errors import ConfigurationError
from service.cli import app


@pytest.fixture
def tag() -> str:
    """A fresh id stem for this test's profiles and panels."""
    return f"t{uuid.uuid4().hex[:10]}"


def three_vision_judges(tag: str) -> str:
    return f"""
profiles:
  - id: {tag}-strict@1
    kind: vision-llm
    api: openai
    model: model-a
    base_url: http://127.0.0.1:9/v1
    api_key_env: {tag.upper()}_KEY_A
    provider: openai
    prompt_version: criterion-json-strict@1
  - id: {tag}-balanced@1
    kind: vision-llm
    api: anthropic
    model: model-b
    base_url: http://127.0.0.1:9
    api_key_env: {tag.upper()}_KEY_B
    provider: anthropic
  - id: {tag}-geo@1
    kind: geometry
    thresholds: {{contact_pass_max: 0.01}}
panels:
  - id: {tag}-panel@1
    family: pelican-bicycle
    exclude_own_provider: true
    description: two vision judges and strict geometry
    assignments:
      "*": [static@1, {tag}-geo@1, {tag}-strict@1, {tag}-balanced@1]
      F1: [static@1]
"""


def test_a_file_declares_profiles_and_a_panel(tag: str, tmp_path: Path) -> None:
    folder = tmp_path / "judges"
    folder.mkdir()
    (folder / "mine.yaml").write_text(three_vision_judges(tag))
    loaded = judges.load_judges_dir(folder)
    assert sorted(p.id for p, _ in loaded.profiles) == sorted(
        [f"{tag}-strict@1", f"{tag}-balanced@1", f"{tag}-geo@1"]
    )
    strict = judges.get_profile(f"{tag}-strict@1")
    assert strict.prompt_version == "criterion-json-strict@1"
    assert strict.prompt_template == TEMPLATES["criterion-json-strict@1"]
    assert STRICT_RULE in strict.prompt_template
    assert strict.params["api_key_env"] == f"{tag.upper()}_KEY_A"
    assert strict.params["provider"] == "openai"
    assert strict.params["max_frames"] == VISION_PARAMS["max_frames"]  # the kind's defaults
    balanced = judges.get_profile(f"{tag}-balanced@1")
    assert balanced.prompt_version == "criterion-json@1" and balanced.params["api"] == "anthropic"
    geo = judges.get_profile(f"{tag}-geo@1")
    assert geo.thresholds["contact_pass_max"] == 0.01
    assert geo.thresholds["seat_sink_max"] == GEOMETRY_THRESHOLDS["seat_sink_max"]
    assert geo.params["veto_only"] == ("B1",)  # geometry never confirms recognition
    panel = judges.get_panel(f"{tag}-panel@1")
    assert panel.exclude_own_provider and panel.profiles_for("F1") == ("static@1",)
    assert judges.source_of(panel.id) == str(folder / "mine.yaml")
    assert judges.source_of("static@1") == "builtin"
    judges.load_judges_dir(folder)  # loading the same files again changes nothing


BAD_FILES = [
    ("profiles: [\n", "not valid YAML"),
    ("", "empty judge file"),
    ("- a list\n", "a judge file is a mapping with profiles and panels"),
    ("profiles:\n  - {id: X@1, kind: static, modle: m}\n", "profiles[0].modle: Extra inputs"),
    ("profiles:\n  - {id: nover, kind: static}\n", "profiles[0].id: String should match"),
    ("profiles:\n  - {id: X@1}\n", "profiles[0].kind: Field required"),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, api: gemini}\n",
        "profiles[0].api: Input should be 'openai' or 'anthropic'",
    ),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, api_key: sk-123}\n",
        "profiles[0]: an API key never goes in a judge file",
    ),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, params: {secret: sk-123}}\n",
        "profiles[0]: an API key never goes in a judge file",
    ),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, api_key_env: not-a-name}\n",
        "profiles[0].api_key_env: String should match",
    ),
    ("profiles:\n  - {id: X@1, kind: telepathy}\n", "kind 'telepathy' is not a registered"),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, prompt_version: criterion-json@9}\n",
        "prompt_version: unknown prompt template 'criterion-json@9'",
    ),
    (
        "profiles:\n  - {id: X@1, kind: vision-llm, prompt_template: 'no separator'}\n",
        "prompt_template text needs its own prompt_version",
    ),
    (
        "profiles:\n  - {id: X@1, kind: geometry, thresholds: {contact_pass: 0.1}}\n",
        "unknown geometry threshold 'contact_pass'",
    ),
    ("profiles:\n  - {id: X@1, kind: static, api: openai}\n", "api is only for vision-llm"),
    (
        "profiles:\n  - {id: X@1, kind: static}\n  - {id: X@1, kind: static}\n",
        "profile X@1 is declared twice",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_a_bad_file_is_refused_naming_the_file_and_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as err:
        judges.parse_judge_text(text, "bad.yaml")
    assert str(err.value).startswith("bad.yaml: ")
    assert message in str(err.value)


BAD_PANELS = [
    ('{id: P@1, family: pelican-bicycle, assignments: {"*": [nobody@1]}}', "unknown judge profile"),
    ("{id: P@1, family: pelican-bicycle, assignments: {Z9: [static@1]}}", "Z9: no task"),
    (
        "{id: P@1, family: unicorns, assignments: {P1: [static@1]}}",
        "'unicorns' has no registered task",
    ),
    ("{id: P@1, family: pelican-bicycle, assignments: {}}", "panels[0].assignments: Dictionary"),
    ("{id: P@1, family: pelican-bicycle, assignments: {P1: []}}", "P1: names no judge profile"),
]


@pytest.mark.parametrize(("panel", "message"), BAD_PANELS)
def test_a_bad_panel_is_refused(panel: str, message: str, tmp_path: Path, tag: str) -> None:
    folder = tmp_path / "judges"
    folder.mkdir()
    (folder / "p.yaml").write_text(f"panels:\n  - {panel.replace('P@1', f'{tag}@1')}\n")
    with pytest.raises(ConfigurationError) as err:
        judges.load_judges_dir(folder)
    assert message in str(err.value) and "p.yaml" in str(err.value)
    with pytest.raises(Exception, match="unknown judge panel"):
        judges.get_panel(f"{tag}@1")  # nothing was registered


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        judges.load_judges_dir(tmp_path / "nowhere")


def test_added_ids_are_frozen_and_an_edit_needs_a_new_version(tmp_path: Path, tag: str) -> None:
    folder, src = tmp_path / "judges", tmp_path / "geo.yaml"
    src.write_text(f"profiles:\n  - {{id: {tag}@1, kind: geometry}}\n")
    judges.add_judge_file(src, folder)
    lock = json.loads((folder / "judges.lock.json").read_text())
    assert lock["profiles"] == {f"{tag}@1": judges.get_profile(f"{tag}@1").content_hash()}
    judges.add_judge_file(src, folder)  # the same file again: no change
    # an edit in place of an added file: the next load names the id and both hashes
    edited = f"profiles:\n  - {{id: {tag}@1, kind: geometry, thresholds: {{seat_sink_max: 0.3}}}}\n"
    (folder / "geo.yaml").write_text(edited)
    with pytest.raises(ConfigurationError, match=rf"profile {tag}@1 changed since it was added"):
        judges.load_judges_dir(folder)
    # a new file re-using the id with other content: refused, nothing written
    (folder / "geo.yaml").write_text(src.read_text())
    other = tmp_path / "other.yaml"
    other.write_text(edited)
    with pytest.raises(ConfigurationError, match=rf"profile {tag}@1 changed .*give it a new id"):
        judges.add_judge_file(other, folder)
    assert not (folder / "other.yaml").exists()


def test_a_builtin_id_cannot_be_redeclared(tmp_path: Path) -> None:
    src = tmp_path / "geo.yaml"
    src.write_text(
        "profiles:\n  - {id: geometry@2, kind: geometry, thresholds: {seat_sink_max: 1}}"
    )
    with pytest.raises(ConfigurationError, match="geometry@2 is already registered"):
        judges.add_judge_file(src, tmp_path / "judges")


def test_regua_judges_add_and_list(tmp_path: Path, tag: str) -> None:
    folder, src = tmp_path / "judges", tmp_path / "mine.yaml"
    src.write_text(three_vision_judges(tag))
    runner = CliRunner()
    added = runner.invoke(app, ["judges", "add", str(src), "--dir", str(folder)])
    assert added.exit_code == 0, added.output
    strict = judges.get_profile(f"{tag}-strict@1")
    assert f"profile {tag}-strict@1  kind vision-llm  hash {strict.content_hash()}" in added.output
    assert f"panel {tag}-panel@1  family pelican-bicycle" in added.output
    env = {"REGUA_JUDGES_DIR": str(folder), "REGUA_JUDGE_MODEL": "llava:13b"}
    listed = runner.invoke(app, ["judges", "list", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    doc = json.loads(listed.output)
    by_id = {j["id"]: j for j in doc["judges"]}
    assert by_id[f"{tag}-strict@1"]["source"] == str(folder / "mine.yaml")
    assert by_id[f"{tag}-strict@1"]["votes_as"]["id"] == f"{tag}-strict@1"  # its model is fixed
    assert by_id["vision-llm-openai@1"]["votes_as"]["id"] == "vision-llm-openai+llava-13b@1"
    assert "prompt_template" not in by_id[f"{tag}-strict@1"]
    assert f"{tag}-panel@1" in {p["id"] for p in doc["panels"]}


def test_regua_judges_add_refuses_a_bad_file_with_exit_2(tmp_path: Path) -> None:
    src = tmp_path / "bad.yaml"
    src.write_text("profiles:\n  - {id: X@1, kind: static, modle: m}\n")
    result = CliRunner().invoke(app, ["judges", "add", str(src), "--dir", str(tmp_path / "j")])
    assert result.exit_code == 2
    assert "profiles[0].modle: Extra inputs are not permitted" in result.output
    assert not (tmp_path / "j" / "bad.yaml").exists()


def test_a_bad_judges_folder_stops_every_command_with_its_message(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("profiles:\n  - {id: X@1, kind: telepathy}\n")
    env = {"REGUA_JUDGES_DIR": str(tmp_path)}
    result = CliRunner().invoke(app, ["tasks", "list", "--json"], env=env)
    assert result.exit_code == 2
    assert "REGUA_JUDGES_DIR:" in result.output and "kind 'telepathy'" in result.output


def test_settings_read_regua_judges_dir_and_regua_panel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from regua.settings import Settings

    monkeypatch.setenv("REGUA_JUDGES_DIR", str(tmp_path))
    monkeypatch.setenv("REGUA_PANEL", "pelican-bicycle-vision@1")
    conf = Settings()
    assert conf.judges_dir == tmp_path and conf.panel == "pelican-bicycle-vision@1"
