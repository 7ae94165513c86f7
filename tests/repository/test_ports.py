"""The test servers' ports: below the ephemeral range, a block per process, never twice
(choosing a free one in a block: tests/checks/test_check_ports.py)."""

from __future__ import annotations

import socket

import ports
import pytest


def test_ports_lie_below_the_ephemeral_range_and_never_repeat() -> None:
    handed = [ports.free_port() for _ in range(60)]
    assert len(set(handed)) == len(handed)
    assert all(ports.LOWEST <= port < ports.ephemeral_start() for port in handed), handed
    first = ports.LOWEST + ports.owner() * ports.BLOCK
    assert all(first <= port < first + ports.BLOCK for port in handed), (first, handed)


def test_each_worker_draws_from_a_block_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = {}
    for worker in ["", "gw0", "gw1", "gw7"]:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        port = ports.free_port()
        blocks[worker] = (port - ports.LOWEST) // ports.BLOCK
    assert blocks == {"": 0, "gw0": 1, "gw1": 2, "gw7": 8}


def test_with_no_room_below_the_ephemeral_range_any_free_port_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ephemeral = ports.ephemeral_start()
    monkeypatch.setattr(ports, "ephemeral_start", lambda: ports.LOWEST + ports.BLOCK)
    port = ports.free_port()
    assert port >= ephemeral  # the kernel's pick (bind to port 0)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # free when handed out
