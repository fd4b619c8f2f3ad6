"""Panels for any registered task family (issue 22 point 3), without a service.

A panel's family is checked against the bundled tasks and, when they lack it, a family source
(the configured task store); a family without a panel of its own gets ``family-default@1`` when
a vision model is configured, ``static-only@1`` when not; a watched judges folder registers files
added while the process runs.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

import judges
from regua.errors import ConfigurationError
from regua.settings import Settings


@pytest.fixture
def tag() -> str:
    """A fresh id stem (panels register process-wide)."""
    return f"f{uuid.uuid4().hex[:10]}"


def _panel_file(tag: str, family: str, criterion: str = "O1") -> str:
    return (
        f"panels:\n  - id: {tag}@1\n    family: {family}\n    assignments:\n"
        f'      "*": [static@1, vision-llm-openai@1]\n      {criterion}: [vision-llm-openai@1]\n'
    )


def test_a_family_without_a_panel_of_its_own_gets_the_default(tag: str) -> None:
    family = f"{tag}-animals"
    assert judges.panel_for_family(family) is judges.STATIC_ONLY
    seeing = Settings(judge_model="m")
    assert judges.panel_for_family(family, seeing) is judges.FAMILY_DEFAULT
    assert judges.FAMILY_DEFAULT.profiles_for("F1") == ("static@1",)
    assert judges.FAMILY_DEFAULT.profiles_for("O1") == ("static@1", "vision-llm-openai@1")
    # the pelican family keeps its registered default whatever is configured
    assert judges.panel_for_family("pelican-bicycle", seeing).id == "pelican-bicycle-default@1"


def test_a_panel_needs_a_registered_family_and_then_is_the_family_default(
    tag: str, tmp_path: Path
) -> None:
    family = f"{tag}-animals"
    src = tmp_path / "p.yaml"
    src.write_text(_panel_file(tag, family))
    folder = tmp_path / "judges"
    with pytest.raises(ConfigurationError, match=rf"family '{family}' has no registered task"):
        judges.add_judge_file(src, folder)
    with pytest.raises(ConfigurationError, match=r"assignments\.O1: no task of family"):
        judges.add_judge_file(src, folder, lambda: {family: {"F1", "K1"}})
    assert not (folder / "p.yaml").exists()
    loaded = judges.add_judge_file(src, folder, lambda: {family: {"F1", "O1"}})
    assert [p.id for p, _src in loaded.panels] == [f"{tag}@1"]
    assert judges.panel_for_family(family).id == f"{tag}@1"  # its own panel, no vision needed
    # a folder loaded by a command that cannot know the store takes the family as declared
    assert judges.load_judges_dir(folder, lenient=True).panels
    with pytest.raises(ConfigurationError, match="has no registered task"):
        judges.load_judges_dir(folder)


def test_a_watched_folder_registers_what_is_added_later(
    tag: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "judges"
    folder.mkdir()
    watch = judges.FolderWatch(folder, lambda: {f"{tag}-animals": {"F1", "O1"}})
    assert watch.refresh(force=True) is None  # nothing changed
    (folder / "p.yaml").write_text(_panel_file(tag, f"{tag}-animals"))
    loaded = watch.refresh(force=True)
    assert loaded is not None and judges.get_panel(f"{tag}@1").family == f"{tag}-animals"
    (folder / "q.yaml").write_text("panels: [{id: broken@1, family: nope, assignments: {}}]\n")
    with caplog.at_level(logging.ERROR, logger="judges.judge_files"):
        assert watch.refresh(force=True) is None
    assert "not reloaded" in caplog.text and "q.yaml" in caplog.text
    assert judges.get_panel(f"{tag}@1")  # what was registered stays


def test_the_service_installs_the_watch_as_a_lookup_hook(tag: str, tmp_path: Path) -> None:
    folder = tmp_path / "judges"
    folder.mkdir()
    settings = Settings(judges_dir=folder)
    watch = judges.watch_configured(settings, lambda: {f"{tag}-animals": {"O1"}})
    assert watch is not None
    try:
        watch.interval_s = 0.0
        (folder / "p.yaml").write_text(_panel_file(tag, f"{tag}-animals"))
        assert judges.get_panel(f"{tag}@1").id == f"{tag}@1"  # found on the lookup itself
    finally:
        judges.unwatch(watch)
    assert judges.watch_configured(Settings(), None) is None
