"""Run one phase of `make test`, guard it against a hang, and say what it cost when it ends.

    python tools/phase_cost.py [--again-if-stalled] [--stall SECONDS] LABEL COMMAND [ARG ...]

Runs COMMAND, then prints one line: LABEL, its CPU (user + system of every process it
waited for, as /usr/bin/time counts) and its wall time, and exits with COMMAND's status.
Ctrl-C reaches COMMAND (the same process group); the line is printed all the same.

A phase that stops making progress (its processes use next to no CPU time and it prints
nothing for SECONDS, 300 by default: tests/stall_guard.py) is a hang, on any machine: the
phase says so, lists each of its processes (state, what it waits in, its Python stack when
py-spy can read it), kills them all and fails, instead of waiting for CI's time limit.
With --again-if-stalled (the notebook runs, whose kernels nbval waits on) a stalled run
is reported as above and run once more from the start; its result is the phase's. A run
that failed is never run again.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from process_tree import Process, end, family, state  # noqa: E402  (tests/: the suite's own helpers)
from stall_guard import POLL_SECONDS, STALL_SECONDS, Watch, cpu_of  # noqa: E402

STALLED = 124  # the status of a phase that stalled (as timeout(1) has it)
USAGE = "usage: phase_cost.py [--again-if-stalled] [--stall SECONDS] LABEL COMMAND [ARG ...]"


def cost_line(label: str, wall_seconds: float) -> str:
    """`label: N CPU-s (U user + S system), M:SS wall`, N the CPU of the children waited for
    so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    minutes, seconds = divmod(round(wall_seconds), 60)
    return (
        f"{label}: {used.ru_utime + used.ru_stime:.1f} CPU-s ({used.ru_utime:.1f} user + "
        f"{used.ru_stime:.1f} system), {minutes}:{seconds:02d} wall"
    )


def _proc(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def describe(processes: list[Process]) -> str:
    """Each of `processes`: pid, state, the kernel function it waits in, its command; then
    the Python stack of each that py-spy (beside this Python, or on PATH) can read."""
    lines, stacks = ["its processes (pid, state, waiting in, command):"], []
    spy = shutil.which("py-spy", path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    for process, _ in processes:
        command = _proc(process, "cmdline").replace("\0", " ").strip()
        where = _proc(process, "wchan") or "-"
        lines.append(f"  {process} {state(process) or 'gone'} {where} {command[:300]}")
        if spy and "python" in command.split(" ", 1)[0]:
            try:  # a dump takes well under a second; the bound only keeps a hang from here
                dump = subprocess.run(
                    [spy, "dump", "--pid", str(process)], capture_output=True, text=True,
                    timeout=120, check=False,
                )  # fmt: skip
                stacks.append(f"--- py-spy dump --pid {process}\n{dump.stdout}{dump.stderr}")
            except subprocess.TimeoutExpired:
                stacks.append(f"--- py-spy dump --pid {process}: no answer in 120 s")
    if not spy:
        stacks.append("(no py-spy here to show the Python stacks)")
    return "\n".join(lines + stacks)


def _printed() -> Callable[[], int]:
    """A sign of progress: the size of this process's standard output when it is a file
    (make --output-sync collects a phase's output in one), else nothing that moves."""
    try:
        if not os.path.isfile(f"/proc/self/fd/{sys.stdout.fileno()}"):
            return lambda: 0
    except (OSError, ValueError):
        return lambda: 0
    return lambda: os.fstat(sys.stdout.fileno()).st_size


def run_guarded(label: str, command: list[str], stall: float) -> int | None:
    """COMMAND's exit status, or None (its processes killed, the reason printed) when it
    made no progress for `stall` seconds."""
    process = subprocess.Popen(command)
    watch = Watch(label, [cpu_of(process.pid), _printed()], stall)
    while True:
        try:
            status = process.wait(POLL_SECONDS)
            return status if status >= 0 else 128 - status
        except subprocess.TimeoutExpired:
            pass
        except KeyboardInterrupt:
            continue  # the command got the same Ctrl-C: wait for it to end
        if watch.stalled():
            sys.stdout.flush()
            stalled = family(process.pid)
            report = describe(stalled)
            end(stalled)
            process.wait()
            print(f"{watch.message()}\n{report}", file=sys.stderr, flush=True)
            return None


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    again, stall = False, STALL_SECONDS
    while argv[:1] in (["--again-if-stalled"], ["--stall"]):
        if argv[0] == "--again-if-stalled":
            again, argv = True, argv[1:]
            continue
        try:
            stall, argv = float(argv[1]), argv[2:]
        except (IndexError, ValueError):
            stall = 0.0
        if not stall > 0:
            print(f"--stall takes a number of seconds above 0\n{USAGE}", file=sys.stderr)
            return 2
    if len(argv) < 2:
        print(f"{USAGE}\n(LABEL COMMAND missing; --help says more)", file=sys.stderr)
        return 2
    label, command = argv[0], argv[1:]
    start = time.monotonic()
    try:
        status = run_guarded(label, command, stall)
        if status is None and again:
            print(
                f"{label}: the run stalled (above); running it once more from the start "
                "(a stalled run is run again once, a failed one never)",
                file=sys.stderr, flush=True,
            )  # fmt: skip
            status = run_guarded(label, command, stall)
    except OSError as error:
        print(f"{label}: cannot run {command[0]}: {error.strerror}", file=sys.stderr)
        return 127
    print(cost_line(label, time.monotonic() - start), flush=True)
    return STALLED if status is None else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
