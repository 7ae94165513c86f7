"""tools/phase_cost.py, the line each phase of `make test` ends with: the CPU of everything
the phase ran (a grandchild too), its exit status passed on, and a command that cannot run
named. Its guard: a phase that makes no progress is listed with its stacks, killed and
failed (nbval waiting on a kernel that stopped answering, too); with --again-if-stalled it
runs once more; a busy or printing phase runs on."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from process_tree import alive

pytestmark = pytest.mark.processes

TOOL = Path(__file__).resolve().parents[2] / "tools" / "phase_cost.py"
LINE = re.compile(
    r"^phase: (?P<cpu>[\d.]+) CPU-s \((?P<user>[\d.]+) user \+ (?P<system>[\d.]+) system\), "
    r"\d+:\d\d wall$",
    re.M,
)
# A grandchild that spins until it has used 0.5 CPU-s, prints what it used and exits 3.
SPIN = (
    "import time\n"
    "while time.process_time() < 0.5: pass\n"
    "print(f'used {time.process_time():.3f}')\n"
    "raise SystemExit(3)\n"
)


# A phase that hangs: a grandchild in a session of its own, and a Python process, both
# waiting for good.
HANG = (
    "setsid sleep 600 & "
    f"{shlex.quote(sys.executable)} -c 'import time\ndef waiting(): time.sleep(600)\nwaiting()'"
)


def phase_cost(*command: str, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *command], stdout=stdout, stderr=subprocess.PIPE,
        text=True, check=False,
    )  # fmt: skip


def listed_pids(report: str) -> list[int]:
    """The pids of the processes a stall report lists."""
    return [int(pid) for pid in re.findall(r"^  (\d+) ", report, re.M)]


def test_the_line_counts_a_grandchilds_cpu_and_the_status_is_the_commands() -> None:
    shell = f"{shlex.quote(sys.executable)} -c {shlex.quote(SPIN)}; exit $?"
    result = phase_cost("phase", "bash", "-c", shell)
    assert result.returncode == 3, result.stderr
    used = float(re.search(r"used ([\d.]+)", result.stdout)[1])  # type: ignore[index]
    found = LINE.search(result.stdout)
    assert found, result.stdout
    assert float(found["cpu"]) >= round(used, 1) >= 0.5
    assert float(found["cpu"]) == pytest.approx(
        float(found["user"]) + float(found["system"]), abs=0.11
    )


def test_a_command_that_cannot_run_is_named() -> None:
    result = phase_cost("phase", "/nonexistent/pytest")
    assert result.returncode == 127
    assert "phase: cannot run /nonexistent/pytest" in result.stderr


def test_help_and_a_missing_command() -> None:
    assert phase_cost("--help").returncode == 0
    missing = phase_cost("phase")
    assert missing.returncode == 2 and "LABEL COMMAND" in missing.stderr


def test_a_phase_that_stalls_is_listed_with_its_stacks_killed_and_failed() -> None:
    result = phase_cost("--stall", "2", "phase", "bash", "-c", HANG)
    assert result.returncode == 124, result.stderr
    assert "phase: no progress for 2 s" in result.stderr
    pids = listed_pids(result.stderr)
    assert len(pids) >= 3, result.stderr  # bash, the sleep in its own session, the Python
    assert "sleep 600" in result.stderr
    assert "waiting (<string>:2)" in result.stderr  # py-spy read the Python process's stack
    assert not [pid for pid in pids if alive(pid)], "left running"
    assert LINE.search(result.stdout), result.stdout


def test_a_stalled_run_runs_once_more_and_its_result_is_the_phases(tmp_path: Path) -> None:
    once = tmp_path / "ran once"
    script = f"if [ -e '{once}' ]; then echo second run; exit 0; fi; touch '{once}'; {HANG}"
    result = phase_cost("--again-if-stalled", "--stall", "2", "phase", "bash", "-c", script)
    assert result.returncode == 0, result.stderr
    assert "phase: no progress for 2 s" in result.stderr
    assert "running it once more from the start" in result.stderr
    assert "second run" in result.stdout
    stalling_twice = phase_cost("--again-if-stalled", "--stall", "2", "phase", "bash", "-c", HANG)
    assert stalling_twice.returncode == 124
    assert stalling_twice.stderr.count("phase: no progress for 2 s") == 2


def test_a_failed_run_is_never_run_again(tmp_path: Path) -> None:
    """Not even one that exits with the status a stalled phase ends with."""
    for status in (5, 124):
        runs = tmp_path / f"runs {status}"
        failing = f"echo run >> '{runs}'; exit {status}"
        result = phase_cost("--again-if-stalled", "phase", "bash", "-c", failing)
        assert result.returncode == status
        assert runs.read_text() == "run\n"
        assert "no progress" not in result.stderr


def test_a_phase_that_works_or_prints_is_not_a_stall(tmp_path: Path) -> None:
    """Four seconds with a stall window of two: one spins (CPU time), one sleeps between
    lines it prints to a file, as make collects a phase's output."""
    spin = "import time\nstart = time.monotonic()\nwhile time.monotonic() - start < 4: pass"
    assert phase_cost("--stall", "2", "phase", sys.executable, "-c", spin).returncode == 0
    printing = (
        "import time\nfor line in range(16):\n    print(line, flush=True)\n    time.sleep(0.25)"
    )
    with open(tmp_path / "output", "w") as output:
        done = phase_cost("--stall", "2", "phase", sys.executable, "-c", printing, stdout=output)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "output").read_text().split()[:16] == [str(n) for n in range(16)]


def test_a_bad_stall_window_is_refused() -> None:
    for window in ("soon", "0", "-5"):
        result = phase_cost("--stall", window, "phase", "true")
        assert result.returncode == 2 and "--stall takes a number of seconds" in result.stderr


def test_nbval_waiting_on_a_kernel_that_stopped_answering_is_found_and_ended(
    tmp_path: Path,
) -> None:
    """The hang the guard is for: nbval waits (up to its 2000 s a cell) on a kernel that
    will never answer, here one stopped by its own cell."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        nbformat.v4.new_code_cell("print('answered')"),
        nbformat.v4.new_code_cell("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)"),
        nbformat.v4.new_code_cell("print('never run')"),
    ]
    nbformat.write(notebook, tmp_path / "wedged.ipynb")
    nbval = [str(Path(sys.executable).parent / "pytest"), "-p", "no:cacheprovider", "--nbval-lax"]
    result = subprocess.run(
        [sys.executable, str(TOOL), "--again-if-stalled", "--stall", "10", "notebooks", *nbval,
         "wedged.ipynb"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 124, result.stdout + result.stderr
    assert result.stderr.count("notebooks: no progress for 10 s") == 2  # run, and run again
    kernels = re.findall(r"^  (\d+) T \S+ .*ipykernel_launcher", result.stderr, re.M)
    assert len(kernels) == 2, result.stderr  # each run's kernel listed, stopped (state T)
    assert "RunningKernel.await_reply (nbval/kernel.py" in result.stderr  # where nbval waits
    assert not [pid for pid in listed_pids(result.stderr) if alive(pid)], "left running"
