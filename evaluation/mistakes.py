"""Typical mistakes made from a spec, to measure how often `diagnose` names them right.

For each part and each kind of mistake a learner makes (an extra, missing or misplaced
given factor, a missing local slope, the forward value for a slope, a flipped sign,
accumulated backward calls, a follow-on from a wrong earlier answer, a shut gate treated
as open, a zero where the gate is open, a known wrong answer), `mistakes(spec, values)`
computes the wrong number that mistake produces, from the spec's chain.
`named_right(exercise, learners)` diagnoses each and counts how often the reason names
the mistake.

    python -m evaluation.mistakes [--learners 50]

prints, per exercise and kind, the share named right (the property tests require 95%).
With `--corpus`, it judges the corpus of written wrong answers instead
(`evaluation.corpus`, through the grader's real path) and prints, per mistake
class, how many were named, generic and misnamed, and the time one judgment took.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from autograder.core.givens import Site
from autograder.core.quantities import Quantity
from autograder.core.spec import ExerciseSpec, Part
from autograder.core.verdict import matches
from autograder.diagnosis.diagnose import diagnose, related_givens, upstream_names
from autograder.diagnosis.formula_pair import flat_factors
from autograder.diagnosis.fresh_points import recompute
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.specs import exercise_spec, learner_givens, learner_problem

NUMERIC = ("forward", "local_slope", "gradient")
MISSES: list[tuple[str, Mistake, str]] | None = None
"""When a list, every mistake not named right is appended (for inspection)."""
ACCUMULATED_CALLS = (2, 3, 4)
HOSTILE = "\n".join(
    [
        "t1 = w * x + b - w2 * x",
        *(f"t{i} = t{i - 1} * t{i - 2 if i > 2 else 1} - w2 * x + b" for i in range(2, 8)),
        "out = t7 * w2 - t6 + t1",
    ]
)
"""The largest answer the formula reader still reads: helper lines chained to the cap."""


@dataclass(frozen=True)
class Mistake:
    """One wrong answer: which part, which kind of mistake, the number, earlier answers."""

    part: str
    kind: str
    value: float
    answers: Mapping[str, float]


def _number(expression: str, names: Mapping[str, Any]) -> float | None:
    from autograder.diagnosis.byhand import evaluate_expression

    try:
        return float(evaluate_expression(expression, names))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def _given_mistakes(
    spec: ExerciseSpec, part: Part, ref: float, values: Mapping[str, Any]
) -> Iterator[tuple[str, float]]:
    givens = {n: float(values[n]) for n in spec.given_names if abs(values[n]) not in (0, 1)}
    in_chain = [f.expr for f in flat_factors(spec, part) if f.role == "given"]
    for other in related_givens(spec, part):
        if other in givens:
            yield "given_extra", ref * givens[other]
    for name in in_chain:
        g = float(values[name])
        if abs(g) in (0, 1):
            continue
        yield "given_missing", ref / g
        for other, h in givens.items():
            if other != name and abs(h) != abs(g):
                yield "given_swap", ref / g * h


def mistakes(spec: ExerciseSpec, values: Mapping[str, Any]) -> Iterator[Mistake]:
    """Every typical mistake on every numeric part, for one learner's values."""
    shut = [p.name for p in spec.parts if p.gate == "shut" and p.kind == "local_slope"]
    for part in spec.parts:
        if part.kind not in NUMERIC:
            continue
        ref = float(values[part.name])
        found: list[tuple[str, float, Mapping[str, float]]] = []
        for reason, expression, _ in part.mistakes:
            wrong = _number(expression, values)
            if wrong is not None:
                found.append((reason, wrong, {}))
        if ref != 0:
            found.append(("sign", -ref, {}))
        if part.kind != "forward" and ref != 0:
            found += [(kind, wrong, {}) for kind, wrong in _given_mistakes(spec, part, ref, values)]
            for factor in flat_factors(spec, part):
                if factor.role in ("slope", "calls"):
                    s = _number(factor.expr, values)
                    if s is not None and abs(s) not in (0, 1):
                        kind = "calls_missing" if factor.role == "calls" else "slope_missing"
                        found.append((kind, ref / s, {}))
            node = part.of[1]
            if node not in spec.given_names and float(values[node]) != 0:
                found.append(("forward_value", float(values[node]), {}))
            if part.name in spec.repeated_backward:
                found += [("accumulation", ref * k, {}) for k in ACCUMULATED_CALLS]
        earlier = upstream_names(spec, part)
        if earlier:
            wrong_earlier = {earlier[0]: float(values[earlier[0]]) + 1.0}
            redone = recompute(spec, values, wrong_earlier)[part.name]
            found.append(("follow_on", float(redone), wrong_earlier))
        if part.gate == "open" and part.kind != "forward":
            found.append(("gate_open", 0.0, {}))
        if part.gate == "shut":
            opened = recompute(spec, values, {name: 1.0 for name in shut})
            found.append(("gate_shut", float(opened[part.name]), {}))
        for kind, wrong, earlier_answers in found:
            if not matches(ref, wrong):
                right = {n: float(values[n]) for n in spec.part_names if n in values}
                yield Mistake(part.name, kind, wrong, {**right, **earlier_answers})


CLASS = Site("mistakes-class", "a course secret for the measurement")
"""A class with a secret: each learner's structure is their own (`--class`)."""


def learner_quantities(
    exercise: str, learner: str, site: Site | None = None
) -> tuple[str, dict[str, Quantity]]:
    """(the learner's problem, its graded quantities): self-study without `site`, else the
    class learner's own structure and numbers."""
    if site is None:
        return exercise, reference_quantities(exercise, learner_givens(exercise, learner))
    problem = learner_problem(exercise, learner, site)
    return problem, reference_quantities(problem, learner_givens(exercise, learner, site))


def named_right_by_problem(
    exercise: str, learners: list[str], site: Site | None = None
) -> dict[str, dict[str, tuple[int, int]]]:
    """problem -> kind -> (named right, made), over `learners`' numbers (and, in a class
    `site`, their own structures)."""
    right: dict[str, Counter[str]] = {}
    made: dict[str, Counter[str]] = {}
    for learner in learners:
        problem, quantities = learner_quantities(exercise, learner, site)
        values = next(iter(quantities.values())).values
        for mistake in mistakes(exercise_spec(problem), values):
            verdict = diagnose(quantities[mistake.part], mistake.value, mistake.answers)
            made.setdefault(problem, Counter())[mistake.kind] += 1
            right.setdefault(problem, Counter())[mistake.kind] += verdict.reason == mistake.kind
            if verdict.reason != mistake.kind and MISSES is not None:
                MISSES.append((learner, mistake, verdict.reason))
    return {
        problem: {kind: (right[problem][kind], count) for kind, count in kinds.items()}
        for problem, kinds in made.items()
    }


def named_right(
    exercise: str, learners: list[str], site: Site | None = None
) -> dict[str, tuple[int, int]]:
    """kind -> (named right, made), over `learners`' numbers (every problem together)."""
    right: Counter[str] = Counter()
    made: Counter[str] = Counter()
    for kinds in named_right_by_problem(exercise, learners, site).values():
        for kind, (named, count) in kinds.items():
            right[kind] += named
            made[kind] += count
    return {kind: (right[kind], made[kind]) for kind in made}


def blamed_accumulation(exercise: str, learners: list[str], site: Site | None = None) -> int:
    """How often whole multiples of a gradient are blamed on accumulation (must be 0 when
    the exercise never calls backward() repeatedly)."""
    count = 0
    for learner in learners:
        for q in learner_quantities(exercise, learner, site)[1].values():
            if q.kind == "gradient" and q.value != 0:
                for k in range(2, 11):
                    count += diagnose(q, float(q.value) * k).reason == "accumulation"
    return count


def print_corpus(learners: list[str], site: Site | None = None) -> float:
    """Print the corpus figures per mistake class (`site`: class learners, each in their
    own structure); return the share named."""
    import time

    from evaluation.corpus import CORPUS, VARIANT_CORPUS, figures, judge_entry, outcomes

    found = outcomes(learners, site)
    whose = "self-study learners" if site is None else "class learners, own structures"
    written = len(CORPUS) if site is None else len(CORPUS) + len(VARIANT_CORPUS)
    print(f"{written} written wrong answers x {len(learners)} {whose}: {len(found)} judged")
    if site is not None:
        print("  (in a structure not the lesson's: the lesson's entries that are the same")
        print("  mistake there, `corpus.as_the_lesson`, and the entries written for it,")
        print("  `corpus.VARIANT_CORPUS`; judged per problem:)")
        for problem in sorted({o.problem for o in found}):
            tally = Counter(o.verdict for o in found if o.problem == problem)
            print(
                f"  {problem:42} judged {sum(tally.values()):4}: named {tally['named']}, "
                f"generic {tally['generic']}, misnamed {tally['misnamed']}"
            )
    print(f"{'mistake class':22} {'named':>6} {'generic':>8} {'misnamed':>9} {'passed':>7}")
    total: Counter[str] = Counter()
    for kind, counts in sorted(figures(found).items()):
        total.update(counts)
        print(
            f"{kind:22} {counts['named']:6} {counts['generic']:8} {counts['misnamed']:9} "
            f"{counts['passed']:7}"
        )
    judged = total["named"] + total["generic"] + total["misnamed"]
    share = total["named"] / judged if judged else 0.0
    print(
        f"{'all':22} {total['named']:6} {total['generic']:8} {total['misnamed']:9} "
        f"{total['passed']:7}   named {100 * share:.1f}%"
    )
    first, times = found[0].seconds, sorted(o.seconds for o in found[1:])
    print(
        f"one judgment (cells read + verdict): first {1000 * first:.0f} ms (imports, PyTorch), "
        f"then median {1000 * times[len(times) // 2]:.1f} ms, 99th percentile "
        f"{1000 * times[len(times) * 99 // 100]:.1f} ms, slowest {1000 * times[-1]:.1f} ms"
    )
    start = time.perf_counter()
    reason, _ = judge_entry("07_try_it", "out", HOSTILE, "learner-0")
    print(
        f"a hostile answer (8 chained helper lines): {reason}, "
        f"{1000 * (time.perf_counter() - start):.0f} ms"
    )
    missed = Counter(
        (o.verdict, o.exercise, o.lines.replace("\n", "; "), o.expected, o.reason)
        for o in found
        if o.verdict in ("generic", "misnamed")
    )
    for (verdict, exercise, lines, expected, reason), count in sorted(missed.items()):
        print(f"  {verdict} x{count}: {exercise} `{lines}`: expected {expected}, got {reason}")
    return share


def main(argv: list[str] | None = None) -> int:
    """Print the share of mistakes named right, per exercise and kind."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.mistakes")
    parser.add_argument("--learners", type=int, default=50, help="drawn sets of numbers")
    parser.add_argument(
        "--corpus", action="store_true", help="judge the corpus of written wrong answers"
    )
    parser.add_argument(
        "--class",
        dest="in_class",
        action="store_true",
        help="class learners (a course secret): each in their own structure, figures per structure",
    )
    args = parser.parse_args(argv)
    learners = [f"learner-{i}" for i in range(args.learners)]
    site = CLASS if args.in_class else None
    if args.corpus:
        print_corpus(learners, site)
        return 0
    print(f"{'problem':42} {'mistake':16} {'named right':>12}")
    worst = 1.0
    for exercise in EXERCISES:
        for problem, kinds in sorted(named_right_by_problem(exercise, learners, site).items()):
            for kind, (right, made) in sorted(kinds.items()):
                worst = min(worst, right / made)
                print(f"{problem:42} {kind:16} {right:5}/{made:<5} {100 * right / made:5.1f}%")
        if not exercise_spec(exercise).repeated_backward:
            blamed = blamed_accumulation(exercise, learners, site)
            print(f"{exercise:42} {'accumulation blamed without repeated backward':40} {blamed}")
    print(f"lowest share: {100 * worst:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
