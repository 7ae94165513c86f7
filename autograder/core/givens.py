"""Drawing a learner's given values: deterministic from the course id, the exercise and the
learner's identity (same learner, same numbers, on any machine), or fresh for practice.
Only the standard library (no PyTorch), so it is fast.
"""

from __future__ import annotations

import hashlib
import random

from autograder.core.spec import ExerciseSpec

COURSE_ID = "backward-course"
"""The nbgrader course id; part of every learner's seed."""
MAX_DRAWS = 10_000


def seed(exercise: str, learner: str) -> int:
    """The learner's seed for `exercise`: from the course id, the assignment and the learner."""
    text = f"{COURSE_ID}\0{exercise}\0{learner}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


_POOLS: dict[str, list[tuple[str, list[float]]]] = {}


def draw(spec: ExerciseSpec, rng: random.Random) -> dict[str, float]:
    """Given values drawn with `rng` until every constraint holds (never the lesson's)."""
    pools = _POOLS.get(spec.name)
    if pools is None:
        pools = [(g.name, [c for c in g.choices if c != g.lesson]) for g in spec.givens]
        _POOLS[spec.name] = pools
    tests = [test for _, test in spec.constraints]
    choice = rng.choice
    for _ in range(MAX_DRAWS):
        values = {name: choice(pool) for name, pool in pools}
        if all(test(values) for test in tests):
            return {**values, **spec.constants}
    raise RuntimeError(f"{spec.name}: no draw met the constraints in {MAX_DRAWS} tries")
