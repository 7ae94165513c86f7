"""A hand answer is judged as a derivation (issue 25, items 1-3): a number written out earns
nothing where the value follows the givens, a formula right only at the learner's numbers
is wrong, and a mistake is named only when it fits at fresh draws of the givens too."""

from __future__ import annotations

import pytest

from autograder.core.spec import CODE_KINDS
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.fresh_points import (
    NUMERIC,
    fixed_by_branches,
    fresh_draws,
    same_branches,
)
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.diagnosis.references import reference_values
from autograder.specs import SPECS, exercise_spec, learner_givens, learner_problem
from evaluation.copied_numbers import CLASS, copied_sources, measure
from evaluation.corpus import judge_entry

LEARNERS = [f"learner-{i}" for i in range(3)]
E3, E4, E7, E8 = (
    "03_a_neuron_by_hand",
    "04_the_dead_relu",
    "07_try_it",
    "08_when_backward_complains",
)


@pytest.mark.parametrize("exercise", list(SPECS))
def test_copied_numbers_earn_nothing_on_formula_parts(exercise: str) -> None:
    """PyTorch's own numbers written out: facts and values the branches fix score, no other."""
    spec = exercise_spec(exercise)
    for learner in LEARNERS:
        givens = learner_givens(exercise, learner)
        hand = read_hand_answers(copied_sources(exercise, givens), givens)
        fixed = fixed_by_branches(exercise, givens)
        for part in spec.parts:
            if part.kind in CODE_KINDS:
                continue
            verdict = judge(exercise, part.name, JudgeContext(exercise, givens, hand))
            scored = part.kind == "fact" or part.name in fixed
            assert verdict.passed is scored, (part.name, verdict.message)
            if not scored:
                assert verdict.reason == "no_arithmetic"
                assert "is PyTorch's number, but written as a bare number" in verdict.message


def test_copied_numbers_earn_nothing_for_class_learners_either() -> None:
    """The probe's figure for class learners, each with a structure of their own."""
    for exercise, tally in measure(4, CLASS).items():
        assert tally.formula == 0 and tally.formula_total > 0 or not tally.formula_total, exercise
        assert tally.fixed == tally.fixed_total and tally.facts == tally.facts_total, exercise


def assert_three_draws_keep_every_branch(problem: str, givens: dict[str, float]) -> None:
    """`problem`'s fresh draws at `givens`: three, each keeping every branch, each given moved."""
    spec = exercise_spec(problem)
    base = reference_values(problem, {**spec.constants, **givens})
    draws = fresh_draws(problem, givens)
    assert len(draws) == 3
    for draw in draws:
        assert same_branches(base, draw.values)
        assert all(draw.givens[n] != givens[n] for n in spec.given_names)


def test_fresh_draws_keep_every_branch_and_differ() -> None:
    for exercise in SPECS:
        for learner in LEARNERS:
            assert_three_draws_keep_every_branch(exercise, learner_givens(exercise, learner))


# A class learner's numbers (a variant test's draw) that put their structure near two
# branch edges: 10 * (b + w * x) = 10 is open by 10 and short of y = 11 by 1. No draw of
# the wide range kept both; the learner's own right formulas were left "unverified".
NEAR_EDGES = ("09_autograd_by_hand[k10_c4]", {"x": -2.0, "w": -5.0, "b": -9.0, "y": 11.0})


def test_numbers_near_a_branch_edge_are_checked_at_closer_draws() -> None:
    problem, givens = NEAR_EDGES
    assert_three_draws_keep_every_branch(problem, givens)
    spec = exercise_spec(problem)
    given = f"{', '.join(givens)} = exercise.given({', '.join(map(repr, givens))})"
    written = [given, *(f"{p.stub}\n{p.code}" for p in spec.parts if p.kind in NUMERIC)]
    hand = read_hand_answers(written, givens)  # the learner's own formulas, as they wrote
    for part in spec.parts:
        if part.kind in NUMERIC:
            verdict = judge(problem, part.name, JudgeContext(problem, givens, hand))
            assert verdict.passed, (part.name, verdict.message)


def test_right_only_at_the_learners_numbers_is_wrong_and_named() -> None:
    """ex04: dL/dh is 0 for every learner, so `dL_dh * w` agrees with PyTorch everywhere the
    ReLU is shut; as a step from dL/dh it is not the chain."""
    for learner in LEARNERS:
        reason, text = judge_entry(E4, "dL_dw", "dL_dw = dL_dh * w", learner)
        assert reason == "given_swap"
        assert "matches PyTorch at your numbers only" in text
        assert "you used `w` where `x` belongs" in text
        assert judge_entry(E4, "dL_dw", "dL_dw = dL_dh * x", learner)[0] == "match"


def test_what_differs_is_said_when_no_edit_fits() -> None:
    reason, text = judge_entry(E4, "dL_dw", "dL_dw = dL_dh * w * w + dL_dh", "learner-1")
    assert reason == "only_here"
    assert "your formula gives" in text and "`dL_dh` is 0.0, which hides the difference" in text


@pytest.mark.parametrize(
    ("exercise", "part", "lines"),
    [
        (E3, "dL_dw", "dL_dw = 2 * (a - y) * da_dh * x"),
        (E3, "dL_dw", "dL_dw = 2 * (max(w * x + b, 0) - y) * x"),
        (E3, "dL_db", "dL_db = dL_dw / x"),
        (E3, "L", "L = (h - y) ** 2"),
        (E4, "dL_dh", "dL_dh = 0"),
        (E4, "dL_dh", "dL_dh = dL_da * 0"),
        (E4, "a", "a = 0.0"),
        (E7, "dL_dh", "dL_dh = dL_da"),
    ],
)
def test_every_right_form_still_passes(exercise: str, part: str, lines: str) -> None:
    for learner in LEARNERS:
        assert judge_entry(exercise, part, lines, learner)[0] == "match", (lines, learner)


@pytest.mark.parametrize(
    ("exercise", "part", "lines", "reason", "words"),
    [
        (E4, "dL_da", "dL_da = 0", "no_arithmetic", "A number without its arithmetic"),
        (E3, "dL_dw", "dL_dw = dL_dh * x + dL_dh", "extra_term", "`dL_dh` does not belong"),
        (E7, "dL_dh", "dL_dh = dL_da * w2", "given_extra", "one factor `w2` too many"),
        (
            "05_three_mechanics",
            "grad_after_three_calls",
            "grad_after_three_calls = 2 * x_square * (1 + 2 + 3)",
            "mismatch",
            "no single slip",
        ),
        ("01_what_a_gradient_is", "y_start", "y_start = 0.0", "no_arithmetic", "earns no points"),
    ],
)
def test_the_issues_misnamed_answers(
    exercise: str, part: str, lines: str, reason: str, words: str
) -> None:
    """Each was named with a cause it did not have (issue 25); now the right one, or none."""
    for learner in LEARNERS:
        got, text = judge_entry(exercise, part, lines, learner)
        assert got == reason and words in text, (learner, text)
        assert "constant term" not in text and ".grad was zeroed" not in text
        assert "forward value" not in text and "dL_dout" not in text


def _large_power_learners(count: int) -> list[tuple[str, bool]]:
    """Class learners whose exercise 08 is z = c·x⁴ + 1 or x⁴/c + 1 (x up to 20), and
    whether theirs divides by c: `count` of each form."""
    found: dict[bool, list[str]] = {False: [], True: []}
    for i in range(400):
        learner = f"learner-{i}"
        structure = exercise_spec(learner_problem(E8, learner, CLASS)).structure
        if getattr(structure, "power", 2) == 4 and len(found[structure.over]) < count:
            found[structure.over].append(learner)
    assert all(len(v) == count for v in found.values()), found
    return [(learner, over) for over, learners in found.items() for learner in learners]


def test_a_kept_constant_hidden_by_large_numbers_is_still_wrong() -> None:
    """3·(4·c·x³ + 1) is within the 1e-3 tolerance of 12·c·x³ wherever c·x³ is large, at
    every fresh draw too: the symbolic check tells it from the chain and names it; the
    right formula, and one with a rounded factor, still pass."""
    for learner, over in _large_power_learners(3):
        slope = "4 * x**3 / c" if over else "4 * c * x**3"
        part = "grad_after_three_passes"
        reason, text = judge_entry(E8, part, f"{part} = 3 * ({slope} + 1)", learner, CLASS)
        assert reason == "constant_kept", (learner, text)
        assert judge_entry(E8, part, f"{part} = 3 * {slope}", learner, CLASS)[0] == "match"
        rounded = f"{part} = 12.0001 * {slope.removeprefix('4 * ')}"
        assert judge_entry(E8, part, rounded, learner, CLASS)[0] == "match", learner


def test_the_fresh_draw_sweep_counts_every_exercise_with_numbers() -> None:
    """`python -m evaluation.fresh_draws`: a few class learners, each counted once."""
    from evaluation.fresh_draws import sweep

    counts = sweep(3)
    numeric = [n for n, s in SPECS.items() if any(p.kind in NUMERIC for p in s.parts)]
    assert list(counts) == numeric
    assert all(counted == {"all": 3} for counted in counts.values())
