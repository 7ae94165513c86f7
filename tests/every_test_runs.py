"""Under CI (`CI=true`) and `make test` (`EVERY_TEST=1`) a skipped test fails the run.

A skip there would be a check reported as passed without running: a missing Chromium, an
exercises/ folder not generated. The report keeps the skip's reason and says why it
failed. A test that describes one kind of machine only (`machine_specific`) may still skip.
Run by hand, `pytest` skips as usual. `tests/conftest.py` loads this plugin.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

MARKER = "machine_specific"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: describes one kind of machine; may skip on the others, even under CI"
    )


def every_test_must_run() -> bool:
    """True under CI (CI=true) and `make test` (EVERY_TEST=1)."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("EVERY_TEST") == "1"


def skip_reason(report: pytest.TestReport) -> str:
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A skip becomes a failure, with its reason, where every test must run."""
    report = yield
    if (
        report.skipped
        and not hasattr(report, "wasxfail")
        and every_test_must_run()
        and item.get_closest_marker(MARKER) is None
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"{skip_reason(report)}\n"
            "This test skipped, and CI (CI=true) and `make test` (EVERY_TEST=1) run every "
            "test: a skip would be a check reported as passed without running."
        )
    return report
