"""A process's start-up: what it imports, loaded without the garbage collector's rescans."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Meanwhile the garbage collector is paused, then everything loaded so far is frozen
    out of its scans (`gc.freeze`). Imports allocate hundreds of thousands of objects that
    live as long as the process: collecting as they load scanned them again and again
    (about a tenth of a second of an `autograder grade`, as much of PyTorch's import), and
    each later full collection would scan them once more. The little garbage the imports
    leave is kept, not collected. Nested, the outer one decides."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.freeze()
            gc.enable()
