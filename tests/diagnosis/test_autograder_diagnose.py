"""diagnose: each typical slip gets its own message, and only plain numbers can pass.

These tests use the lessons' numbers (the worked examples, where dL/dw = 12); the
property tests over drawn learners' numbers are in test_spec_diagnoses.py.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from autograder.core.quantities import Quantity
from autograder.core.verdict import MISSING, REL_TOL, Verdict, format_value, matches
from autograder.diagnosis.answer_form import digits_needed, significant_digits
from autograder.diagnosis.diagnose import diagnose
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.specs import exercise_spec, learner_givens


def lesson_quantities(exercise: str) -> dict[str, Quantity]:
    spec = exercise_spec(exercise)
    return reference_quantities(exercise, {**spec.lesson_givens, **spec.constants})


Q = {e: lesson_quantities(e) for e in EXERCISES}
NEURON = Q["03_a_neuron_by_hand"]
DEAD = Q["04_the_dead_relu"]
TRY = Q["07_try_it"]
MECHANICS = Q["05_three_mechanics"]
ALL = [q for qs in Q.values() for q in qs.values()]
DRAWN = [
    q
    for e in EXERCISES
    for learner in ("law-1", "law-2", "law-3")
    for q in reference_quantities(e, learner_givens(e, learner)).values()
]
NUMERIC = [q for q in ALL if not q.is_bool]
NONZERO = [q for q in NUMERIC if q.value != 0]


def lines_of(verdict: Verdict) -> list[str]:
    return verdict.message.split("\n")


def check_shape(verdict: Verdict, q: Quantity) -> None:
    """Every message: one or two short lines, naming the quantity, no traceback noise."""
    lines = lines_of(verdict)
    assert 1 <= len(lines) <= 2
    assert q.label in lines[0]
    assert "Traceback" not in verdict.message
    assert lines[0].startswith("✓" if verdict.passed else "✗")


# --- passing ------------------------------------------------------------------------------


def test_pass_message() -> None:
    verdict = diagnose(NEURON["dL_dw"], 12.0)
    assert verdict == Verdict(True, "✓ dL/dw = 12.0 matches PyTorch", "match")


@pytest.mark.parametrize("value", [12, 12.0, 12.005, 11.995])
def test_ints_floats_and_hand_rounding_pass(value: float) -> None:
    assert diagnose(NEURON["dL_dw"], value).passed


@pytest.mark.parametrize(
    ("name", "value"),
    [("leaky_dL_dw", 0.0408), ("leaky_dL_db", -0.0408), ("leaky_L", 4.1616), ("leaky_L", 4.16)],
)
def test_hand_decimals_pass(name: str, value: float) -> None:
    """0.0408 and 4.16 written by hand pass."""
    assert diagnose(DEAD[name], value).passed


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_every_reference_passes_itself(q: Quantity) -> None:
    verdict = diagnose(q, q.value)
    assert verdict.passed
    check_shape(verdict, q)


def test_bools_match_exactly() -> None:
    q = MECHANICS["requires_grad_inside_no_grad"]
    assert diagnose(q, False).passed
    wrong = diagnose(q, True)
    assert not wrong.passed and "PyTorch says False" in wrong.message
    assert diagnose(q, 0).reason == "not_a_bool"
    assert diagnose(q, 0.0).reason == "not_a_bool"
    assert diagnose(q, np.bool_(False)).reason == "not_a_number"


# --- the diagnoses ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, Ellipsis, MISSING])
def test_unanswered(value: object) -> None:
    verdict = diagnose(NEURON["dL_dw"], value)
    assert (verdict.passed, verdict.reason) == (False, "unanswered")
    assert "`dL_dw` is not answered yet" in verdict.message


def test_tensor_is_told_to_write_the_number() -> None:
    verdict = diagnose(NEURON["dL_dw"], torch.tensor(12.0))
    assert verdict.reason == "tensor"
    assert "write the number itself, e.g. `12.0`" in verdict.message
    w = torch.tensor(3.0, requires_grad=True)
    (w * 4).backward()
    assert diagnose(NEURON["dL_dw"], w.grad).reason == "tensor"
    assert diagnose(NEURON["dL_dw"], torch.nn.Parameter(torch.tensor(12.0))).reason == "tensor"
    many = diagnose(NEURON["dL_dw"], torch.ones(3))
    assert many.reason == "tensor" and "one plain number" in many.message


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    def __float__(self) -> float:
        return 12.0

    __hash__ = object.__hash__


class SneakyFloat(float):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = float.__hash__


class SneakyInt(int):
    pass


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(),
        SneakyFloat(12.0),
        SneakyFloat(0.0),
        SneakyInt(12),
        np.float64(12.0),
        np.float32(12.0),
        np.int64(12),
        np.array(12.0),
        "12",
        "12.0",
        [12.0],
        (12.0,),
        {"dL_dw": 12.0},
        Decimal(12),
        Fraction(12),
        complex(12, 0),
        True,
        print,
    ],
    ids=lambda v: type(v).__name__,
)
def test_only_plain_numbers_can_pass(value: object) -> None:
    verdict = diagnose(NEURON["dL_dw"], value)
    assert not verdict.passed
    assert verdict.reason in {"not_a_number", "not_a_bool"}
    assert len(lines_of(verdict)) == 1


def test_subclass_message_says_so() -> None:
    assert "subclass of float" in diagnose(NEURON["dL_dw"], SneakyFloat(12.0)).message
    assert "numpy float64" in diagnose(NEURON["dL_dw"], np.float64(12.0)).message


def test_a_hostile_repr_does_not_break_the_message() -> None:
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

    verdict = diagnose(NEURON["dL_dw"], Hostile())
    assert verdict.reason == "not_a_number" and "Hostile" in verdict.message

    class Long:
        def __repr__(self) -> str:
            return "x" * 10_000

    assert len(diagnose(NEURON["dL_dw"], Long()).message) < 200


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_not_finite(value: float) -> None:
    assert diagnose(NEURON["dL_dw"], value).reason == "not_finite"


def test_sign_flipped() -> None:
    verdict = diagnose(NEURON["dL_dw"], -12.0)
    assert verdict.reason == "sign"
    assert verdict.message == (
        "✗ dL/dw = -12.0, but PyTorch gives 12.0.\n"
        "  Right size, wrong sign: check the sign of each factor on the way back."
    )


def test_a_missing_local_slope_is_named_by_its_node() -> None:
    verdict = diagnose(NEURON["dL_da"], 3.0)
    assert verdict.reason == "slope_missing"
    assert "The factor 2.0, the 2 of the square (d (a − y)²/da = 2(a − y)), is missing" in (
        verdict.message
    )
    assert "dL/da = 3.0, but PyTorch gives 6.0" in verdict.message


def test_every_missing_or_doubled_slope_reads_as_a_sentence() -> None:
    """In every exercise, the factor is named by its value and what it is ("The factor 2.0,
    the 2 of the square (...), is missing."), never "the local slope 2.0 of the 2 of ..."."""
    import re

    from evaluation.mistakes import mistakes

    named = 0
    for exercise in EXERCISES:
        quantities = reference_quantities(exercise, learner_givens(exercise, "learner-1"))
        values = next(iter(quantities.values())).values
        for mistake in mistakes(exercise_spec(exercise), values):
            verdict = diagnose(quantities[mistake.part], mistake.value, mistake.answers)
            if verdict.reason not in ("slope_missing", "slope_extra"):
                continue
            named += 1
            sentence = verdict.message.split("\n", 1)[1]
            assert re.match(
                r"  The factor -?[\d.]+, the .+, (is missing|is counted twice)\.", sentence
            )
            assert not re.search(r"slope -?[\d.]+ of the", sentence), sentence
    assert named >= 9  # one exercise or more each


def test_a_given_factor_too_many_is_named() -> None:
    """dL_dw = dL_dh * w * x: one factor w too many (the issue's example)."""
    verdict = diagnose(NEURON["dL_dw"], 36.0)
    assert verdict.reason == "given_extra"
    assert "One factor w = 3.0 too many" in verdict.message
    assert "dh/dw = x" in verdict.message


def test_a_given_in_the_wrong_place_is_named() -> None:
    verdict = diagnose(NEURON["dh_dw"], 3.0)
    assert verdict.reason == "given_swap"
    assert "w = 3.0 is used where x = 2.0 belongs" in verdict.message


def test_a_missing_given_factor_is_named() -> None:
    verdict = diagnose(Q["06_one_backward_every_parameter"]["dL_dw"], 4.0)
    assert verdict.reason == "given_missing"
    assert "The factor x = 3.0 is missing" in verdict.message


def test_the_forward_value_given_for_a_slope_is_named() -> None:
    verdict = diagnose(TRY["dL_dh"], 5.0)
    assert verdict.reason == "forward_value"
    assert "forward value h = 5.0" in verdict.message


MECHANICS_4 = reference_quantities("05_three_mechanics", {"x_cube": 2.0, "k": 5.0, "x_square": 4.0})


def test_accumulation_only_where_backward_is_called_repeatedly() -> None:
    triple = diagnose(MECHANICS_4["grad_after_zero_and_backward"], 24.0)
    assert triple.reason == "accumulation"
    assert "accumulated over 3 backward calls" in triple.message
    for q in (NEURON["dL_dw"], NEURON["dL_db"], TRY["dL_dw"]):
        for k in range(2, 11):
            assert diagnose(q, float(q.value) * k).reason != "accumulation"


def test_one_call_instead_of_three() -> None:
    verdict = diagnose(MECHANICS_4["grad_after_three_calls"], 8.0)
    assert verdict.reason == "calls_missing"


def test_follow_on_points_at_the_earlier_part() -> None:
    """dL_dh = dL_da * da_dh with a wrong dL/da = 3: fix Part D first."""
    verdict = diagnose(NEURON["dL_dh"], 3.0, {"dL_da": 3.0, "da_dh": 1.0})
    assert verdict.reason == "follow_on"
    assert "Consistent with your dL/da = 3.0" in verdict.message
    assert "fix Part D (dL/da) first" in verdict.message
    assert "PyTorch gives 6.0" in verdict.message


def test_a_known_wrong_answer_is_named() -> None:
    q = Q["01_what_a_gradient_is"]["x_after_step"]
    verdict = diagnose(q, 3.6)
    assert verdict.reason == "step_with_slope"
    assert "stepped with the slope" in verdict.message


def test_zero_where_the_gate_was_open() -> None:
    verdict = diagnose(NEURON["dL_dw"], 0.0)
    assert verdict.reason == "gate_open"
    assert "Nothing on the way back multiplies by zero" in verdict.message
    assert diagnose(DEAD["leaky_dL_db"], 0).reason == "gate_open"


@pytest.mark.parametrize("name", ["da_dh", "dL_dh", "dL_dw", "dL_db"])
def test_nonzero_where_the_gate_was_shut(name: str) -> None:
    verdict = diagnose(DEAD[name], 12.0)
    assert verdict.reason == "gate_shut"
    assert "ReLU on this path is shut" in verdict.message


def test_too_rounded() -> None:
    for name, value in [("leaky_dL_dw", 0.041), ("leaky_dL_dw", 0.04), ("leaky_L", 4.2)]:
        verdict = diagnose(DEAD[name], value)
        assert verdict.reason == "rounded", (name, value)
        assert f"within {REL_TOL * 100:g}% of PyTorch's" in verdict.message
        assert "significant digits" not in verdict.message  # one rule, not a second one


def test_an_integer_slip_is_not_called_rounding() -> None:
    """leaky_L = 4 is the dead-ReLU loss, a concept slip, not a rounding one."""
    verdict = diagnose(DEAD["leaky_L"], 4)
    assert verdict.reason == "mismatch"
    assert DEAD["leaky_L"].hint in verdict.message


def test_plain_mismatch_gives_the_hint() -> None:
    verdict = diagnose(NEURON["dL_dw"], 11.0)
    assert verdict == Verdict(
        False, f"✗ dL/dw = 11.0, but PyTorch gives 12.0.\n  {NEURON['dL_dw'].hint}", "mismatch"
    )


@pytest.mark.parametrize("q", ALL, ids=lambda q: f"{q.name}")
def test_every_quantity_has_a_one_line_hint(q: Quantity) -> None:
    assert q.hint and "\n" not in q.hint and len(q.hint) <= 90


# --- laws ---------------------------------------------------------------------------------


@given(st.sampled_from([q for q in DRAWN if not q.is_bool and q.value != 0]))
def test_negated_reference_is_always_sign_flipped(q: Quantity) -> None:
    """Unless -value happens to be a forward value of the same node (then named as such)."""
    nodes = q.part.of if q.part is not None else ()
    assume(not any(matches(-float(q.value), float(q.values[n])) for n in nodes))
    verdict = diagnose(q, -float(q.value))
    assert verdict.reason == "sign"
    check_shape(verdict, q)


@given(st.sampled_from(NUMERIC), st.floats(-9e-4, 9e-4))
def test_anything_within_tolerance_passes(q: Quantity, relative: float) -> None:
    assert diagnose(q, float(q.value) * (1 + relative)).passed


@given(st.sampled_from(NUMERIC))
def test_rounding_to_the_digits_asked_for_passes(q: Quantity) -> None:
    digits = digits_needed(float(q.value))
    assert diagnose(q, float(f"{float(q.value):.{digits}g}")).passed


@given(st.sampled_from(NUMERIC), st.floats(allow_nan=True, allow_infinity=True))
def test_every_verdict_is_short_and_names_the_quantity(q: Quantity, value: float) -> None:
    check_shape(diagnose(q, value), q)


@given(st.sampled_from(NUMERIC), st.floats(-1e6, 1e6))
def test_only_values_close_to_pytorch_pass(q: Quantity, value: float) -> None:
    assert diagnose(q, value).passed == matches(float(q.value), value)


@given(st.sampled_from(NUMERIC), st.floats(-1e6, 1e6))
def test_float_subclasses_never_pass(q: Quantity, value: float) -> None:
    assert not diagnose(q, SneakyFloat(value)).passed
    assert not diagnose(q, np.float64(value)).passed


@given(st.floats(1e-6, 1e6))
def test_significant_digits_counts_what_was_written(value: float) -> None:
    shown = f"{value:.3g}"
    assume(float(shown) != 0)
    assert significant_digits(float(shown)) <= 3


def test_format_value() -> None:
    assert [format_value(v) for v in (12.0, -0.0, 0.040799998, 4.1616001, 12, True)] == [
        "12.0",
        "0.0",
        "0.0408",
        "4.1616",
        "12",
        "True",
    ]


def test_a_flipped_forward_value_points_at_the_forward_computation() -> None:
    """A wrong sign on h is a forward mistake, not a backward one."""
    h = NEURON["h"]
    verdict = diagnose(h, -5.0)
    assert not verdict.passed
    assert verdict.reason == "sign"
    assert "forward computation" in verdict.message
    assert "on the way back" not in verdict.message
