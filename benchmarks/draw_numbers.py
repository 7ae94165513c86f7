"""Benchmark: draw the numbers of 1000 students of one assignment and compute their references.

Drawing is pure Python (a seeded draw per student, rejecting draws that break a
constraint); the references come from one batched run of the spec's PyTorch program, with
every gradient checked by finite differences and every chain and model answer checked.
The baseline, in the same run, computes the same references one student at a time (what
the checker does in a learner's kernel). Goal: under a second for 1000 students.

    python benchmarks/draw_numbers.py [--students 1000] [--assignment 07_try_it]
    python benchmarks/draw_numbers.py --collisions [--class-size 100]

``--collisions``: per exercise, in classes of ``--class-size`` learners, how many
distinct sets of numbers there are and how many learners share their whole set with a
classmate (mean over 20 classes), beside the number of sets the spec allows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.core.engine import compute  # noqa: E402
from autograder.core.givens import draw, seed  # noqa: E402
from autograder.specs import SPECS  # noqa: E402

GOAL_SECONDS = 1.0


def givens_of(assignment: str, students: list[str]) -> list[dict[str, float]]:
    """Every student's numbers, drawn without the cache (what a first run pays)."""
    import random

    spec = SPECS[assignment]
    return [draw(spec, random.Random(seed(assignment, s))) for s in students]


def number_sets(assignment: str) -> int:
    """How many different sets of given values a learner can draw (every constraint met)."""
    import itertools

    spec = SPECS[assignment]
    pools = [[c for c in g.choices if c != g.lesson] for g in spec.givens]
    names = [g.name for g in spec.givens]
    tests = [test for _, test in spec.constraints]
    return sum(
        all(test(dict(zip(names, values, strict=True))) for test in tests)
        for values in itertools.product(*pools)
    )


def collision_rates(class_size: int, classes: int = 20) -> int:
    """Print, per exercise, the share of learners whose numbers a classmate also has."""
    worst = 0.0
    print(f"{'exercise':36} {'sets allowed':>12} {'distinct':>9} {'sharing':>8}")
    for assignment in sorted(SPECS):
        distinct = sharing = 0.0
        for k in range(classes):
            students = [f"class{k}-student-{i:04d}" for i in range(class_size)]
            sets = [tuple(sorted(g.items())) for g in givens_of(assignment, students)]
            counts = {s: sets.count(s) for s in set(sets)}
            distinct += len(counts) / classes
            sharing += sum(c for c in counts.values() if c > 1) / class_size / classes
        worst = max(worst, sharing)
        allowed = number_sets(assignment)
        print(f"{assignment:36} {allowed:12d} {distinct:9.1f} {sharing:8.1%}")
    print(f"worst: {worst:.1%} of a class of {class_size} share their numbers with a classmate")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--assignment", default="07_try_it", choices=sorted(SPECS))
    parser.add_argument("--collisions", action="store_true", help="shared numbers per exercise")
    parser.add_argument("--class-size", type=int, default=100)
    args = parser.parse_args()
    if args.collisions:
        return collision_rates(args.class_size)
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
