"""The worker processes that run submissions, one per grading slot.

A `Worker` starts `autograder.sandbox.execution` inside the sandbox (`bwrap`), in its
own cgroups (`cgroups`), as the unprivileged sandbox identity (`settings`), and sends it
one notebook at a time. See `autograder.sandbox.execution` for what happens inside.

Limits are set in `nbgrader_config.py`, e.g. `c.Sandbox.memory_mb = 1024`; where they
cannot be enforced the grader refuses to grade (`SandboxUnavailable`) unless the
instructor opts out with `c.Sandbox.require_cgroups = False`.

This module also names the sandbox's public parts (`__all__`), so callers import them
from one place.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.sandbox.bwrap import (
    INSIDE_CGROUP,
    INSIDE_CPU_USAGE,
    WORKER_FILES,
    bwrap_command,
    check_sandbox,
    readable_paths,
    shim_files,
)
from autograder.sandbox.cgroups import (
    CGROUP_ROOT,
    NotebookGroups,
    cgroup_bases,
    check_cgroups,
    make_groups,
    own_cgroup,
    v1_hierarchies,
)
from autograder.sandbox.framing import FrameError, read_frame, write_frame
from autograder.sandbox.settings import (
    STATE_DIR,
    Identity,
    Sandbox,
    SandboxUnavailable,
    load_config,
    sandbox_identity,
    worker_log_dir,
)

__all__ = [
    "CGROUP_ROOT",
    "STATE_DIR",
    "WORKER_FILES",
    "ExecutionResult",
    "Sandbox",
    "SandboxUnavailable",
    "Worker",
    "cgroup_bases",
    "check_sandbox",
    "default_jobs",
    "load_config",
    "own_cgroup",
    "sandbox_identity",
    "v1_hierarchies",
    "shim_files",
    "worker_log_dir",
]


def default_jobs() -> int:
    """Workers by default: one per core but one, which the grader's own thread needs (it
    prepares, judges and records every notebook, about 0.15 s each; on 2 cores a second
    worker made a class slower: `benchmarks/class_scale.py`)."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass
class ExecutionResult:
    """What one notebook's execution produced."""

    # ok | timeout | died | output_limit | error | worker_died | protocol | unavailable
    status: str
    detail: str = ""
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    cpu_seconds: float | None = None  # its processes' CPU together (None: not counted)
    started: bool = False  # did any of the notebook's own code start to run?

    @property
    def executed(self) -> bool:
        """Whether the notebook really ran: False means a failure of the grader, not of it."""
        return self.started and self.status not in ("worker_died", "unavailable")


class Worker:
    """One execution worker process (inside the sandbox when enabled)."""

    def __init__(self, sandbox: Sandbox, log_dir: Path) -> None:
        self.sandbox = sandbox
        self.log_dir = log_dir
        self.process: subprocess.Popen[bytes] | None = None
        self.groups: NotebookGroups | None = None
        self.log_path = log_dir / f"worker-{os.getpid()}-{id(self)}.log"
        self._starting = False  # spawned, its "ready" not read yet

    def start_soon(self) -> None:
        """Spawn the worker without waiting; the next `execute` waits for it to be ready.

        The grader calls this before discovering and preparing submissions, so the
        worker's fixed start-up (bubblewrap, Python, IPython) overlaps that work.
        It spawns in the calling thread: the sandbox dies with the thread that started it
        (PR_SET_PDEATHSIG), so that thread must outlive the worker (the main thread does).
        """
        if self.process is None and not self._starting:
            try:
                self.spawn()
            except SandboxUnavailable:
                self.stop()
                return  # `execute` starts afresh and reports why
            self._starting = True

    def start(self) -> None:
        """Start the worker and wait until it is ready."""
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the worker process (SandboxUnavailable if that cannot be done)."""
        self._starting = False
        python = str(Path(sys.prefix) / "bin" / "python")
        identity = Identity()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self.sandbox.enabled:
                identity = sandbox_identity(self.sandbox)
                if self.sandbox.require_cgroups:
                    bases = check_cgroups(self.sandbox, identity)
                    self.groups = make_groups(self.sandbox, bases, identity)
                command = bwrap_command(self.sandbox, python, self.groups)
                env: dict[str, str] | None = None
                launcher = [sys.executable, "-I", str(Path(__file__).with_name("launch.py"))]
                if self.groups is not None:
                    # Join the worker's groups before anything forks.
                    launcher += [
                        "--procs",
                        *(str(g / "cgroup.procs") for g in self.groups.worker.values()),
                    ]
                if identity.uid is not None:
                    launcher += ["--uid", str(identity.uid), "--gid", str(identity.gid)]
                    shown = {*readable_paths(), *(f.parent for f in shim_files().values())}
                    launcher += ["--reveal", *map(str, sorted(shown))]
                command = [*launcher, "--", *command]
            else:
                command = [python, "-m", "autograder.sandbox.execution"]
                env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
            with open(self.log_path, "ab") as stderr:
                self.process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=env,
                    cwd="/",
                    start_new_session=True,  # Ctrl-C reaches the grader, which stops them
                )
        except OSError as error:
            raise SandboxUnavailable(f"cannot start the execution worker: {error}") from None

    def wait_ready(self) -> None:
        """Wait until the spawned worker is ready (SandboxUnavailable if not)."""
        self._starting = False
        ready = self._read(deadline=time.monotonic() + 120)
        if ready is None or ready.get("event") != "ready":
            self.stop()
            tail = ""
            with contextlib.suppress(OSError):
                tail = self.log_path.read_text(errors="replace").strip()[-600:]
            raise SandboxUnavailable(f"the execution worker did not start: {tail or 'no output'}")

    def _read(self, deadline: float) -> dict[str, Any] | None:
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return None
        try:
            return read_frame(fd)
        except FrameError:
            return None

    def execute(
        self,
        cells: list[str],
        calls: list[dict[str, Any]] | None = None,
        givens: dict[str, float] | None = None,
        learner: str = "",
        problem: str = "",
        with_torch: bool = False,
    ) -> ExecutionResult:
        """Run the code cells of one notebook; never raises for anything the notebook does.
        `givens`, `learner` and `problem` (the learner's problem in words) are what the
        Given cell prints. `with_torch`: the assignment's own code uses torch, so the
        worker's template imports it once for every later notebook (say it from the
        instructor's cells only: what a template holds must not depend on a learner's)."""
        if self._starting:
            try:
                self.wait_ready()
            except SandboxUnavailable as error:
                return ExecutionResult("unavailable", str(error))
        if self.process is None or self.process.poll() is not None:
            try:
                self.start()
            except (SandboxUnavailable, OSError) as error:
                return ExecutionResult("unavailable", str(error))
        assert self.process is not None and self.process.stdin is not None
        limits = self.sandbox.limits()
        request = {
            "cells": cells,
            "limits": limits,
            "calls": calls or [],
            "givens": givens or {},
            "learner": learner,
            "problem": problem,
            "torch": with_torch,
            "isolate": True,
            "require_isolation": self.sandbox.enabled,
            "cgroups": (
                [f"{INSIDE_CGROUP}/{c}" for c in self.groups.notebook] if self.groups else []
            ),
            "cpu_usage": INSIDE_CPU_USAGE if self.groups else "",
        }
        try:
            write_frame(self.process.stdin.fileno(), request)
        except OSError:
            self.stop()
            return ExecutionResult("worker_died", "the execution worker stopped responding")
        result = ExecutionResult("worker_died")
        deadline = time.monotonic() + limits["wall_seconds"] + 30
        while True:
            frame = self._read(deadline)
            if frame is None:
                self.stop()
                result.status = "worker_died"
                result.detail = "the execution worker stopped responding"
                return result
            if frame.get("event") == "done":
                for cell in frame.get("cells", []):
                    result.cells[int(cell["index"])] = cell
                result.calls = list(frame.get("calls", []))
                result.status = str(frame.get("status", "error"))
                result.detail = str(frame.get("detail", ""))
                result.elapsed = float(frame.get("elapsed", 0.0))
                cpu = frame.get("cpu_seconds")
                result.cpu_seconds = float(cpu) if isinstance(cpu, (int, float)) else None
                result.started = bool(frame.get("started", False))
                if not result.started:
                    self.stop()  # set-up failed: start afresh for the next notebook
                return result

    def stop(self, now: bool = False) -> None:
        """Stop the worker (it is restarted by the next execute); `now`: kill it at once."""
        self._starting = False
        if self.process is not None:
            try:
                if now:
                    self.process.kill()
                if self.process.stdin:
                    self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
            if self.process.stdout:
                self.process.stdout.close()
            self.process = None
        if self.groups is not None:
            self.groups.remove()
            self.groups = None
