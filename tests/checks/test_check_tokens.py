"""The check service's memory of whose hub token is whose (`checks.tokens`): the hub's yes
kept for a while and for so many tokens, its no for a shorter while, a failure to ask never,
one question per token at a time. The hub here is a coroutine answering from a table and
counting the questions; the real hub's refusal is tested in tests/checks/test_check_service.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from autograder.checks.tokens import TokenOwners


def in_own_loop(run: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """`asyncio.run(run())` on a thread of its own: this pytest worker's thread may have
    a running loop already (Playwright's sync API, from the browser tests, leaves one)."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(lambda: asyncio.run(run())).result()


class Hub:
    """The hub's side of `TokenOwners`: answers from `known`, counting questions; each
    question waits for `gate` (open unless closed) and fails with `error` if set."""

    def __init__(self, known: dict[str, dict[str, str]]) -> None:
        self.known = known
        self.asked: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.error: Exception | None = None

    async def __call__(self, token: str) -> dict[str, str] | None:
        self.asked.append(token)
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        return self.known.get(token)


def test_the_hubs_yes_is_remembered_for_a_while_and_its_no_briefly() -> None:
    now = [0.0]
    hub = Hub({"ada-token": {"name": "ada"}})
    owners = TokenOwners(hub, ttl=60, size=10, clock=lambda: now[0], no_ttl=10)

    async def run() -> None:
        assert await owners.owner("ada-token") == {"name": "ada"}
        now[0] = 59.0
        assert await owners.owner("ada-token") == {"name": "ada"}
        assert hub.asked == ["ada-token"]  # remembered
        now[0] = 60.0
        assert await owners.owner("ada-token") == {"name": "ada"}
        assert hub.asked == ["ada-token"] * 2  # expired: asked again
        for _ in range(3):
            assert await owners.owner("forged") is None
        assert hub.asked.count("forged") == 1  # the no is remembered ...
        now[0] = 69.0
        assert await owners.owner("forged") is None
        assert hub.asked.count("forged") == 1
        now[0] = 70.0
        hub.known["forged"] = {"name": "eve"}  # ... for no_ttl only: a new yes is seen
        assert await owners.owner("forged") == {"name": "eve"}
        assert hub.asked.count("forged") == 2
        hub.error = RuntimeError("hub down")
        with pytest.raises(RuntimeError):
            await owners.owner("ben-token")
        hub.error, hub.known["ben-token"] = None, {"name": "ben"}
        assert await owners.owner("ben-token") == {"name": "ben"}  # the failure was not kept

    in_own_loop(run)
    assert "ada-token" not in repr(owners._known)  # kept as digests only
    assert "forged" not in repr(owners._refused)


def test_the_hubs_noes_are_bounded() -> None:
    hub = Hub({})
    owners = TokenOwners(hub, ttl=60, size=3, no_ttl=60)

    async def run() -> None:
        for i in range(5):
            assert await owners.owner(f"made-up-{i}") is None
        assert await owners.owner("made-up-4") is None  # among the last three: remembered
        assert await owners.owner("made-up-0") is None  # the oldest went first: asked again
        assert hub.asked == [f"made-up-{i}" for i in range(5)] + ["made-up-0"]
        assert len(owners._refused) == 3

    in_own_loop(run)


def test_token_owners_are_bounded() -> None:
    hub = Hub({f"t{i}": {"name": f"s{i}"} for i in range(5)})
    owners = TokenOwners(hub, ttl=60, size=3)

    async def run() -> None:
        for i in range(5):
            await owners.owner(f"t{i}")
        assert len(owners) == 3
        await owners.owner("t4")  # among the last three: remembered
        await owners.owner("t0")  # the oldest went first: asked again
        assert hub.asked == ["t0", "t1", "t2", "t3", "t4", "t0"]

    in_own_loop(run)


def test_checks_arriving_together_ask_the_hub_once() -> None:
    hub = Hub({"ada-token": {"name": "ada"}})
    owners = TokenOwners(hub)

    async def run() -> None:
        hub.gate.clear()
        waiting = [asyncio.ensure_future(owners.owner("ada-token")) for _ in range(50)]
        await asyncio.sleep(0)
        hub.gate.set()
        assert await asyncio.gather(*waiting) == [{"name": "ada"}] * 50
        assert hub.asked == ["ada-token"]
        hub.gate.clear()
        hub.error = RuntimeError("hub down")
        failing = [asyncio.ensure_future(owners.owner("ben-token")) for _ in range(5)]
        await asyncio.sleep(0)
        hub.gate.set()
        outcomes = await asyncio.gather(*failing, return_exceptions=True)
        assert all(isinstance(o, RuntimeError) for o in outcomes), outcomes  # none let in

    in_own_loop(run)
