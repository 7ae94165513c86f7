"""A formula part earns its points only when it is the chain as an expression, and every
honest way of writing it earns them (issue 45): the corpus of honest forms and cheats in
`evaluation.derivations`, judged by the grader's judge (here), by the live check in a real
IPython shell (here) and by `autograder grade` (tests/grading/test_exact_grades.py)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from ipython_shells import checked_cells, run_in_shells

from autograder.diagnosis.exact_algebra import Rational, TooLarge
from evaluation.corpus import judge_entry
from evaluation.derivations import CHEATS, HONEST, LEARNERS, Entry, judged

X, Y = Rational.symbol("x"), Rational.symbol("y")
E1, E3 = "01_what_a_gradient_is", "03_a_neuron_by_hand"


def _id(entry: Entry) -> str:
    return f"{entry.exercise[:2]}-{entry.lines('tester')}"


@pytest.mark.parametrize("entry", HONEST, ids=_id)
def test_every_honest_form_earns_its_points(entry: Entry) -> None:
    for learner in LEARNERS:
        credited, reason, message = judged(entry, learner)
        assert credited, (learner, entry.lines(learner), reason, message)


@pytest.mark.parametrize("entry", CHEATS, ids=_id)
def test_every_cheat_earns_nothing_and_is_named(entry: Entry) -> None:
    for learner in LEARNERS:
        credited, reason, message = judged(entry, learner)
        assert not credited and reason in entry.refused, (learner, reason, message)


def test_the_issues_lookup_table_is_refused_by_name() -> None:
    """A table of PyTorch's values at the draws a check once showed (issue 45)."""
    lines = (
        "dL_dw = (383.131 if w == 4.9365 else (115.17 if w == 6.2751 else (248.367 if w == "
        "4.3722 else 23.52))) + 0*w"
    )
    for learner in LEARNERS:
        reason, message = judge_entry(E3, "dL_dw", lines, learner)
        assert reason == "lookup" and "a lookup table, not a derivation" in message


def test_a_difference_quotient_is_named_with_its_step() -> None:
    reason, message = judge_entry(
        E1, "slope_start", "slope_start = ((x + 1e-3) ** 2 - (x - 1e-3) ** 2) / 2e-3", "tester"
    )
    assert reason == "numerical_derivative"
    assert "it computes at x + 0.001 and divides by the step 0.002" in message
    assert "not the chain rule" in message and "even where it comes out exact" in message


def test_what_cannot_be_decided_earns_nothing_and_says_so() -> None:
    """Fail closed: a formula too large to expand, or one with a function the chain does
    not have, scores nothing, with the reason in the learner's terms."""
    big = "dL_dw = 2 * (a - y) * x + ((w + x + b + y) ** 12 - (w + x + b + y) ** 12)"
    reason, message = judge_entry(E3, "dL_dw", big, "tester")
    assert reason == "undecided" and "earns no points" in message
    assert "too many terms" in message
    exp = "import math\ny_start = math.exp(2 * math.log(x))"
    reason, message = judge_entry(E1, "y_start", exp, "tester")
    assert reason == "undecided" and "cannot be decided" in message


def test_a_wrong_bare_number_hears_its_slip_as_a_guess() -> None:
    """dy/dx = 2 (x forgotten): no points for a number, and its value's likely slip, hedged."""
    reason, message = judge_entry("02_the_computation_graph", "dy_dx", "dy_dx = 2", "tester")
    assert reason == "no_arithmetic"
    assert "the cause can only be guessed from the value" in message and "factor x" in message


def test_exact_arithmetic_compares_expressions_not_numbers() -> None:
    assert ((X + Rational.number(1)).power(2)).equals(
        X * X + Rational.number(2) * X + Rational.number(1)
    )
    tenth = Rational.number(Fraction("0.1"))
    assert (tenth * Rational.number(3)).equals(Rational.number(Fraction(3, 10)))
    assert ((X * Y) / Y).equals(X)
    assert not (X + Rational.number(Fraction(1, 10**12))).equals(X)  # no tolerance at all
    assert (Rational.number(3) * X / Y).ratio(X / Y) == 3
    assert (X + Y).ratio(X) is None


def test_expansion_is_bounded() -> None:
    total = X + Y + Rational.symbol("z") + Rational.symbol("t")
    with pytest.raises(TooLarge):
        total.power(12)
    with pytest.raises(TooLarge):
        X.power(13)


# --- the live check, in a real IPython shell ------------------------------------------------


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every entry's cells and its part's `exercise.check`, as the learner "tester" runs them."""
    entries = [*HONEST, *CHEATS]
    scenarios = {
        str(i): checked_cells(e.exercise, e.part, e.lines("tester")) for i, e in enumerate(entries)
    }
    return run_in_shells(scenarios, tmp_path_factory.mktemp("shells"), "tester")


@pytest.mark.processes
def test_the_live_check_credits_every_honest_form_and_no_cheat(
    checked: dict[str, list[dict[str, Any]]],
) -> None:
    for index, entry in enumerate([*HONEST, *CHEATS]):
        last = checked[str(index)][-1]
        credited = last["ok"] and any(line.startswith("✓") for line in last["out"].splitlines())
        assert credited is entry.honest, (entry.lines("tester"), last)


def test_the_slope_of_the_wrong_parameter_is_named_so() -> None:
    """03's `dL_db = dL_dh * dh_dw` is dh/dw where dh/db belongs, for the lesson's neuron and
    for class learners (issue 45: it was "the division by x is missing")."""
    from evaluation.copied_numbers import CLASS

    lines = "dL_db = dL_dh * dh_dw"
    for learner in LEARNERS:
        for site in (None, CLASS):
            reason, message = judge_entry(E3, "dL_db", lines, learner, site)
            assert reason == "wrong_quantity", (learner, message)
            assert "you used `dh_dw` where `dh_db`, dh/db, belongs" in message


def test_times_c_where_the_learners_z_divides_by_c_is_named() -> None:
    """08 for a class learner whose z = x⁴/c + 1: `... * c` is a multiplication where their
    structure divides (issue 45: it got only the generic line)."""
    from autograder.specs import exercise_spec, learner_problem
    from evaluation.copied_numbers import CLASS

    exercise, part = "08_when_backward_complains", "grad_after_three_passes"
    over = [
        learner
        for learner in (f"learner-{i}" for i in range(400))
        if getattr(
            exercise_spec(learner_problem(exercise, learner, CLASS)).structure, "over", False
        )
        and exercise_spec(learner_problem(exercise, learner, CLASS)).structure.power == 4  # type: ignore[union-attr]
    ][:3]
    assert over
    for learner in over:
        lines = f"{part} = 3 * 4 * x**3 * c"
        reason, message = judge_entry(exercise, part, lines, learner, CLASS)
        assert reason == "times_for_divide", message
        assert "multiplies by `c` where it divides" in message
