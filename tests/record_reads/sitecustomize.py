"""Loaded at start-up by every Python process that a kept nbgrader run starts (this folder
is first on its PYTHONPATH: `nbgrader_course.reads_recorded`): each file the process
opens under $BACKWARD_COURSE_READS_UNDER (the autograder package) is noted, as it is
opened, in $BACKWARD_COURSE_READS, one line a file, after a line naming the process.

Python's audit hook sees every open, the import system's included (a module's source, or
its compiled file in `__pycache__`); nothing else changes in the process. Another
`sitecustomize` further along the path is run after this one, as it would have been."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _record() -> None:
    log, under = (
        os.environ.get("BACKWARD_COURSE_READS"),
        os.environ.get("BACKWARD_COURSE_READS_UNDER"),
    )
    if not log or not under:
        return
    prefix = os.path.join(under, "")
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    with open("/proc/self/cmdline", "rb") as command:
        os.write(out, b"process " + command.read().replace(b"\0", b" ").strip() + b"\n")

    def opened(event: str, args: tuple[object, ...]) -> None:
        if event != "open" or not args:
            return
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, str) and (path := os.path.abspath(path)).startswith(prefix):
            os.write(out, f"read {path}\n".encode())

    sys.addaudithook(opened)


def _the_next_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_record()
_the_next_sitecustomize()
