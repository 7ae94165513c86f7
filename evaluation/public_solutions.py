"""What the repository's public solutions earn in a class, where each learner has a
structure of their own (issue 27): the share of the formula parts' points that the solution
notebook's answers earn when handed in by class learners, judged as the grader judges
(`read_hand_answers`, `judge`, the learner's problem and numbers), beside what each
learner's own right formulas (their problem's model answers) earn.

    python -m evaluation.public_solutions --learners 20

prints one line per exercise and the total; an exercise whose structure does not vary
still gives the copied solutions every point, and says so.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.core.givens import Site
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.fresh_points import NUMERIC
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.specs import SPECS, exercise_spec, learner_givens, learner_problem

ROOT = Path(__file__).resolve().parent.parent
CLASS = Site("public-solutions-class", "a course secret for the measurement")


def solution_sources(exercise: str) -> list[str]:
    """The code cells of the public solution notebook, as a learner copying it hands in."""
    path = ROOT / "solutions" / exercise / f"{exercise}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def own_sources(problem: str) -> list[str]:
    """The learner's own right formulas: their problem's model answers, with the Given cell."""
    spec = exercise_spec(problem)
    names = ", ".join(spec.given_names)
    quoted = ", ".join(f'"{n}"' for n in spec.given_names)
    given = f"{names} = exercise.given({quoted})"
    return [given, *(p.code for p in spec.parts if p.kind in NUMERIC)]


def formula_points(problem: str, givens: dict[str, float], sources: list[str]) -> tuple[int, int]:
    """(points earned, points in all) of the formula parts of `problem` for `sources`."""
    spec = exercise_spec(problem)
    context = JudgeContext(problem, givens, read_hand_answers(sources, givens))
    earned = total = 0
    for part in spec.parts:
        if part.kind not in NUMERIC:
            continue
        total += part.points
        if judge(problem, part.name, context).passed:
            earned += part.points
    return earned, total


@dataclass
class Tally:
    """One exercise's figures over a class."""

    exercise: str
    varies: bool
    copied: int = 0
    own: int = 0
    total: int = 0
    problems: int = 0


def measure(learners: int, site: Site = CLASS) -> list[Tally]:
    """Every exercise's tally for `learners` class learners handing in the public solutions
    and their own right formulas."""
    tallies = []
    for exercise, spec in SPECS.items():
        if not any(p.kind in NUMERIC for p in spec.parts):
            continue
        tally = Tally(exercise, bool(spec.variants))
        solution = solution_sources(exercise)
        seen = set()
        for index in range(learners):
            learner = f"class-learner-{index}"
            givens = learner_givens(exercise, learner, site)
            problem = learner_problem(exercise, learner, site)
            seen.add(problem)
            copied, total = formula_points(problem, givens, solution)
            own, _ = formula_points(problem, givens, own_sources(problem))
            tally.copied += copied
            tally.own += own
            tally.total += total
        tally.problems = len(seen)
        tallies.append(tally)
    return tallies


COUNTS = ("copied", "own", "total")


def _row(name: str, structures: str, copied: int, own: int, total: int) -> str:
    share, own_share = copied / total, own / total
    return f"{name:34} {structures:>10} {copied:>7}/{total:<5} {share:>4.0%} {own_share:>12.0%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=20, help="class learners (default 20)")
    args = parser.parse_args(argv)
    tallies = measure(args.learners)
    print(f"{args.learners} class learners (a course secret set), formula parts' points:")
    print(f"{'exercise':34} {'structures':>10} {'public solutions':>17} {'own formulas':>13}")
    for t in tallies:
        note = "" if t.varies else "  (structure does not vary)"
        print(_row(t.exercise, str(t.problems), t.copied, t.own, t.total) + note)
    print(_row("all", "", *(sum(getattr(t, f) for t in tallies) for f in COUNTS)))
    varied = [t for t in tallies if t.varies]
    if varied:
        print(
            _row(
                "the exercises that vary", "", *(sum(getattr(t, f) for t in varied) for f in COUNTS)
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
