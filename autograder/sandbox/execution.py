"""The execution worker: reads the grader's requests and relays each notebook's outputs.

One worker runs per grading slot (inside bubblewrap when the sandbox is on), as two
processes. Its first act, before it reads anything, is to fork the template
(`autograder.sandbox.template`), which imports IPython once (and torch, once an
assignment needs it) and from then on only forks one child per notebook. This process,
the relay, handles the requests: for each it writes the request into a fresh memory
file, asks the template for a child that reads it, and reads the frames the child writes
to a fresh pipe. The relay holds every student's data in turn, but nothing is ever
forked from it; the template, which every notebook starts from, never holds any (see
`template` and `notebook`).

The relay enforces the notebook's limits in time: the CPU its processes spend together
(counted by its cgroup, so a busy machine does not use the budget up) and, for a notebook
that waits rather than computes, the wall time. It caps the output it relays; every
frame is bounded in size and depth (`framing`), so nothing a notebook writes to its pipe
can kill the relay: it is that notebook's failure with a reason.
A failure before the notebook's first cell started is reported with `started: false`:
the grader then fails the submission instead of recording a grade.

Protocol (length-prefixed JSON frames, see `framing`): the grader sends
`{"cells": [source, ...], "limits": {...}, "calls": [...]}` on stdin; the worker answers
with one `{"event": "done", "cells": [...], "calls": [...], "status": ...}` frame holding
every executed cell's outputs (the child streams them to the relay cell by cell, so a
notebook that dies or times out still reports the cells it finished).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from typing import Any

from autograder.sandbox.framing import (
    CELL_FRAME_DEPTH,
    HEADER,
    FrameError,
    check_frame_size,
    decode_frame,
    encode_frame,
    read_frame,
    write_frame,
)
from autograder.sandbox.isolation import (
    DEFAULT_LIMITS,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    libc,
)
from autograder.sandbox.template import Template


def kill_quietly(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def reap_all() -> None:
    """Collect every exited child (the relay is a subreaper for orphans)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def cgroup_pids(procs_files: list[str]) -> list[int]:
    """The processes in the notebook groups (0 for one outside this process's view)."""
    pids: list[int] = []
    for path in procs_files:
        with open(path) as procs:
            pids.extend(int(line) for line in procs.read().split())
    return pids


def cgroups_empty(procs_files: list[str], wait: float = 10.0) -> bool:
    """Whether the notebook groups are empty, once any straggler of the previous notebook
    is killed: every notebook's processes were already killed when it ended, but on a busy
    machine the last of them (a fork bomb's, say) can take seconds to leave its group."""
    deadline = time.monotonic() + wait
    while True:
        reap_all()
        stragglers = cgroup_pids(procs_files)
        if not stragglers:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in stragglers:
            if pid > 0 and pid != os.getpid():  # kill(0) would be this process's own group
                kill_quietly(pid)
        time.sleep(0.01)


def cpu_seconds_used(text: str) -> float:
    """CPU seconds in a cgroup's counter: v1 `cpuacct.usage` (nanoseconds) or v2 `cpu.stat`."""
    if text.strip().isdigit():
        return int(text) / 1e9
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == "usage_usec":
            return int(value) / 1e6
    raise ValueError("no usage_usec line in cpu.stat")


class CpuCounter:
    """The notebook group's CPU seconds since it started ('' path: not counted, None)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.start = self.read() if path else None

    def read(self) -> float:
        with open(self.path) as counter:
            return cpu_seconds_used(counter.read())

    def spent(self) -> float | None:
        return None if self.start is None else self.read() - self.start


def answer(done: dict[str, Any], cells: list[Any], calls: list[Any]) -> None:
    """One frame for the whole notebook: the grader's reading thread wakes up once."""
    sys.stdout.buffer.write(encode_frame({**done, "cells": cells, "calls": calls}))
    sys.stdout.buffer.flush()


def refuse(detail: str) -> None:
    answer({"event": "done", "status": "error", "detail": detail, "started": False}, [], [])


def cpu_spent(cpu: CpuCounter) -> float | None:
    """The notebook's CPU seconds, rounded (None: not counted, or the counter is gone)."""
    try:
        spent = cpu.spent()
    except (OSError, ValueError):
        return None
    return None if spent is None else round(spent, 4)


CPU_POLL_SECONDS = 0.2  # how often the relay reads the notebook's CPU counter


class Relay:
    """Reads one notebook's frames from its pipe, within the time and output limits."""

    def __init__(
        self, read_fd: int, limits: dict[str, float], started: float, cpu: CpuCounter
    ) -> None:
        self.read_fd = read_fd
        self.deadline = started + limits["wall_seconds"]
        self.wall = limits["wall_seconds"]
        self.cpu, self.cpu_budget = cpu, limits["cpu_seconds"]
        self.max_bytes = int(limits["max_output_bytes"]) * 2 + 1_000_000
        self.relayed = 0
        self.buffer = b""
        self.grandchild = 0
        self.cells: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.status, self.detail = "died", ""
        self.learner_started = False  # the first cell's start: learner code runs from here on

    def run(self) -> None:
        """Relay until the child says done, hangs up, or breaks a limit."""
        next_poll = time.monotonic()
        while True:
            now = time.monotonic()
            remaining = self.deadline - now
            if remaining <= 0:
                self.status = "timeout"
                self.detail = f"the notebook ran longer than {self.wall:g} s"
                return
            if now >= next_poll:
                next_poll = now + CPU_POLL_SECONDS
                if self.over_cpu_budget():
                    return
            if not select.select([self.read_fd], [], [], min(remaining, CPU_POLL_SECONDS))[0]:
                continue
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                return
            self.buffer += chunk
            self.relayed += len(chunk)
            if self.relayed > self.max_bytes:
                self.status = "output_limit"
                self.detail = f"the notebook produced more than {self.max_bytes} bytes"
                return
            try:
                if self.take_frames():
                    return
            except FrameError as error:
                self.status, self.detail = "protocol", f"the notebook wrote a bad frame: {error}"
                return

    def over_cpu_budget(self) -> bool:
        """Whether the notebook's processes have spent their CPU time (then say so)."""
        spent = self.cpu.spent()
        if spent is None or spent <= self.cpu_budget:
            return False
        self.status = "timeout"
        self.detail = (
            f"the notebook's processes used more than {self.cpu_budget:g} s of CPU time together"
        )
        return True

    def take_frames(self) -> bool:
        """Handle every whole frame in the buffer; True once the child said done."""
        while len(self.buffer) >= HEADER.size:
            (size,) = HEADER.unpack(self.buffer[: HEADER.size])
            try:
                check_frame_size(size, self.max_bytes)
            except FrameError as error:
                self.status, self.detail = "output_limit", f"an output frame was too large: {error}"
                return True
            if len(self.buffer) < HEADER.size + size:
                return False
            body = self.buffer[HEADER.size : HEADER.size + size]
            self.buffer = self.buffer[HEADER.size + size :]
            frame = decode_frame(body, CELL_FRAME_DEPTH)
            event = frame.get("event")
            if event == "pid" and not self.grandchild and isinstance(frame.get("pid"), int):
                self.grandchild = frame["pid"]
            elif event == "start":
                self.learner_started = True
            elif event == "done":
                if frame.get("error"):
                    self.status, self.detail = "error", str(frame["error"])[:1000]
                else:
                    self.status, self.detail = "ok", ""
                return True
            elif event == "cell" and isinstance(frame.get("index"), int):
                self.cells.append(frame)
            elif event == "call":
                self.calls.append(frame)
        return False


def relay(request: dict[str, Any], template: Template) -> bool:
    """Run one request in a child of the template and answer the grader.

    False when the template is gone: the worker then exits (the grader starts a new
    one), since a new template must never be forked from the relay, which holds data."""
    limits = {**DEFAULT_LIMITS, **request.get("limits", {})}
    request["limits"] = limits
    request.setdefault("workdir", f"/tmp/autograder-{os.getpid()}")
    procs = list(request.get("cgroups", []))
    if procs and not cgroups_empty(procs):
        refuse("processes of an earlier notebook are still running in the notebook's cgroups")
        return True
    try:
        cpu = CpuCounter(str(request.get("cpu_usage", "")))
    except (OSError, ValueError) as error:
        refuse(f"the notebook's CPU time cannot be counted: {error}")
        return True
    request_fd = os.memfd_create("notebook-request")
    write_frame(request_fd, request)
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    child = template.fork(request_fd, write_fd, with_torch=request.get("torch") is True)
    os.close(request_fd)
    os.close(write_fd)
    if child is None:
        os.close(read_fd)
        refuse("the worker's template process is gone")
        return False
    reader = Relay(read_fd, limits, started, cpu)
    reader.run()
    if reader.grandchild:
        kill_quietly(reader.grandchild)
    kill_quietly(child)
    if not reader.grandchild:
        kill_quietly(-child)  # not isolated: the child leads its own process group
    os.close(read_fd)
    wait_status = template.wait_exit()
    if reader.status == "died":
        reader.detail = "the kernel died before the notebook finished"
        if not reader.grandchild and wait_status is not None and os.WIFSIGNALED(wait_status):
            reader.detail += f" (signal {os.WTERMSIG(wait_status)})"
    reap_all()
    done = {
        "event": "done",
        "status": reader.status,
        "detail": reader.detail,
        "elapsed": round(time.monotonic() - started, 4),
        "cpu_seconds": cpu_spent(cpu),
        "started": reader.learner_started,
    }
    answer(done, reader.cells, reader.calls)
    return wait_status is not None


def serve() -> None:
    """Fork the template, then answer requests from stdin until it closes."""
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    sys.stdout.flush()
    sys.stderr.flush()
    template = Template()
    if not template.wait_ready():
        sys.exit("the worker's template process did not start")
    sys.stdout.buffer.write(encode_frame({"event": "ready", "pid": os.getpid()}))
    sys.stdout.buffer.flush()
    while True:
        try:
            request = read_frame(0)
        except FrameError:
            return
        if not relay(request, template):
            return


if __name__ == "__main__":
    serve()
