"""Length-prefixed JSON frames: how the grader and its execution workers talk over pipes."""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024


class FrameError(Exception):
    """The other side sent something that is not a well-formed frame, or hung up."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """Serialise one message (JSON, no NaN) with its 4-byte length prefix."""
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    return HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Write one frame to a file descriptor, all of it."""
    data = memoryview(encode_frame(message))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exactly(fd: int, size: int) -> bytes:
    """Read `size` bytes from `fd`; FrameError on end of file."""
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise FrameError("the other side closed the pipe")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, max_bytes: int = MAX_FRAME_BYTES) -> dict[str, Any]:
    """Read one frame; FrameError if it is too large, malformed or not an object."""
    (size,) = HEADER.unpack(read_exactly(fd, HEADER.size))
    if size > max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds the limit of {max_bytes}")
    try:
        message = json.loads(read_exactly(fd, size))
    except ValueError as error:
        raise FrameError(f"malformed frame: {error}") from None
    if not isinstance(message, dict):
        raise FrameError("a frame must hold a JSON object")
    return message
