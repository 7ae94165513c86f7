"""The check service's port in a class: below the ephemeral range, one nothing holds."""

from __future__ import annotations

import random
import socket

import pytest

from autograder.checks import ports


def test_the_default_port_lies_below_the_ephemeral_range_and_is_free() -> None:
    for _ in range(20):
        port = ports.free_port()
        assert ports.LOWEST <= port < ports.ephemeral_start()
        assert ports.bindable(port)


def test_a_held_port_and_a_taken_one_are_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(random, "randrange", lambda _: 0)  # the block's first port first
    block = range(ports.LOWEST + 7000, ports.LOWEST + 7010)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", block[0]))
        listener.listen(1)
        assert not ports.bindable(block[0])
        assert ports.free_port(block) == block[1]
        assert ports.free_port(block, taken={block[1]}) == block[2]
    assert ports.free_port(block) == block[0]  # free again


def test_an_empty_or_held_block_falls_back_to_any_free_port() -> None:
    ephemeral = ports.ephemeral_start()
    assert ports.free_port(range(0)) >= ephemeral
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        held = listener.getsockname()[1]
        assert ports.free_port(range(held, held + 1)) != held
