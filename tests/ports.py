"""Loopback ports for the servers the tests start: below the ephemeral range, from a block
of this process's own, each handed out once.

CI saw why: a port found by binding port 0 (the ephemeral range) was taken by another
worker's hub between the pick and the check service's own bind, and every check of that
hub failed. `autograder.checks.ports` keeps ports below the ephemeral range. Here each
process also draws from a block that belongs to it alone (one block per pytest-xdist
worker, another for a pytest run without workers), so two workers never pick the same
number, and never hands out a port twice: a server given a port may not have bound it yet.
"""

from __future__ import annotations

import os

from autograder.checks.ports import LOWEST, ephemeral_start
from autograder.checks.ports import free_port as port_below_ephemeral

BLOCK = 400  # ports per process: far more than one test process starts servers
_handed_out: set[int] = set()


def owner() -> int:
    """This process's block: 1 + the pytest-xdist worker's number, 0 outside a worker."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw3"
    return 1 + int(worker[2:]) if worker[2:].isdigit() else 0


def free_port() -> int:
    """A loopback port nothing holds, never handed out before by this process. With less
    room below the ephemeral range than two blocks, any free port (`bind(0)`)."""
    blocks = (ephemeral_start() - LOWEST) // BLOCK
    block = range(0)
    if blocks >= 2:
        first = LOWEST + (owner() % blocks) * BLOCK
        block = range(first, first + BLOCK)
        if _handed_out.issuperset(block):
            _handed_out.clear()  # every port handed out: the earliest servers are long gone
    port = port_below_ephemeral(block, taken=_handed_out)
    _handed_out.add(port)
    return port
