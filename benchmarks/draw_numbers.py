"""Benchmark: draw the numbers of 1000 students of one assignment and compute their references.

Drawing is pure Python (a seeded draw per student, rejecting draws that break a
constraint); the references come from one batched run of the spec's PyTorch program, with
every gradient checked by finite differences and every chain and model answer checked.
The baseline, in the same run, computes the same references one student at a time (what
the checker does in a learner's kernel). Goal: under a second for 1000 students.

    python benchmarks/draw_numbers.py [--students 1000] [--assignment 07_try_it]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.core.engine import compute  # noqa: E402
from autograder.core.givens import draw, seed  # noqa: E402
from autograder.exercises import SPECS  # noqa: E402

GOAL_SECONDS = 1.0


def givens_of(assignment: str, students: list[str]) -> list[dict[str, float]]:
    """Every student's numbers, drawn without the cache (what a first run pays)."""
    import random

    spec = SPECS[assignment]
    return [draw(spec, random.Random(seed(assignment, s))) for s in students]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--assignment", default="07_try_it", choices=sorted(SPECS))
    args = parser.parse_args()
    students = [f"student-{i:05d}" for i in range(args.students)]
    spec = SPECS[args.assignment]
    compute(spec, givens_of(args.assignment, students[:2]))  # import torch, warm up

    started = time.perf_counter()
    drawn = givens_of(args.assignment, students)
    drew = time.perf_counter() - started
    rows = compute(spec, drawn)
    total = time.perf_counter() - started
    assert len(rows) == len(students)

    started = time.perf_counter()
    for givens in drawn:
        compute(spec, [givens])
    one_by_one = time.perf_counter() - started

    print(f"{args.assignment}, {len(students)} students")
    print(f"  draw numbers:                 {drew:7.3f} s")
    print(f"  draw + references (batched):  {total:7.3f} s   goal < {GOAL_SECONDS:.1f} s")
    print(f"  baseline, one at a time:      {one_by_one:7.3f} s   ratio {one_by_one / total:.1f}x")
    return 0 if total < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
