"""The work of reading hand answers, counted (not timed), and the budget it must stay within.

Work is every call the interpreter makes while reading (Python and C functions, counted
with `sys.setprofile`) plus every character handed to the parser. A count does not
depend on how loaded the machine is; `benchmarks/byhand_cost.py` prints the seconds.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from autograder.diagnosis.byhand import HandAnswer, ReadingCost, read_hand_answers

WORK_PER_CHAR = 100
"""Budget: interpreter calls plus parsed characters per character of the cells."""
WORK_BASE = 20_000
"""Budget: fixed work per reading (imports warmed, small cells)."""


def work(cells: list[str]) -> tuple[int, dict[str, HandAnswer]]:
    """(work spent reading `cells`, the answers read)."""
    cost = ReadingCost()
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        calls += 1

    sys.setprofile(count)
    try:
        answers = read_hand_answers(cells, cost=cost)
    finally:
        sys.setprofile(None)
    return calls + cost.parsed_chars, answers


def budget(cells: list[str]) -> int:
    """The most work reading `cells` may cost: linear in their characters."""
    return WORK_BASE + WORK_PER_CHAR * sum(map(len, cells))
