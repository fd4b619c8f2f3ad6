"""``regua check``: table and JSON lines, exit codes 0 / 1 / 2, clear messages for bad input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from service.cli import app

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "checks"
GOOD = str(SAMPLES / "pass" / "pelican-static.svg")
BAD = str(SAMPLES / "fail" / "script.svg")
REPLY = str(SAMPLES / "replies" / "fenced-svg.md")
STATIC = ["--task", "pelican-bicycle-static@1"]
runner = CliRunner()


def test_all_pass_exits_0_with_a_table() -> None:
    result = runner.invoke(app, ["check", GOOD, REPLY, *STATIC])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output and "script@1" in result.output


def test_any_fail_exits_1() -> None:
    result = runner.invoke(app, ["check", GOOD, BAD, *STATIC])
    assert result.exit_code == 1
    assert "FAIL" in result.output and "<script> element" in result.output


def test_json_lines() -> None:
    result = runner.invoke(app, ["check", GOOD, BAD, *STATIC, "--json"])
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["status"] for line in lines] == ["pass", "fail"]
    assert lines[1]["file"] == BAD and lines[1]["failed"] == ["script"]
    assert set(lines[0]) >= {"file", "extraction", "status", "checks"}
    assert lines[0]["extraction"]["procedure_id"] == "extract"
    assert {"id", "version", "status", "evidence"} <= set(lines[0]["checks"][0])


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["check", GOOD]).exit_code == 2  # no --task
    unknown = runner.invoke(app, ["check", GOOD, "--task", "nope@1"])
    assert unknown.exit_code == 2 and "unknown task" in unknown.output
    malformed = runner.invoke(app, ["check", GOOD, "--task", "nope"])
    assert malformed.exit_code == 2


def test_binary_missing_and_directory_inputs_get_clear_messages(tmp_path: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = runner.invoke(
        app, ["check", str(binary), str(tmp_path / "gone.svg"), str(tmp_path), GOOD, *STATIC]
    )
    assert result.exit_code == 2
    assert "looks binary" in result.output
    assert "no such file" in result.output
    assert "is a directory" in result.output


def test_no_svg_reply_fails_with_a_message() -> None:
    result = runner.invoke(app, ["check", str(SAMPLES / "replies" / "no-svg.txt"), *STATIC])
    assert result.exit_code == 1 and "no SVG found" in result.output


def test_utf16_file_with_bom_is_text(tmp_path: Path) -> None:
    path = tmp_path / "u16.svg"
    path.write_bytes(Path(GOOD).read_text().encode("utf-16"))
    result = runner.invoke(app, ["check", str(path), *STATIC, "--json"])
    assert result.exit_code == 0, result.output
