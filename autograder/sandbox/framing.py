"""Length-prefixed JSON frames: how the grader and its execution workers talk over pipes.

Every frame is bounded before it is trusted: its size (`MAX_FRAME_BYTES`) and how deeply
its JSON nests (`MAX_FRAME_DEPTH`). A notebook can write anything to its pipe, so a frame
that breaks a bound is a `FrameError` with a clear message, never a RecursionError that
would kill the process reading it.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_FRAME_DEPTH = 64
# The worker's "done" frame holds each cell frame in a list, and a cell frame holds each
# output in a list: the notebook's frames and outputs get that much less room.
CELL_FRAME_DEPTH = MAX_FRAME_DEPTH - 2
OUTPUT_DEPTH = CELL_FRAME_DEPTH - 2


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


def nesting_depth(value: Any) -> int:
    """How deeply lists and dicts nest in `value` (a scalar: 0), without recursion."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def check_frame_size(size: int, max_bytes: int = MAX_FRAME_BYTES) -> None:
    """FrameError if a frame announced as `size` bytes is over the limit."""
    if size > max_bytes:
        raise FrameError(f"frame of {size} bytes exceeds the limit of {max_bytes}")


def decode_frame(body: bytes, max_depth: int = MAX_FRAME_DEPTH) -> dict[str, Any]:
    """A frame's body as a JSON object; FrameError if malformed or nested too deeply."""
    too_deep = f"frame nested deeper than {max_depth} levels"
    try:
        message = json.loads(body)
    except RecursionError:
        raise FrameError(too_deep) from None
    except ValueError as error:
        raise FrameError(f"malformed frame: {str(error)[:200]}") from None
    if not isinstance(message, dict):
        raise FrameError("a frame must hold a JSON object")
    if nesting_depth(message) > max_depth:
        raise FrameError(too_deep)
    return message


def read_frame(
    fd: int, max_bytes: int = MAX_FRAME_BYTES, max_depth: int = MAX_FRAME_DEPTH
) -> dict[str, Any]:
    """Read one frame; FrameError if it is too large, too deep, malformed or not an object."""
    (size,) = HEADER.unpack(read_exactly(fd, HEADER.size))
    check_frame_size(size, max_bytes)
    return decode_frame(read_exactly(fd, size), max_depth)
