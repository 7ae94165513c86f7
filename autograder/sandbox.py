"""The sandbox submissions run in, and the worker processes that live inside it.

Each grading slot is one worker (`autograder.execution`) started under bubblewrap:
no network (its own network namespace), its own PID and IPC namespaces, a cleared
environment, and a filesystem holding only the Python installation, the virtual
environment and the course's own packages, read-only, plus private tmpfs scratch
space. The course directory (solutions/, the gradebook, other submissions) and the
instructor's home are simply not there. Inside, every notebook runs in a child with
its own user, PID and mount namespaces and rlimits (see `autograder.execution`).

Limits are set in `nbgrader_config.py`, e.g. `c.Sandbox.memory_mb = 1024`.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from traitlets import Bool, Float, Int, Unicode
from traitlets.config import Configurable

from autograder.framing import FrameError, read_frame, write_frame


class SandboxUnavailable(RuntimeError):
    """Grading would have to run learner code unconfined; refuse unless opted out."""


class Sandbox(Configurable):  # type: ignore[misc]
    """Limits for each notebook's execution (configure as c.Sandbox.<name>)."""

    enabled = Bool(True, help="Run submissions in bubblewrap. False is unsafe.").tag(config=True)
    wall_seconds = Float(120.0, help="Wall time for a whole notebook, seconds.").tag(config=True)
    cpu_seconds = Float(120.0, help="CPU time for a whole notebook, seconds.").tag(config=True)
    memory_mb = Float(2048.0, help="Memory a notebook may add, MiB.").tag(config=True)
    max_processes = Int(64, help="Processes and threads a notebook may run.").tag(config=True)
    max_output_bytes = Int(4_000_000, help="Output recorded per notebook, bytes.").tag(config=True)
    max_file_mb = Float(64.0, help="Largest file a notebook may write, MiB.").tag(config=True)
    scratch_mb = Float(256.0, help="Size of the private scratch filesystem, MiB.").tag(config=True)
    bwrap = Unicode("bwrap", help="The bubblewrap executable.").tag(config=True)

    def limits(self) -> dict[str, float]:
        """The limits as sent to the execution worker."""
        names = (
            "wall_seconds",
            "cpu_seconds",
            "memory_mb",
            "max_processes",
            "max_output_bytes",
            "max_file_mb",
            "scratch_mb",
        )
        return {name: float(getattr(self, name)) for name in names}


def package_dirs() -> list[Path]:
    """Directories of the course's own packages (for editable installs outside the venv)."""
    import autograd_lessons
    import autograder

    return [Path(str(m.__file__)).resolve().parent for m in (autograder, autograd_lessons)]


def readable_paths() -> list[Path]:
    """Everything the sandbox may read: system libraries, Python, the venv, our packages."""
    paths = [Path(p) for p in ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/ld.so.cache")]
    paths += [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    paths += package_dirs()
    return [p for p in dict.fromkeys(paths) if p.exists()]


def bwrap_command(sandbox: Sandbox, python: str) -> list[str]:
    """The bubblewrap command line that starts one execution worker."""
    command = [sandbox.bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    command += ["--uid", "65534", "--gid", "65534", "--unshare-user"]
    # Scratch space first: a venv or course under /tmp is then bound on top of it.
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/scratch"]
    for path in readable_paths():
        command += ["--ro-bind", str(path), str(path)]
    command += ["--chdir", "/scratch", "--clearenv"]
    env = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": "/scratch",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
    }
    for name, value in env.items():
        command += ["--setenv", name, value]
    return [*command, python, "-m", "autograder.execution"]


def check_sandbox(sandbox: Sandbox) -> None:
    """Raise SandboxUnavailable with a clear message if bubblewrap cannot run here."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the grading sandbox needs Linux (this is {sys.platform}). "
            "Grade on Linux, or pass --no-sandbox to run submissions unconfined (unsafe)."
        )
    if shutil.which(sandbox.bwrap) is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed: `sudo apt-get install bubblewrap` (or `make system`). "
            "Pass --no-sandbox to run submissions unconfined (unsafe)."
        )
    probe = subprocess.run(
        [sandbox.bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise SandboxUnavailable(
            "bubblewrap cannot create namespaces here "
            f"({probe.stderr.strip() or 'exit ' + str(probe.returncode)}). Enable unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1), or pass --no-sandbox "
            "to run submissions unconfined (unsafe)."
        )


def pids_cgroup_root() -> Path | None:
    """A writable cgroup directory with a pids controller, if this machine has one."""
    for candidate in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if (candidate / "cgroup.procs").exists() and os.access(candidate, os.W_OK):
            controllers = candidate / "cgroup.controllers"
            if candidate.name == "pids" or (
                controllers.exists() and "pids" in controllers.read_text().split()
            ):
                return candidate
    return None


def process_limit_group(max_processes: int) -> Path | None:
    """A new pids cgroup capping a worker's process tree (needed when grading as root,
    where RLIMIT_NPROC does not apply). Returns None where cgroups are not writable."""
    root = pids_cgroup_root()
    if root is None:
        return None
    group = root / f"autograder-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(max_processes))
    except OSError:
        return None
    return group


@dataclass
class ExecutionResult:
    """What one notebook's execution produced."""

    status: str  # ok | timeout | died | output_limit | error | worker_died | protocol
    detail: str = ""
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0


class Worker:
    """One execution worker process (inside the sandbox when enabled)."""

    def __init__(self, sandbox: Sandbox, log_dir: Path) -> None:
        self.sandbox = sandbox
        self.log_dir = log_dir
        self.process: subprocess.Popen[bytes] | None = None
        self.cgroup: Path | None = None

    def start(self) -> None:
        """Start the worker and wait until it has imported torch and is ready."""
        python = str(Path(sys.prefix) / "bin" / "python")
        if self.sandbox.enabled:
            command = bwrap_command(self.sandbox, python)
            env = None
        else:
            command = [python, "-m", "autograder.execution"]
            env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
        self.log_dir.mkdir(parents=True, exist_ok=True)
        stderr = open(self.log_dir / f"worker-{os.getpid()}-{id(self)}.log", "ab")  # noqa: SIM115
        # The worker, the notebook's child and torch's threads need a few beyond the limit.
        self.cgroup = process_limit_group(self.sandbox.max_processes + 16)
        if self.cgroup is not None:
            # Join the group before anything forks, so the whole tree is counted.
            procs = shlex.quote(str(self.cgroup / "cgroup.procs"))
            command = ["/bin/sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *command]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
        )
        stderr.close()
        ready = self._read(deadline=time.monotonic() + 120)
        if ready is None or ready.get("event") != "ready":
            self.stop()
            raise RuntimeError(f"the execution worker did not start; see {self.log_dir}")

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
        self, cells: list[str], calls: list[dict[str, Any]] | None = None
    ) -> ExecutionResult:
        """Run the code cells of one notebook; never raises for anything the notebook does."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        assert self.process is not None and self.process.stdin is not None
        limits = self.sandbox.limits()
        request = {
            "cells": cells,
            "limits": limits,
            "calls": calls or [],
            "isolate": True,
            "require_isolation": self.sandbox.enabled,
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
                return result

    def stop(self) -> None:
        """Stop the worker (it is restarted by the next execute)."""
        if self.process is None:
            return
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self.process = None
        if self.cgroup is not None:
            with contextlib.suppress(OSError):  # an emptied group may linger a moment
                self.cgroup.rmdir()
            self.cgroup = None
