"""A stored stage status is narrowed to the statuses a stage can finish with."""

from __future__ import annotations

import pytest

from service.storage.details import stage_status


@pytest.mark.parametrize("value", ["done", "skipped", "incomplete"])
def test_a_known_status_reads_as_itself(value: str) -> None:
    assert stage_status(value) == value


@pytest.mark.parametrize("value", ["queued", "DONE", ""])
def test_any_other_status_reads_as_none(value: str) -> None:
    assert stage_status(value) is None
