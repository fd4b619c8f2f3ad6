"""The framed wire protocol (no sandbox needed)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from sandbox.protocol import (
    FrameReader,
    FrameTimeoutError,
    FrameTooLargeError,
    ProtocolError,
    encode_frame,
    encode_message,
    write_all,
)


def _pipe_with(data: bytes, close: bool = True) -> FrameReader:
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        write_all(write_fd, data)
        if close:
            os.close(write_fd)

    threading.Thread(target=feed).start()
    return FrameReader(read_fd)


def test_message_with_files_round_trips() -> None:
    files = {"frame-0.png": b"\x89PNG" + bytes(range(256)) * 300, "empty.bin": b""}
    reader = _pipe_with(encode_message({"type": "result", "id": 7, "result": {"a": [1, 2]}}, files))
    header, got = reader.read_message(time.monotonic() + 5)
    assert header == {"type": "result", "id": 7, "result": {"a": [1, 2]}}
    assert got == files
    assert list(got) == ["frame-0.png", "empty.bin"]


def test_message_over_the_cap_is_refused_before_reading_the_files() -> None:
    message = encode_message({"type": "result"}, {"big.bin": b"x" * 10_000})
    reader = _pipe_with(message)
    with pytest.raises(FrameTooLargeError, match="cap is 5000"):
        reader.read_message(time.monotonic() + 5, max_bytes=5000)


def test_single_frame_over_the_cap_is_refused() -> None:
    reader = _pipe_with(encode_frame(b"B", b"y" * 2048))
    with pytest.raises(FrameTooLargeError):
        reader.read_frame(max_bytes=1024)


def test_deadline_raises_frame_timeout() -> None:
    read_fd, write_fd = os.pipe()
    reader = FrameReader(read_fd)
    started = time.monotonic()
    with pytest.raises(FrameTimeoutError):
        reader.read_message(time.monotonic() + 0.3)
    assert 0.25 < time.monotonic() - started < 2
    os.close(write_fd)
    os.close(read_fd)


def test_tick_is_called_while_waiting() -> None:
    read_fd, write_fd = os.pipe()
    ticks: list[float] = []
    reader = FrameReader(read_fd, tick=lambda: ticks.append(time.monotonic()))
    with pytest.raises(FrameTimeoutError):
        reader.read_message(time.monotonic() + 0.8)
    assert len(ticks) >= 2
    os.close(write_fd)
    os.close(read_fd)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"J\x00\x00\x00\x05ab", "pipe closed"),
        (b"X\x00\x00\x00\x01a", "unknown frame kind"),
        (encode_frame(b"J", b"[1, 2]"), "not a JSON object"),
        (encode_frame(b"J", b"{nope"), "not JSON"),
        (encode_frame(b"B", b"raw"), "expected a JSON header"),
    ],
)
def test_malformed_input_is_a_protocol_error(data: bytes, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        _pipe_with(data).read_message(time.monotonic() + 5)


def test_file_frame_must_match_its_spec() -> None:
    data = encode_frame(b"J", b'{"files": [{"name": "a", "size": 3}]}') + encode_frame(b"B", b"ab")
    with pytest.raises(ProtocolError, match="does not match"):
        _pipe_with(data).read_message(time.monotonic() + 5)


def test_write_to_a_peer_that_stops_reading_times_out() -> None:
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    with pytest.raises(FrameTimeoutError, match="not reading"):
        write_all(write_fd, b"z" * (4 << 20), time.monotonic() + 0.3)
    assert time.monotonic() - started < 2
    os.close(write_fd)
    os.close(read_fd)
