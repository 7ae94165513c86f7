"""How many class learners' formulas can be checked at fresh numbers (session 40's sweep).

A hand answer's formula is checked at `FRESH_DRAWS` fresh draws of the learner's givens
that keep every branch of the chain (`autograder.diagnosis.fresh_points`). A learner with
none is told their formula "could not be checked" and scores nothing on that part, right or
wrong. This sweep draws the numbers and structure of `--learners` class learners (each in
a course of their own secret, from fixed seeds, so a run is repeatable) for every exercise
with numeric parts, and counts those with all draws, fewer, and none.

    python -m evaluation.fresh_draws --learners 1500
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter

from autograder.core.givens import COURSE_ID, Site
from autograder.diagnosis.fresh_points import FRESH_DRAWS, NUMERIC, fresh_draws
from autograder.specs import SPECS, learner_givens, learner_problem


def sweep(learners: int) -> dict[str, Counter[str]]:
    """Per exercise with numeric parts: learners with all draws, fewer, none."""
    counts: dict[str, Counter[str]] = {}
    for index in range(learners):
        secret = hashlib.sha256(f"fresh-draws sweep {index}".encode()).hexdigest()[:32]
        site, learner = Site(COURSE_ID, secret), f"learner-{index}"
        for name, spec in SPECS.items():
            if not any(part.kind in NUMERIC for part in spec.parts):
                continue
            problem = learner_problem(name, learner, site)
            drawn = len(fresh_draws(problem, learner_givens(name, learner, site)))
            kind = "all" if drawn >= FRESH_DRAWS else "fewer" if drawn else "none"
            counts.setdefault(name, Counter())[kind] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=300, help="learners per exercise")
    args = parser.parse_args()
    if args.learners < 1:
        parser.error("--learners must be at least 1")
    print(f"{'exercise':34} {'all':>6} {'fewer':>6} {'none':>6}")
    for name, counted in sweep(args.learners).items():
        print(f"{name:34} {counted['all']:6} {counted['fewer']:6} {counted['none']:6}")


if __name__ == "__main__":
    main()
