"""Issue 14 item 16: ``regua tasks list`` never cuts a task ref, whatever the terminal width."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from service.cli import app
from tasks import bundled_registry


@pytest.mark.parametrize("columns", ["80", "60", "200"])
def test_tasks_list_prints_every_ref_whole(columns: str) -> None:
    """At 80 columns every ref used to print as ``pelican-bic…``: the user could not copy one."""
    listed = CliRunner().invoke(app, ["tasks", "list"], env={"COLUMNS": columns})
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert max(len(line) for line in lines) <= int(columns)
    notes = next(i for i, line in enumerate(lines) if line.startswith("retired "))
    assert lines[notes].startswith("retired pelican-bicycle-static@1: its criteria score")
    lines = lines[:notes]  # the table; the retirement notes follow it
    refs = [spec.ref for spec in bundled_registry().all()]
    first_words = [
        line.split()[0] for line in lines if line.strip().startswith(("pelican", "lighthouse"))
    ]
    assert first_words == refs  # one whole ref per task, in registry order
    assert not any(line.split()[0].endswith("…") for line in lines if line.strip())
