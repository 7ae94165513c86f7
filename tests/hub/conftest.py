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
