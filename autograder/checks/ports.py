"""A loopback port for a server started by name (the class's check service, the tests'
servers): chosen below the kernel's ephemeral range.

A port found by binding port 0 comes from the ephemeral range. Every kernel's ZMQ ports,
every other `bind(0)` and every outgoing connection draw from the same range. A server is
told its port before it binds it, and in those seconds, on a busy machine, another process
may take the number. Below the ephemeral range only processes that name a port take one.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Collection
from pathlib import Path

LOWEST = 10_000  # below: well-known services' ports
RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_start() -> int:
    """The lowest port of the kernel's ephemeral range (32768 when it cannot be read)."""
    try:
        return int(RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(port: int) -> bool:
    """Whether nothing holds `port` on the loopback address now."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(block: range | None = None, taken: Collection[int] = ()) -> int:
    """A loopback port nothing holds, from `block` (all of LOWEST up to the ephemeral
    range when None) and not in `taken`, tried from a random place in the block. When the
    block is held throughout, or empty, a port from `bind(0)` (not in `taken`)."""
    if block is None:
        block = range(LOWEST, ephemeral_start())
    if len(block):
        start = random.randrange(len(block))
        for offset in range(len(block)):
            port = block[(start + offset) % len(block)]
            if port not in taken and bindable(port):
                return port
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port
