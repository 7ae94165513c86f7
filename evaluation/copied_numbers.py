"""The copied-number probe (issue 25): a hand-in that writes PyTorch's own numbers into
every answer cell, as a learner copying each "PyTorch gives X" from the check would, judged
as the grader judges (`read_hand_answers`, `judge`). A number written out earns nothing
where the value follows from the givens (the formula parts); it stays the answer where the
chain's branches fix it (the slope 1 of an open ReLU) and for facts (True/False, a count).

    python -m evaluation.copied_numbers --learners 20

prints, per exercise, the points such hand-ins earn on each kind of part, for self-study
learners and for class learners (a course secret set: each their own structure).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, fields

from autograder.core.givens import Site
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.fresh_points import NUMERIC, fixed_by_branches
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.diagnosis.references import reference_quantities
from autograder.specs import SPECS, exercise_spec, learner_givens, learner_problem

CLASS = Site("copied-numbers-class", "a course secret for the measurement")


def copied_sources(problem: str, givens: Mapping[str, float]) -> list[str]:
    """A hand-in of PyTorch's own numbers: `name = value` for every quantity."""
    quantities = reference_quantities(problem, dict(givens))
    return [f"{name} = {q.value!r}" for name, q in quantities.items()]


@dataclass
class Tally:
    """Points a copied hand-in earned (of the points in all) on each kind of part."""

    formula: int = 0
    formula_total: int = 0
    fixed: int = 0
    fixed_total: int = 0
    facts: int = 0
    facts_total: int = 0

    def add(self, other: Tally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def probe(problem: str, givens: Mapping[str, float]) -> Tally:
    """What one copied hand-in earns on `problem` at `givens`."""
    spec = exercise_spec(problem)
    context = JudgeContext(
        problem, dict(givens), read_hand_answers(copied_sources(problem, givens), dict(givens))
    )
    fixed = fixed_by_branches(problem, givens)
    tally = Tally()
    for part in spec.parts:
        if part.kind == "fact":
            kind = "facts"
        elif part.kind in NUMERIC:
            kind = "fixed" if part.name in fixed else "formula"
        else:
            continue
        earned = part.points if judge(problem, part.name, context).passed else 0
        setattr(tally, kind, getattr(tally, kind) + earned)
        setattr(tally, f"{kind}_total", getattr(tally, f"{kind}_total") + part.points)
    return tally


def measure(learners: int, site: Site | None) -> dict[str, Tally]:
    """Each exercise's tally over `learners` learners (self-study when `site` is None)."""
    tallies = {}
    for exercise in SPECS:
        tally = Tally()
        for index in range(learners):
            learner = f"learner-{index}"
            if site is None:
                problem, givens = exercise, learner_givens(exercise, learner)
            else:
                problem = learner_problem(exercise, learner, site)
                givens = learner_givens(exercise, learner, site)
            tally.add(probe(problem, givens))
        tallies[exercise] = tally
    return tallies


def _row(name: str, t: Tally) -> str:
    return (
        f"{name:34} {f'{t.formula}/{t.formula_total}':>13} {f'{t.fixed}/{t.fixed_total}':>17}"
        f" {f'{t.facts}/{t.facts_total}':>7}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--learners", type=int, default=20, help="learners of each kind (default 20)"
    )
    args = parser.parse_args(argv)
    for title, site in (("self-study", None), ("class (a course secret set)", CLASS)):
        tallies = measure(args.learners, site)
        print(
            f"{args.learners} {title} learners, each handing in PyTorch's own numbers;"
            " points earned:"
        )
        print(f"{'exercise':34} {'formula parts':>13} {'fixed by branches':>17} {'facts':>7}")
        total = Tally()
        for exercise, tally in tallies.items():
            print(_row(exercise, tally))
            total.add(tally)
        print(_row("all", total))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
