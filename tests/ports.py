"""Loopback ports for the servers the tests start: outside the range others draw from, each
handed out once.

A port found free by binding port 0 comes from the kernel's ephemeral range, which every
kernel's five ZMQ ports, every `bind(0)` and every outgoing connection draw from too.
Between that pick and the server's own bind, seconds pass on a loaded machine, and another
process may take the port. CI saw it: a check service's port answered with another hub's
page, and every check of that hub failed. So `free_port()` draws from below the ephemeral
range, from a block that belongs to this process alone (one block per pytest-xdist worker,
another for a pytest run without workers), checks that nothing listens there yet, and never
hands out a port twice. Where the machine leaves too little room below its ephemeral range,
it falls back to `bind(0)`.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

LOWEST = 10_000  # below: well-known services' ports
BLOCK = 400  # ports per process: far more than one test process starts servers
RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_handed_out: set[int] = set()


def ephemeral_start() -> int:
    """The lowest port of the kernel's ephemeral range (32768 when it cannot be read)."""
    try:
        return int(RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def owner() -> int:
    """This process's block: 1 + the pytest-xdist worker's number, 0 outside a worker."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw3"
    return 1 + int(worker[2:]) if worker[2:].isdigit() else 0


def bindable(port: int) -> bool:
    """Whether nothing holds `port` on the loopback address now."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing holds, never handed out before by this process."""
    blocks = (ephemeral_start() - LOWEST) // BLOCK
    if blocks < 2:
        return _any_free_port()
    first = LOWEST + (owner() % blocks) * BLOCK
    start = random.randrange(BLOCK)  # two runs of one machine (a phase each) rarely meet
    for _ in range(2):
        for offset in range(start, start + BLOCK):
            port = first + offset % BLOCK
            if port not in _handed_out and bindable(port):
                _handed_out.add(port)
                return port
        _handed_out.clear()  # every port handed out: the earliest servers are long gone
    return _any_free_port()  # the whole block held by others


def _any_free_port() -> int:
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
