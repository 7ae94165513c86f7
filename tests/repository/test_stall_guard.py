"""The tests' progress watchdog (tests/stall_guard.py): slow is not hung, hung is stopped.

The stall limits here are a few seconds so the hung cases end quickly; the slow cases run
well past them, making progress in steps far shorter than the limit.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_tree import alive, end, family
from stall_guard import (
    Stalled,
    call,
    communicate,
    cpu_of,
    keep_trying,
    run,
    size_of,
    wait_until,
)

# Prints a line every 0.2 s for 6 s in all (3 times the limit below), idle in between.
SLOW_PRINTER = "import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.2)"
# Computes for 3 CPU-s (twice the limit below) and prints nothing until the end.
SILENT_WORKER = (
    "import time\nend = time.process_time() + 3\nwhile time.process_time() < end:\n"
    "    sum(range(1000))\nprint('done')"
)
# Starts a child that sleeps, prints the child's pid, then sleeps: no CPU, no output.
# Wakes up five times a second and does almost nothing: an idle kernel's heartbeat.
TICKING = "import time\nwhile True:\n    sum(range(10))\n    time.sleep(0.2)"
HUNG = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "print(child.pid, flush=True)\ntime.sleep(300)"
)

pytestmark = pytest.mark.processes  # every test here starts a process (tests/tiers.py)


def test_a_process_printing_slowly_past_the_limit_is_not_stopped() -> None:
    result = run([sys.executable, "-c", SLOW_PRINTER], stall=2, capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.split() == [str(i) for i in range(30)]


def test_a_process_computing_silently_past_the_limit_is_not_stopped() -> None:
    start = time.monotonic()
    result = run([sys.executable, "-c", SILENT_WORKER], stall=1.5, capture_output=True)
    assert time.monotonic() - start > 3  # it ran past the limit: its CPU time was progress
    assert (result.returncode, result.stdout) == (0, b"done\n")


def test_a_hung_process_is_stopped_with_everything_it_started() -> None:
    with (
        subprocess.Popen(
            [sys.executable, "-c", HUNG], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as process,
        pytest.raises(Stalled) as stalled,
    ):
        communicate(process, "the hung one", stall=2)
    message = str(stalled.value)
    assert message.startswith("the hung one: no progress for 2 s (under 2% of a core's CPU")
    child = int(message.split("--- its last output\n")[1].split()[0])  # what it printed
    assert process.returncode is not None  # ended, and its child with it (once reaped)
    wait_until(lambda: not alive(child), "the killed child", [], stall=60)


def test_run_captures_text_and_feeds_input_like_subprocess_run() -> None:
    code = "import sys; data = sys.stdin.read(); print(data.upper()); print('e', file=sys.stderr)"
    result = run([sys.executable, "-c", code], input="abc", capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "ABC\n", "e\n")
    with pytest.raises(subprocess.CalledProcessError):
        run([sys.executable, "-c", "raise SystemExit(3)"], check=True)


def test_a_wait_lasts_while_its_signs_move_and_fails_when_they_stop(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    writer = subprocess.Popen(
        [sys.executable, "-c", f"{SLOW_PRINTER}\nopen({str(log)!r}, 'w').write('ready')"],
        stdout=log.open("w"),
    )
    try:
        ready = wait_until(lambda: "ready" in log.read_text(), "the log", [size_of(log)], stall=2)
        assert ready and writer.wait() == 0
    finally:
        writer.kill()
    with pytest.raises(Stalled, match=r"^the idle one: no progress for 1 s"):
        wait_until(lambda: False, "the idle one", [size_of(log), cpu_of(writer.pid)], stall=1)


def test_a_process_that_only_ticks_over_is_not_progress() -> None:
    """An idle kernel uses a little CPU time forever: a wait on it must still end."""
    with subprocess.Popen([sys.executable, "-c", TICKING]) as ticking:
        try:
            with pytest.raises(Stalled, match=r"^the ticking one: no progress for 3 s"):
                wait_until(lambda: False, "the ticking one", [cpu_of(ticking.pid)], stall=3)
        finally:
            ticking.kill()


def test_a_step_tried_in_slices_lasts_while_the_work_it_waits_on_progresses() -> None:
    """A step with a timeout of its own (here `wait`, as a browser waits for an element)
    tried past the stall limit, while the process it waits on computes silently."""
    with subprocess.Popen([sys.executable, "-c", SILENT_WORKER], stdout=subprocess.PIPE) as worker:
        start = time.monotonic()
        code = keep_trying(
            lambda seconds: worker.wait(seconds), "the worker", [cpu_of(worker.pid)],
            not_yet=(subprocess.TimeoutExpired,), stall=1.5, slice=0.3,
        )  # fmt: skip
        assert (code, time.monotonic() - start > 3) == (0, True)


def test_a_step_tried_in_slices_fails_when_nothing_moves_and_says_what_it_waited_for() -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]) as sleeper:
        try:
            with pytest.raises(Stalled) as stalled:
                keep_trying(
                    lambda seconds: sleeper.wait(seconds), "the sleeper's end",
                    [cpu_of(sleeper.pid)], not_yet=(subprocess.TimeoutExpired,), stall=2,
                    slice=0.3,
                )  # fmt: skip
        finally:
            sleeper.kill()
    message = str(stalled.value)
    assert message.startswith("the sleeper's end: no progress for 2 s"), message
    assert "--- the last try: Command" in message and "timed out after 0.3 seconds" in message


def test_a_call_lasts_while_the_server_works_and_fails_when_it_stops() -> None:
    """`call` awaits a blocking read (a request's answer) while the process that will
    answer computes; the same read from a process that only sleeps is stopped."""
    with subprocess.Popen([sys.executable, "-c", SILENT_WORKER], stdout=subprocess.PIPE) as worker:
        assert worker.stdout is not None
        answer = call(worker.stdout.readline, "the worker's answer", [cpu_of(worker.pid)], 1.5)
        assert answer == b"done\n"
    with subprocess.Popen([sys.executable, "-c", HUNG], stdout=subprocess.PIPE) as hung:
        assert hung.stdout is not None
        hung.stdout.readline()  # its child's pid: from here on, it only sleeps
        try:
            with pytest.raises(Stalled, match=r"^the hung one's answer: no progress for 2 s"):
                call(hung.stdout.readline, "the hung one's answer", [cpu_of(hung.pid)], 2)
        finally:
            end(family(hung.pid))
    with pytest.raises(ZeroDivisionError):  # what the call raises, the caller gets
        call(lambda: 1 // 0, "a division", [], 2)
