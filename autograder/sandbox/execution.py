"""The execution worker: runs a notebook's code cells in a forked, isolated child.

One worker runs per grading slot (inside bubblewrap when the sandbox is on). It imports
torch and IPython once; for each request it forks a child that executes the
cells in a pristine IPython shell, so no notebook pays for a fresh kernel and a fresh
`import torch`. The parent never runs learner code and never starts torch's thread pool,
so forking it stays safe.

Each child first joins the notebook's cgroups (memory including in-memory files,
processes and CPU share for all its processes together; the grader made them and mounted
their `cgroup.procs` files under /run/cgroup), then takes new user, PID, mount, IPC,
network and UTS namespaces (it is PID 1 of its own namespace, so killing it kills
everything it started, and it cannot see or signal the worker), covers every writable
place (/tmp, /scratch, /dev/shm, /run/worker) with a private size-capped tmpfs that
dies with it, sets rlimits, and gives up privilege for good (`confine`: no capabilities,
no_new_privs, seccomp). Only then does learner code run; nothing it writes or starts
outlives the notebook. The worker enforces the wall-time limit for the whole notebook
and caps the output it relays. A failure before the notebook's first cell started is
reported with `started: false`: the grader then fails the submission instead of
recording a grade.

Protocol (length-prefixed JSON frames, see `framing`): the grader sends
`{"cells": [source, ...], "limits": {...}, "calls": [...]}` on stdin; the worker answers
with one `{"event": "done", "cells": [...], "calls": [...], "status": ...}` frame holding
every executed cell's outputs (the child streams them to the worker cell by cell, so a
notebook that dies or times out still reports the cells it finished).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import io
import json
import os
import resource
import select
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

from autograder.sandbox.confine import confine
from autograder.sandbox.framing import FrameError, encode_frame, read_frame, write_frame

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NOTEBOOK_NAMESPACES = (
    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
)
PRIVATE_DIRS = ("/tmp", "/scratch", "/dev/shm", "/run/worker")
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36

DEFAULT_LIMITS: dict[str, float] = {
    "wall_seconds": 120.0,
    "cpu_seconds": 120.0,
    "memory_mb": 2048.0,
    "max_processes": 64.0,
    "max_output_bytes": 4_000_000.0,
    "max_file_mb": 64.0,
    "scratch_mb": 256.0,
}

_libc = ctypes.CDLL(None, use_errno=True)


# ---------------------------------------------------------------- in the child


class Recorder:
    """Collects one cell's outputs in nbformat shape, within a byte budget for the notebook."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.truncated = False
        self.outputs: list[dict[str, Any]] = []

    def _admit(self, size: int) -> bool:
        if self.used + size > self.budget:
            if not self.truncated:
                self.truncated = True
                self.outputs.append(
                    {
                        "output_type": "stream",
                        "name": "stderr",
                        "text": "[output limit reached: further output is not recorded]\n",
                    }
                )
            return False
        self.used += size
        return True

    def stream(self, name: str, text: str) -> None:
        if not text or not self._admit(len(text.encode("utf-8", "replace"))):
            return
        last = self.outputs[-1] if self.outputs else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def add(self, output: dict[str, Any]) -> None:
        try:
            size = len(json.dumps(output, default=str))
        except (TypeError, ValueError):
            return
        if self._admit(size):
            self.outputs.append(output)

    def take(self) -> list[dict[str, Any]]:
        outputs, self.outputs = self.outputs, []
        return outputs


RECORDER = Recorder(int(DEFAULT_LIMITS["max_output_bytes"]))


class CapturedStream(io.TextIOBase):
    """sys.stdout / sys.stderr replacement that records stream outputs."""

    def __init__(self, name: str) -> None:
        self.name_ = name

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        RECORDER.stream(self.name_, text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def build_shell() -> Any:
    """A pristine IPython shell whose displays, results and errors go to RECORDER."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets import Type
    from traitlets.config import Config

    class CapturedDisplayPublisher(DisplayPublisher):  # type: ignore[misc]
        def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
            RECORDER.add({"output_type": "display_data", "data": data, "metadata": metadata or {}})

        def clear_output(self, wait: bool = False) -> None:
            RECORDER.outputs = []

    class CapturedDisplayHook(DisplayHook):  # type: ignore[misc]
        def write_output_prompt(self) -> None:
            pass

        def write_format_data(self, format_dict: Any, md_dict: Any = None) -> None:
            RECORDER.add(
                {
                    "output_type": "execute_result",
                    "execution_count": getattr(self.shell, "execution_count", None),
                    "data": format_dict,
                    "metadata": md_dict or {},
                }
            )

        def finish_displayhook(self) -> None:
            pass

    class GradingShell(InteractiveShell):  # type: ignore[misc]
        display_pub_class = Type(CapturedDisplayPublisher)
        displayhook_class = Type(CapturedDisplayHook)

        def enable_gui(self, gui: Any = None) -> None:
            pass  # inline plots only: there is no event loop to integrate with

        @contextlib.contextmanager
        def _tee(self, channel: str) -> Iterator[None]:
            yield  # IPython would keep every byte printed in its history: RECORDER keeps it

        def _showtraceback(self, etype: Any, evalue: Any, stb: Any) -> None:
            try:
                message = str(evalue)
            except Exception:
                message = "<exception whose str() failed>"
            RECORDER.add(
                {
                    "output_type": "error",
                    "ename": getattr(etype, "__name__", "Error"),
                    "evalue": message,
                    "traceback": [str(line) for line in stb],
                }
            )

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.autoindent = False
    # No `%matplotlib inline` here: MPLBACKEND names the inline backend, which sets itself
    # up in this shell when a notebook first imports pyplot. The graded notebooks do not
    # plot, and importing matplotlib in every worker cost about half a second of start-up.
    return GradingShell.instance(config=config)


def set_limits(limits: dict[str, float]) -> None:
    """Apply rlimits to this process (inherited by anything it starts)."""
    vm_kb = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                vm_kb = int(line.split()[1])
    memory = vm_kb * 1024 + int(limits["memory_mb"] * 1024 * 1024)
    cpu = int(limits["cpu_seconds"])
    file_size = int(limits["max_file_mb"] * 1024 * 1024)
    nproc = int(limits["max_processes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def needed_paths() -> list[str]:
    """What the notebook must keep reading: Python, the venv, the packages it imports."""
    import importlib.util

    paths = {sys.prefix, sys.base_prefix}
    spec = importlib.util.find_spec("autograder")
    if spec is not None and spec.origin:
        paths.add(os.path.dirname(os.path.dirname(spec.origin)))
    return sorted(os.path.realpath(p) for p in paths)


NEEDED_PATHS: list[str] = []  # filled once by the worker, before it forks


def private_mounts(scratch_mb: int) -> None:
    """In a fresh mount namespace: a private tmpfs on every writable place (OSError if not).

    Anything Python needs that lives under one of them (a venv in /tmp, say) is carried
    over onto the fresh tmpfs, read-only.
    """
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "cannot make the mounts private")
    options = f"size={scratch_mb}m,mode=1777".encode()
    needed = NEEDED_PATHS or needed_paths()
    for target in PRIVATE_DIRS:
        if not os.path.isdir(target):
            continue
        # Hold each needed directory by a file descriptor, cover the target with a fresh
        # tmpfs, then bind the held directories back (read-only) through /proc/self/fd.
        held = [
            (os.open(p, os.O_PATH | os.O_DIRECTORY), p)
            for p in needed
            if p.startswith(target + "/")
        ]
        flags = MS_NOSUID | MS_NODEV
        if _libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, options) != 0:
            raise OSError(ctypes.get_errno(), f"cannot mount a private tmpfs on {target}")
        for fd, path in held:
            os.makedirs(path, exist_ok=True)
            source = f"/proc/self/fd/{fd}".encode()
            _libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None)
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_REC
            _libc.mount(None, path.encode(), None, flags, None)
            os.close(fd)


def join_cgroups(procs_files: list[str]) -> None:
    """Move this process into the notebook's cgroups (before it starts anything)."""
    for path in procs_files:
        with open(path, "w") as procs:
            procs.write("0")


def cgroups_empty(procs_files: list[str], wait: float = 10.0) -> bool:
    """Whether the notebook groups hold no process (the previous notebook is gone)."""
    deadline = time.monotonic() + wait
    while True:
        busy = False
        for path in procs_files:
            with open(path) as procs:
                busy = busy or bool(procs.read().strip())
        if not busy or time.monotonic() > deadline:
            return not busy
        time.sleep(0.01)


def map_identity(uid: int, gid: int) -> None:
    """Keep the same uid/gid inside the new user namespace (files stay usable).

    The worker is not dumpable (so notebooks cannot read its memory), which would leave
    /proc/self owned by root and these files unwritable to an unprivileged grader: the
    child is dumpable just while it writes them.
    """
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    with open("/proc/self/setgroups", "w") as setgroups:
        setgroups.write("deny")
    with open("/proc/self/uid_map", "w") as uid_map:
        uid_map.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as gid_map:
        gid_map.write(f"{gid} {gid} 1")
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def redirect_standard_fds() -> None:
    """Raw writes to fd 1/2 go nowhere; only captured Python-level output is recorded."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def call_function(shell: Any, call: dict[str, Any]) -> dict[str, Any]:
    """Call a function the cells defined on each case; keep only genuine numbers.

    A call with "graphs" builds each graph with the class named "class" instead
    (`value_build`: the learner's numbers only, plain JSON)."""
    if "graphs" in call:
        from autograder.core.value_build import evaluate_all

        built = evaluate_all(shell.user_ns.get(str(call.get("class"))), call["graphs"])
        return {"event": "call", "builds": json.loads(json.dumps(built, default=str))}
    function = shell.user_ns.get(call["function"])
    if not callable(function):
        return {"event": "call", "error": f"{call['function']} is not defined as a function"}
    results: list[Any] = []
    for args in call["cases"]:
        try:
            value = function(*args)
        except BaseException as error:  # learner code may raise anything, even SystemExit
            results.append({"error": f"{type(error).__name__}: {error}"[:500]})
            continue
        if type(value) in (int, float) and value == value and abs(value) != float("inf"):
            results.append({"value": float(value)})
        else:
            results.append({"error": f"returned {type(value).__name__}, not a float"})
    return {"event": "call", "results": results}


def run_cells(shell: Any, request: dict[str, Any], out_fd: int) -> None:
    """Execute every cell, sending one frame per cell, then a call frame if asked."""
    limits = request["limits"]
    RECORDER.budget = int(limits["max_output_bytes"])
    sys.stdout, sys.stderr = CapturedStream("stdout"), CapturedStream("stderr")
    for index, source in enumerate(request["cells"]):
        write_frame(out_fd, {"event": "start", "index": index})
        try:
            shell.run_cell(source, store_history=True)
        except BaseException as error:  # the shell itself gave up (e.g. a broken hook)
            RECORDER.add(
                {
                    "output_type": "error",
                    "ename": type(error).__name__,
                    "evalue": str(error)[:500],
                    "traceback": [],
                }
            )
        frame = {
            "event": "cell",
            "index": index,
            "execution_count": shell.execution_count - 1,
            "outputs": RECORDER.take(),
        }
        write_frame(out_fd, json.loads(json.dumps(frame, default=str)))
    for call in request.get("calls", []):
        write_frame(out_fd, {**call_function(shell, call), "function": call["function"]})
    write_frame(out_fd, {"event": "done"})


def child_main(shell: Any, request: dict[str, Any], out_fd: int) -> None:
    """The forked child: limit, isolate, confine, run. Never returns."""
    code = 0
    try:
        limits = request["limits"]
        required = bool(request.get("require_isolation"))
        join_cgroups(list(request.get("cgroups", [])))
        isolated = False
        if request.get("isolate", True):
            uid, gid = os.getuid(), os.getgid()
            isolated = _libc.unshare(NOTEBOOK_NAMESPACES) == 0
            if isolated:
                map_identity(uid, gid)
            elif required:
                raise OSError(ctypes.get_errno(), "cannot create the notebook's namespaces")
        if isolated:
            # unshare(CLONE_NEWPID) applies to children: the grandchild is PID 1 of the
            # new namespace. The child reports its pid, then only waits for it.
            go_read, go_write = os.pipe()
            pid = os.fork()
            if pid:
                os.close(go_read)
                write_frame(out_fd, {"event": "pid", "pid": pid})
                os.close(go_write)
                os.close(out_fd)
                os.waitpid(pid, 0)
                os._exit(0)
            os.close(go_write)
            os.read(go_read, 1)
            os.close(go_read)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            private_mounts(int(limits["scratch_mb"]))
        else:
            os.setsid()
        workdir = "/scratch" if os.path.isdir("/scratch") and isolated else request["workdir"]
        os.makedirs(workdir, exist_ok=True)
        os.chdir(workdir)
        os.environ["HOME"] = workdir
        set_limits(limits)
        import torch

        torch.set_num_threads(1)
        if isolated or required:
            confine()
        tell_shim(request)
        redirect_standard_fds()
    except BaseException as error:
        with contextlib.suppress(OSError):
            message = f"the notebook could not be started: {type(error).__name__}: {error}"
            write_frame(out_fd, {"event": "done", "error": message})
        os._exit(3)
    try:
        run_cells(shell, request, out_fd)
    except BaseException as error:
        with contextlib.suppress(OSError):
            write_frame(out_fd, {"event": "done", "error": f"{type(error).__name__}: {error}"})
        code = 1
    os._exit(code)


def tell_shim(request: dict[str, Any]) -> None:
    """Hand the answer-free `autograder` package this notebook's given values."""
    import autograder

    set_notebook = getattr(autograder, "set_notebook", None)
    if set_notebook is not None:
        set_notebook(dict(request.get("givens", {})), str(request.get("learner", "")))


# ---------------------------------------------------------------- in the worker


def kill_quietly(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def reap_all() -> None:
    """Collect every exited child (the worker is a subreaper for orphans)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def relay(request: dict[str, Any], shell: Any) -> None:
    """Run one request in a child and relay its frames to stdout under the limits."""
    limits = {**DEFAULT_LIMITS, **request.get("limits", {})}
    request["limits"] = limits
    request.setdefault("workdir", f"/tmp/autograder-{os.getpid()}")
    procs = list(request.get("cgroups", []))
    if procs and not cgroups_empty(procs):
        detail = "processes of an earlier notebook are still running in the notebook's cgroups"
        done = {"event": "done", "status": "error", "detail": detail, "started": False}
        sys.stdout.buffer.write(encode_frame({**done, "cells": [], "calls": []}))
        sys.stdout.buffer.flush()
        return
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    started = time.monotonic()
    child = os.fork()
    if child == 0:
        os.close(read_fd)
        os.close(0)
        child_main(shell, request, write_fd)
    os.close(write_fd)
    deadline = started + limits["wall_seconds"]
    relayed_bytes = 0
    max_bytes = int(limits["max_output_bytes"]) * 2 + 1_000_000
    buffer = b""
    grandchild = 0
    cells: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    status, detail = "died", ""
    learner_started = False  # the first cell's start: learner code runs from here on
    finished = False
    while not finished:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            status, detail = "timeout", f"the notebook ran longer than {limits['wall_seconds']:g} s"
            break
        ready, _, _ = select.select([read_fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            break
        buffer += chunk
        relayed_bytes += len(chunk)
        if relayed_bytes > max_bytes:
            status, detail = "output_limit", f"the notebook produced more than {max_bytes} bytes"
            break
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if size > max_bytes:
                status, detail = "output_limit", "a single output frame was too large"
                finished = True
                break
            if len(buffer) < 4 + size:
                break
            body, buffer = buffer[4 : 4 + size], buffer[4 + size :]
            try:
                frame = json.loads(body)
            except ValueError:
                status, detail = "protocol", "the child wrote a malformed frame"
                finished = True
                break
            event = frame.get("event") if isinstance(frame, dict) else None
            if event == "pid" and not grandchild and isinstance(frame.get("pid"), int):
                grandchild = frame["pid"]
            elif event == "start":
                learner_started = True
                continue
            elif event == "done":
                if frame.get("error"):
                    status, detail = "error", str(frame["error"])[:1000]
                else:
                    status, detail = "ok", ""
                finished = True
                break
            elif event == "cell" and isinstance(frame.get("index"), int):
                cells.append(frame)
            elif event == "call":
                calls.append(frame)
    if grandchild:
        kill_quietly(grandchild)
    kill_quietly(child)
    if not grandchild:
        kill_quietly(-child)  # not isolated: the child leads its own process group
    os.close(read_fd)
    try:
        _, wait_status = os.waitpid(child, 0)
    except ChildProcessError:
        wait_status = 0
    if status == "died":
        detail = "the kernel died before the notebook finished"
        if grandchild == 0 and os.WIFSIGNALED(wait_status):
            detail += f" (signal {os.WTERMSIG(wait_status)})"
    reap_all()
    elapsed = round(time.monotonic() - started, 4)
    # One frame for the whole notebook: the grader's reading thread wakes up once.
    done = {
        "event": "done",
        "status": status,
        "detail": detail,
        "elapsed": elapsed,
        "started": learner_started,
    }
    sys.stdout.buffer.write(encode_frame({**done, "cells": cells, "calls": calls}))
    sys.stdout.buffer.flush()


def preload() -> Any:
    """Import what every notebook imports, without starting torch's thread pool."""
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    import torch

    # One intra-op thread: torch then never starts its thread pool, so forking stays safe.
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    import autograder  # noqa: F401  (in the sandbox: the answer-free shim)

    NEEDED_PATHS[:] = needed_paths()
    shell = build_shell()
    # Everything loaded so far is never collected: a notebook's garbage collections then
    # do not touch (and so copy, and count against its memory limit) the worker's pages.
    gc.collect()
    gc.freeze()
    return shell


def serve() -> None:
    """Answer requests from stdin until it closes."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    shell = preload()
    sys.stdout.buffer.write(encode_frame({"event": "ready", "pid": os.getpid()}))
    sys.stdout.buffer.flush()
    while True:
        try:
            request = read_frame(0)
        except FrameError:
            return
        relay(request, shell)


if __name__ == "__main__":
    serve()
