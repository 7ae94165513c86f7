"""Property tests: on 50 drawn sets of numbers per exercise, each kind of mistake (made from
the spec's own chain) is named right in at least 95% of cases, and accumulation is never
blamed where backward() is not called repeatedly. `python -m evaluation.mistakes`
prints the same figures."""

from __future__ import annotations

import pytest

from autograder.core.verdict import format_value
from autograder.diagnosis.diagnose import diagnose
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.specs import exercise_spec, learner_givens
from evaluation.mistakes import (
    CLASS,
    blamed_accumulation,
    mistakes,
    named_right,
    named_right_by_problem,
)

LEARNERS = [f"learner-{i}" for i in range(50)]
REQUIRED = 0.95
ISSUE_KINDS = {
    "given_swap",
    "given_extra",
    "given_missing",
    "slope_missing",
    "forward_value",
    "sign",
    "accumulation",
    "follow_on",
    "gate_shut",
    "gate_open",
}


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, tuple[int, int]]]:
    found = {e: named_right(e, LEARNERS) for e in EXERCISES}
    for exercise, kinds in found.items():
        for kind, (right, made) in sorted(kinds.items()):
            print(f"{exercise} {kind}: {right}/{made} = {100 * right / made:.1f}%")
    return found


@pytest.mark.parametrize("exercise", EXERCISES)
def test_each_mistake_is_named_right_in_95_percent(
    figures: dict[str, dict[str, tuple[int, int]]], exercise: str
) -> None:
    for kind, (right, made) in figures[exercise].items():
        assert right / made >= REQUIRED, f"{exercise} {kind}: {right}/{made}"


def test_every_kind_of_mistake_in_the_issue_is_measured(
    figures: dict[str, dict[str, tuple[int, int]]],
) -> None:
    measured = {kind for kinds in figures.values() for kind in kinds}
    assert measured >= ISSUE_KINDS


@pytest.mark.parametrize("exercise", EXERCISES)
def test_accumulation_is_blamed_only_where_backward_is_repeated(exercise: str) -> None:
    if not exercise_spec(exercise).repeated_backward:
        assert blamed_accumulation(exercise, LEARNERS) == 0


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_message_shows_the_learners_value_and_pytorchs(exercise: str) -> None:
    quantities = reference_quantities(exercise, learner_givens(exercise, "message-test"))
    values = next(iter(quantities.values())).values
    for mistake in mistakes(exercise_spec(exercise), values):
        q = quantities[mistake.part]
        verdict = diagnose(q, mistake.value, mistake.answers)
        first = verdict.message.split("\n")[0]
        assert not verdict.passed
        assert format_value(mistake.value) in first
        assert f"PyTorch gives {format_value(float(q.value))}" in first


VARIED = [e for e in EXERCISES if exercise_spec(e).variants]


@pytest.mark.parametrize("exercise", VARIED)
def test_each_mistake_is_named_right_in_95_percent_in_every_class_structure(
    exercise: str,
) -> None:
    """Class learners, each in their own structure (issue 27): the mistakes made from their
    own spec's chain are named as well as in self-study (per kind, over the structures)."""
    by_problem = named_right_by_problem(exercise, LEARNERS, CLASS)
    assert set(by_problem) == {f"{exercise}[{s.tag}]" for s in exercise_spec(exercise).variants}
    totals: dict[str, list[int]] = {}
    for problem, kinds in sorted(by_problem.items()):
        for kind, (right, made) in sorted(kinds.items()):
            print(f"{problem} {kind}: {right}/{made}")
            totals.setdefault(kind, [0, 0])
            totals[kind][0] += right
            totals[kind][1] += made
    for kind, (right, made) in totals.items():
        assert right / made >= REQUIRED, f"{exercise} (class) {kind}: {right}/{made}"
    if not exercise_spec(exercise).repeated_backward:
        assert blamed_accumulation(exercise, LEARNERS, CLASS) == 0
