"""Where the suite's CPU goes: `pytest ... --cpu-report=FILE` (a measuring tool, no check).

Around each test's setup, call and tear-down, every process (an xdist worker too) notes the
CPU (user + system) of itself, of its children it has reaped, and of every process still
running below it (with what those have reaped), and appends the difference to FILE, one
JSON line a phase (`cpu`; `own`: the test process's own share, the in-process work). The
process that runs the session (xdist's controller, or the only one) prints the 30 costliest
phases, the costliest test files (all of it, and the test process's own), and the sum
against its own children's total (the workers: what `/usr/bin/time` counts). A shared
fixture is charged to the phase that built it; a server left running charges whichever
test ran meanwhile; a process that left the tree (re-parented to init) is not seen.
"""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Generator
from pathlib import Path

import pytest
from process_tree import descendants

TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu() -> float:
    """CPU seconds of the processes running below this one, with what they have reaped."""
    total = 0
    for pid in descendants(os.getpid())[1:]:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def own_cpu() -> float:
    """CPU seconds of this process alone."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def cpu_now() -> float:
    """CPU seconds of this process and everything it started, reaped or still running."""
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own_cpu() + reaped.ru_utime + reaped.ru_stime + _tree_cpu()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        metavar="FILE",
        default=None,
        help="record each test phase's CPU (children included) in FILE; print the costliest",
    )


def _target(config: pytest.Config) -> Path | None:
    value = config.getoption("cpu_report", default=None)
    return Path(value).resolve() if value else None


def pytest_configure(config: pytest.Config) -> None:
    target = _target(config)
    if target is not None and not hasattr(config, "workerinput"):
        target.write_text("")  # the session's process starts it afresh


def _measured(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    target = _target(item.config)
    if target is None:
        yield
        return
    start, own_start = cpu_now(), own_cpu()
    yield
    spent, own = cpu_now() - start, own_cpu() - own_start
    line = json.dumps(
        {"test": item.nodeid, "phase": phase, "cpu": round(spent, 3), "own": round(own, 3)}
    )
    with target.open("a") as handle:  # one short line a write: appends do not interleave
        handle.write(line + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "teardown")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    target = _target(config)
    if target is None or hasattr(config, "workerinput") or not target.exists():
        return
    rows = [json.loads(line) for line in target.read_text().splitlines() if line]
    by_file: dict[str, float] = {}
    own_by_file: dict[str, float] = {}
    for row in rows:
        name = row["test"].split("::")[0]
        by_file[name] = by_file.get(name, 0.0) + row["cpu"]
        own_by_file[name] = own_by_file.get(name, 0.0) + row["own"]
    write = terminalreporter.write_line
    terminalreporter.section("CPU by test phase (children included), top 30")
    for row in sorted(rows, key=lambda r: -r["cpu"])[:30]:
        write(f"{row['cpu']:8.1f} s  {row['phase']:8} {row['test']}")
    terminalreporter.section("CPU by test file, top 30")
    for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[:30]:
        write(f"{cpu:8.1f} s  {name}")
    terminalreporter.section("the test process's own CPU by test file, top 15")
    for name, cpu in sorted(own_by_file.items(), key=lambda kv: -kv[1])[:15]:
        write(f"{cpu:8.1f} s  {name}")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    write(
        f"phases: {sum(r['cpu'] for r in rows):.1f} CPU-s "
        f"({sum(r['own'] for r in rows):.1f} in the test processes); this process "
        f"{own_cpu():.1f} s, its reaped children "
        f"{children.ru_utime + children.ru_stime:.1f} s, still running {_tree_cpu():.1f} s"
    )
