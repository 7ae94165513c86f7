"""One class hub and one browser for every test here (a hub takes minutes to start)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: pg_server

from class_hub import ClassHub  # noqa: E402
from playwright.sync_api import Browser, sync_playwright  # noqa: E402


@pytest.fixture(scope="session")
def hub() -> Iterator[ClassHub]:
    started = ClassHub.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture(autouse=True)
def close_pages_afterwards(request: pytest.FixtureRequest) -> Iterator[None]:
    """Close every page a test opened when it ends: a notebook left open in a student's
    JupyterLab is autosaved minutes later, writing their home in the middle of a later
    test that checks nothing there changes."""
    yield
    if "browser" in request.fixturenames:
        launched: Browser = request.getfixturevalue("browser")
        for context in launched.contexts:
            context.close()
