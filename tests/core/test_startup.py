"""`loading`: a start-up's imports without the collector's rescans, then frozen out of them."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from autograder.core.startup import loading


@pytest.fixture(autouse=True)
def collector_as_it_was() -> Iterator[None]:
    """Each test leaves the collector enabled and nothing of this process frozen."""
    yield
    gc.unfreeze()
    gc.enable()


def test_paused_while_loading_then_enabled_with_what_was_loaded_frozen() -> None:
    gc.unfreeze()
    with loading():
        assert not gc.isenabled()
        loaded = [[n] for n in range(1000)]  # objects the collector tracks
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(loaded)


def test_an_error_while_loading_still_enables_the_collector() -> None:
    with pytest.raises(ImportError), loading():
        import autograder.no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert gc.isenabled()


def test_nested_the_outer_one_decides() -> None:
    gc.unfreeze()
    with loading():
        with loading():
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_a_collector_paused_by_the_caller_stays_paused_and_nothing_is_frozen() -> None:
    gc.unfreeze()
    gc.disable()
    with loading():
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == 0
