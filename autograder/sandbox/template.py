"""The template process every notebook is forked from, and the relay's handle on it.

The worker's first act is to fork the template, before it reads any request. The
template imports IPython once, builds the shell, and then only waits for the word "fork"
(or "ftor") on a socket: with it come two file descriptors, a sealed-off memory file
holding one notebook's request and the pipe that notebook writes its frames to. It
forks, closes both, reports the child's pid, waits for the child and reports how it
ended. It never reads a request, a frame or an output, so every notebook starts from
memory that never held another student's data (freed memory included).

torch is imported only when first needed: "ftor" asks for it before the fork, and the
relay sends it for a notebook of an assignment whose instructor's code uses torch (the
grader says so, from the instructor's cells, never from a learner's). A worker that only
grades notebooks without torch never spends the second torch costs to import. torch's
thread pool never starts in the template (one intra-op thread, and no tensor operation
runs here), so forking it stays safe.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import struct
import sys
import traceback
from typing import Any

from autograder.core.startup import loading
from autograder.sandbox.capture import build_shell
from autograder.sandbox.isolation import NEEDED_PATHS, PR_SET_PDEATHSIG, libc, needed_paths

FORK = b"fork"
FORK_WITH_TORCH = b"ftor"  # the same, with torch imported in the template first
REPLY = struct.Struct("<ci")  # (b"F", pid) once forked, then (b"X", wait status)
READY = b"ready"
READY_TIMEOUT = 300.0  # seconds a start (or torch's import) may take on a loaded machine


def preload() -> Any:
    """Import what every notebook imports (torch only when asked: `notebook.load_torch`),
    and run one silent cell of ours, kept out of the history and the count: what IPython
    sets up on a first cell is then done once here, not in every notebook (a fifth of a
    small notebook's time)."""
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    import autograder  # noqa: F401  (in the sandbox: the answer-free shim)

    NEEDED_PATHS[:] = needed_paths()
    shell = build_shell()
    shell.run_cell("0", store_history=False, silent=True)
    return shell


def template_main(channel: socket.socket) -> None:
    """Fork one notebook child per "fork" until the relay hangs up. Never returns."""
    from autograder.sandbox.notebook import child_main, load_torch

    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the grader's pipes: the template and its children never see them
        os.dup2(devnull, fd)
    os.close(devnull)
    # Everything the template loads stays out of the collector's scans (`loading`), here
    # and in every notebook forked from it: a notebook's collections then do not touch
    # (and so copy, and count against its memory limit) the template's pages.
    with loading():
        shell = preload()
    channel.send(READY)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, len(FORK), 2)
        except OSError:
            os._exit(0)
        if message not in (FORK, FORK_WITH_TORCH) or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            if not message:
                os._exit(0)  # the relay is gone
            continue
        if message == FORK_WITH_TORCH and "torch" not in sys.modules:
            with loading():
                load_torch()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            channel.close()
            child_main(shell, *fds)
        for fd in fds:
            os.close(fd)
        channel.send(REPLY.pack(b"F", pid))
        _, status = os.waitpid(pid, 0)
        channel.send(REPLY.pack(b"X", status))


class Template:
    """The relay's side: start the template, ask for a child, learn how it ended."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            ours.close()
            try:
                template_main(theirs)
            except BaseException:
                traceback.print_exc()  # into the worker's log: why it did not start
            finally:
                os._exit(1)
        theirs.close()
        self.channel = ours
        self.torch_loaded = False

    def _receive(self, timeout: float) -> bytes | None:
        if not select.select([self.channel], [], [], timeout)[0]:
            return None
        with contextlib.suppress(OSError):
            return self.channel.recv(64) or None
        return None

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> bool:
        return self._receive(timeout) == READY

    def fork(
        self, request_fd: int, out_fd: int, with_torch: bool = False, timeout: float = 30.0
    ) -> int | None:
        """A child that will read `request_fd` and write to `out_fd`: its pid, None if the
        template is gone. `with_torch`: torch imported in the template first (the first
        time, that takes as long as a start: `timeout` is then the start's)."""
        if with_torch and not self.torch_loaded:
            timeout = max(timeout, READY_TIMEOUT)
        try:
            socket.send_fds(
                self.channel, [FORK_WITH_TORCH if with_torch else FORK], [request_fd, out_fd]
            )
        except OSError:
            return None
        reply = self._receive(timeout)
        if reply is None or len(reply) != REPLY.size:
            return None
        kind, pid = REPLY.unpack(reply)
        if kind != b"F":
            return None
        self.torch_loaded = self.torch_loaded or with_torch
        return int(pid)

    def wait_exit(self, timeout: float = 10.0) -> int | None:
        """The child's wait status once the template reaped it; None if it did not say."""
        reply = self._receive(timeout)
        if reply is None or len(reply) != REPLY.size:
            return None
        kind, status = REPLY.unpack(reply)
        return status if kind == b"X" else None
