"""``read_text``: a file's text, or the caller's error naming the file and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from regua.errors import ConfigurationError, TaskError, read_text


def test_read_text_gives_the_utf8_text(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("name: ü\n", encoding="utf-8")
    assert read_text(path, ConfigurationError) == "name: ü\n"


def test_an_unreadable_file_raises_the_given_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(TaskError, match=r"missing\.yaml: cannot read: No such file") as err:
        read_text(missing, TaskError)
    assert isinstance(err.value.__cause__, FileNotFoundError)
    with pytest.raises(ConfigurationError, match="cannot read: Is a directory"):
        read_text(tmp_path, ConfigurationError)
