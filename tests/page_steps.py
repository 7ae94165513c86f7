"""Playwright's waits on a machine of any speed (the browser tests, the class hub's).

A step that waits on work (a kernel computing, a server spawning, a validation) goes
through `patiently`: Playwright's own wait, in slices of a few seconds, tried again for as
long as the signs of that work move (stall_guard.keep_trying); it fails only when nothing
has moved for stall_guard's window, saying what it waited for. Every other step (a click,
a fill, a menu, an `expect` on what the page shows by itself) waits on the browser alone:
`new_context` gives it the whole stall window, the same "nothing came for 300 s: hung"
a progress-based wait concludes when none of its signs moves, and far beyond what such a
step takes on a machine many times slower than this one (milliseconds to a few seconds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import stall_guard
from playwright.sync_api import Browser, BrowserContext, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

STEP_MS = stall_guard.STALL_SECONDS * 1000  # a step that waits on the browser alone
NOT_YET = (AssertionError, PlaywrightTimeout)  # what a Playwright wait raises when its time is up

T = TypeVar("T")


def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """`browser.new_context(**options)` whose steps (and every `expect`) wait the stall window."""
    expect.set_options(timeout=STEP_MS)  # Playwright's default for `expect`: 5 s
    context = browser.new_context(**options)
    context.set_default_timeout(STEP_MS)  # and for clicks, fills, loads: 30 s
    return context


def patiently(step: Callable[[float], T], what: str, signs: Sequence[stall_guard.Sign]) -> T:
    """`step(timeout_ms)` (a Playwright wait: `lambda ms: expect(x).to_be_visible(timeout=ms)`)
    tried in slices while `signs` move; its result. `Stalled` when nothing moves."""
    return stall_guard.keep_trying(lambda seconds: step(seconds * 1000), what, signs, NOT_YET)
