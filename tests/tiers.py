"""The suite's tiers: `make check` runs the in-process tests, `make test` every test.

A test that starts another process (a kernel, a server, nbgrader, a sandbox, a browser,
any subprocess) carries one of the `SPAWNING_MARKS`; the quick tier deselects those
(`pytest -m "not (processes or nbgrader or sandbox or browser)"`). The marks cannot drift:
an audit hook sees every process a test starts (subprocess, fork, exec, spawn, system),
and refuses it to a test without such a mark, which then fails at once, naming the mark to
add (in its setup and call; a tear-down may end what a wider fixture started). The same
check runs in both tiers, so a test that would slow the quick tier is caught by either.
`tests/conftest.py` loads this plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

import pytest

SPAWNING_MARKS = ("processes", "nbgrader", "sandbox", "browser")
QUICK_TIER = "not (" + " or ".join(SPAWNING_MARKS) + ")"
STARTS_A_PROCESS = {
    "subprocess.Popen",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "os.exec",
    "os.system",
    "pty.spawn",
}


class SpawnRefused(RuntimeError):
    """A test without a spawning mark tried to start a process."""


class Watch:
    """What the running test may do, and the first process it tried to start without leave."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.may_spawn = True
        self.started: str | None = None

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in STARTS_A_PROCESS and not self.may_spawn:
            shown = args[0] if args else ""
            self.started = self.started or f"{event}({str(shown)[:120]})"
            raise SpawnRefused(f"{self.test} may not start a process: {advice()}")


WATCH = Watch()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "processes: starts another process (not in `make check`)")
    sys.addaudithook(WATCH.audit)  # hooks stay for the process's life: WATCH decides


def may_spawn(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(mark) is not None for mark in SPAWNING_MARKS)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    WATCH.test, WATCH.may_spawn, WATCH.started = item.nodeid, may_spawn(item), None
    try:
        return (yield)
    finally:
        WATCH.test, WATCH.may_spawn = None, True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Tear-down may stop what wider fixtures started (a hub, a server): their finalizers
    run in whichever test's tear-down comes last, so the phase is not the test's own."""
    WATCH.may_spawn = True
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test without a spawning mark that tried to start a process fails, saying which
    mark (also when the test caught the refusal)."""
    report = yield
    if WATCH.started is not None:
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} tried to start a process ({WATCH.started}): {advice()}"
        WATCH.started = None
    return report


def advice() -> str:
    return (
        f"it carries none of the marks {', '.join(SPAWNING_MARKS)}. Mark it (usually "
        "`processes`), so `make check`, the in-process tier, leaves it to `make test`."
    )
