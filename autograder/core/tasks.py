"""What a code part asks for: a function the learner writes (`FunctionTask`) or a class
(`ClassTask`). Data only: judging them is `autograder.answers`; the spec format names them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

GRAPHS_PER_PART = 200
"""Random graphs drawn for each class part, in the kernel and in the grader."""


@dataclass(frozen=True)
class FunctionTask:
    """A function the learner writes, with cases, PyTorch's answer, and known wrong versions."""

    name: str
    label: str
    make_cases: Callable[[random.Random], list[tuple[float, ...]]]
    reference: Callable[..., float]
    hint: str
    mistakes: tuple[tuple[Callable[..., float], str], ...] = ()


@dataclass(frozen=True)
class ClassTask:
    """What a class part builds: the class's name, the operations drawn, how many graphs."""

    cls: str
    label: str
    ops: tuple[str, ...]
    hint: str
    count: int = GRAPHS_PER_PART
