"""The hub tests' clean-up: what a server started in a session of its own is found and ended."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_tree import alive, descriptors, end, end_recorded, family
from stall_guard import wait_until

# A parent that starts a child in a new session (as JupyterHub starts its proxy), prints
# the child's pid and waits.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         start_new_session=True)
print(child.pid, flush=True)
time.sleep(300)
"""

# Holds a socket open, then opens and closes files as fast as it can.
CHURN = """
import os, socket, sys
held = socket.socket()
print(held.fileno(), flush=True)
while True:
    os.close(os.open(sys.executable, os.O_RDONLY))
"""

pytestmark = pytest.mark.processes  # every test here starts a process (tests/tiers.py)


def test_a_child_in_its_own_session_outlives_its_parent_until_ended() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        noted = family(parent.pid)
        assert {pid for pid, _ in noted} == {parent.pid, child}
        parent.kill()  # as a hub killed before its clean-up: the child survives
        parent.wait()
        time.sleep(0.2)
        assert alive(child)
        assert end(noted) == [child]
        wait_until(lambda: not alive(child), "the killed child", [], stall=60)
    finally:
        for pid in (parent.pid, child):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_process_that_is_not_the_one_noted_is_left_alone() -> None:
    """A pid reused by a later process has another start time: never killed."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        (pid, started), *_ = family(other.pid)
        assert end([(pid, str(int(started) + 1))]) == []
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_descriptors_closing_while_they_are_read_are_left_out_not_an_error() -> None:
    """Reading a busy process's descriptors (as the check-service tests do) while it
    opens and closes files: never an error, and what it holds throughout is there."""
    churning = subprocess.Popen([sys.executable, "-c", CHURN], stdout=subprocess.PIPE, text=True)
    assert churning.stdout is not None
    try:
        held = int(churning.stdout.readline())
        for _ in range(300):
            assert descriptors(churning.pid)[held].startswith("socket:")
    finally:
        churning.kill()
        churning.wait()


def test_a_recorded_process_is_ended_only_while_it_is_still_that_program(
    tmp_path: Path,
) -> None:
    """A pid file names a process that lost its parent: ended when its command line holds
    every mark, left alone when one is missing (the number given to another program)."""
    sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)
    # Popen returns as the child execs, a moment before its new command line is readable
    command_line = Path(f"/proc/{sleeper.pid}/cmdline")
    wait_until(command_line.read_bytes, "sleep's command line", [], stall=60)
    pid_file = tmp_path / "server.pid"
    pid_file.write_text(str(sleeper.pid))
    try:
        assert end_recorded(pid_file, b"sleep", b"301") is None
        assert sleeper.poll() is None
        assert end_recorded(tmp_path / "absent.pid", b"sleep") is None
        assert end_recorded(pid_file, b"sleep", b"300") == sleeper.pid
        assert sleeper.wait() == -signal.SIGKILL
    finally:
        sleeper.kill()
        sleeper.wait()
