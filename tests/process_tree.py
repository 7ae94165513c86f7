"""Stopping a test's server with everything it started, even what left its process group.

JupyterHub starts its proxy and its managed services in sessions of their own, so a
signal to the hub's process group misses them; if the hub is killed before its own
clean-up, they outlive the test (a proxy and a check service per run, left running).
`family(pid)` notes every descendant of a process while it still runs (a process that
lost its parent is re-parented and could no longer be found); `end(family)` kills what
of them is still alive, each checked to be the same process (its start time), never a
later one that reused the number.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterable
from pathlib import Path

Process = tuple[int, str]  # (pid, start time in clock ticks since boot)


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, start time) of `pid`, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return int(fields[1]), fields[19]


def parents() -> dict[int, int]:
    """Every running process's parent pid, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))):
            found[int(entry.name)] = stat[0]
    return found


def _below(pid: int, children_of: Callable[[int], Iterable[int]]) -> list[int]:
    """`pid` and every process below it, each one's children from `children_of`."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending += children_of(current)
    return found


def descendants(pid: int, parent_of: dict[int, int] | None = None) -> list[int]:
    """`pid` and every process below it, from `parent_of` (default: `parents()` now)."""
    children: dict[int, list[int]] = {}
    for child, parent in (parent_of if parent_of is not None else parents()).items():
        children.setdefault(parent, []).append(child)
    return _below(pid, lambda current: children.get(current, []))


def _listed_children(pid: int) -> list[int]:
    """The children the kernel lists for each of `pid`'s threads ([] once it is gone)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError):
                found += map(int, (task / "children").read_text().split())
    return found


def walked_descendants(pid: int) -> list[int]:
    """`pid` and every process below it, walked through each one's `children` lists in
    /proc: reads only the tree, where `descendants` reads every process on the machine
    (for a tree polled many times a second). A process made or ended during the walk may
    be missed, as the kernel's lists say."""
    return _below(pid, _listed_children)


def family(pid: int) -> list[Process]:
    """`pid` and every process descended from it, as they are now."""
    return [(p, stat[1]) for p in descendants(pid) if (stat := _stat(p))]


def state(pid: int) -> str | None:
    """`pid`'s state letter (R running, S sleeping, T stopped, Z zombie...), None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether `pid` runs (exists and is not a zombie waiting to be reaped)."""
    return state(pid) not in (None, "Z")


def end(processes: list[Process]) -> list[int]:
    """SIGKILL each of `processes` still running as itself; the pids it killed."""
    killed = []
    for pid, started in processes:
        stat = _stat(pid)
        if stat is None or stat[1] != started:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def end_recorded(pid_file: Path, *marks: bytes) -> int | None:
    """SIGKILL the process `pid_file` names if its command line still holds every one of
    `marks` (that program, not a later one given the number): a server started in a session
    of its own whose parent exited by itself, before its clean-up, and so is no longer in
    its family (a hub's proxy). The pid killed, or None."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text())
        if all(mark in Path(f"/proc/{pid}/cmdline").read_bytes() for mark in marks):
            os.kill(pid, signal.SIGKILL)
            return pid
    return None


def proxy_marks(port: int) -> tuple[bytes, bytes]:
    """What a hub's configurable-http-proxy on `port` shows in its command line."""
    return b"configurable-http-proxy", f"--port\0{port}\0".encode()


def descriptors(pid: int) -> dict[int, str]:
    """What each open descriptor of `pid` refers to (``socket:[…]``, a path…), by number.
    A descriptor closed while it is read is left out: the process runs on meanwhile."""
    found = {}
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(FileNotFoundError):
            found[int(entry.name)] = os.readlink(entry)
    return found
