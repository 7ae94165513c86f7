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
from process_tree import alive
from stall_guard import Stalled, communicate, cpu_of, run, size_of, wait_until

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
