"""One notebook's child: reads its own request, shuts itself in, runs the cells.

Forked from the template process (`autograder.sandbox.template`), which never held a
request: the child reads the request from the file descriptor the relay filled for it
alone, and writes its frames (one per cell, see `framing`) straight to the pipe the relay
reads. Nothing of another notebook was ever in this process's memory.

Before any learner code it joins the notebook's cgroups, takes its own namespaces (it
forks once more: the grandchild is PID 1 of the new PID namespace, so killing it kills
everything the notebook started), makes its private mounts, confines itself (`confine`:
no capabilities, no_new_privs, seccomp), imports torch if its code names torch and the
template had not, and sets rlimits. A failure before the first
cell reports `{"event": "done", "error": ...}` without a "start" frame: the grader then
fails the submission instead of recording a grade.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
from typing import Any

from autograder.sandbox.capture import RECORDER, CapturedStream
from autograder.sandbox.confine import confine
from autograder.sandbox.framing import read_frame, write_frame
from autograder.sandbox.isolation import (
    NOTEBOOK_NAMESPACES,
    PR_SET_PDEATHSIG,
    join_cgroups,
    libc,
    map_identity,
    private_mounts,
    redirect_standard_fds,
    set_limits,
)


def load_torch() -> None:
    """Import torch with one intra-op thread (its thread pool then never starts, so
    forking stays safe); where torch is loaded already, only the thread count is set."""
    import torch

    torch.set_num_threads(1)
    if torch.get_num_interop_threads() != 1:
        with contextlib.suppress(RuntimeError):  # settable once, before any parallel work
            torch.set_num_interop_threads(1)


def mentions_torch(cells: list[Any]) -> bool:
    """Whether any of the notebook's code cells names torch (its own cells only)."""
    return any(isinstance(source, str) and "torch" in source for source in cells)


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


def tell_shim(request: dict[str, Any]) -> None:
    """Hand the answer-free `autograder` package this notebook's given values, learner and
    problem in words."""
    import autograder

    set_notebook = getattr(autograder, "set_notebook", None)
    if set_notebook is not None:
        learner, problem = str(request.get("learner", "")), str(request.get("problem", ""))
        set_notebook(dict(request.get("givens", {})), learner, problem)


def enter_namespaces(request: dict[str, Any], out_fd: int) -> bool:
    """Take the notebook's namespaces; the caller continues as PID 1 of the new PID
    namespace (this child then only waits for it). False: not isolated (allowed)."""
    if not request.get("isolate", True):
        return False
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(NOTEBOOK_NAMESPACES) != 0:
        if request.get("require_isolation"):
            raise OSError(ctypes.get_errno(), "cannot create the notebook's namespaces")
        return False
    map_identity(uid, gid)
    # unshare(CLONE_NEWPID) applies to children: the grandchild is PID 1 of the new
    # namespace. The child reports its pid, then only waits for it.
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
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return True


def child_main(shell: Any, request_fd: int, out_fd: int) -> None:
    """The forked child: read the request, limit, isolate, confine, run. Never returns."""
    try:
        os.set_inheritable(out_fd, False)
        os.lseek(request_fd, 0, os.SEEK_SET)
        request = read_frame(request_fd)
        os.close(request_fd)
        limits = request["limits"]
        join_cgroups(list(request.get("cgroups", [])))
        isolated = enter_namespaces(request, out_fd)
        if isolated:
            private_mounts(int(limits["scratch_mb"]))
        else:
            os.setsid()
        workdir = "/scratch" if os.path.isdir("/scratch") and isolated else request["workdir"]
        os.makedirs(workdir, exist_ok=True)
        os.chdir(workdir)
        os.environ["HOME"] = workdir
        if isolated or request.get("require_isolation"):
            confine()
        # After confine: any thread torch starts is confined as well. Before the limits:
        # torch, when the notebook's code names it, is not counted as the notebook's own
        # memory, as where the template imported it (a hidden import is counted).
        if "torch" in sys.modules or mentions_torch(request.get("cells", [])):
            load_torch()
        set_limits(limits)
        tell_shim(request)
        redirect_standard_fds()
    except BaseException as error:
        with contextlib.suppress(OSError):
            message = f"the notebook could not be started: {type(error).__name__}: {error}"
            write_frame(out_fd, {"event": "done", "error": message})
        os._exit(3)
    code = 0
    try:
        run_cells(shell, request, out_fd)
    except BaseException as error:
        with contextlib.suppress(OSError):
            write_frame(out_fd, {"event": "done", "error": f"{type(error).__name__}: {error}"})
        code = 1
    os._exit(code)
