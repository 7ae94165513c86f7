"""autograd_lessons.compare: the one-line verdict of a hand-derived number against PyTorch."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from autograd_lessons import Comparison, compare, compare_values
from autograd_lessons._format import format_diff, format_short, format_value

# --- the three outcomes and their lines ---------------------------------------------


def test_exact_match() -> None:
    result = compare_values("dL/dw", 12.0, torch.tensor(12.0))
    assert result == Comparison("dL/dw", 12.0, 12.0, "exact", 0.0)
    assert result.matched
    assert result.message == "✓ dL/dw: exact match (by hand 12.0, PyTorch 12.0)"


def test_float32_rounding_is_a_close_match_not_an_exact_one() -> None:
    result = compare_values("dL/dw", 0.0408, torch.tensor(0.0408))
    assert result.outcome == "close"
    assert result.matched
    assert result.max_abs_diff == pytest.approx(1.4722e-9, rel=1e-3)
    assert result.message == (
        "≈ dL/dw: close match (by hand 0.0408, PyTorch 0.040800001, max diff 1.5e-09)"
    )


def test_mismatch() -> None:
    result = compare_values("dL/dw", 6.0, torch.tensor(12.0))
    assert result.outcome == "mismatch"
    assert not result.matched
    assert result.max_abs_diff == 6.0
    assert result.message == "✗ dL/dw: MISMATCH (by hand 6.0, PyTorch 12.0, max diff 6)"


def test_a_grad_that_is_none_is_a_mismatch_that_says_so() -> None:
    result = compare_values("y.grad", 5.0, None)
    assert (result.outcome, result.torch_value, result.max_abs_diff) == ("mismatch", None, None)
    assert result.message.startswith("✗ y.grad: MISMATCH (by hand 5.0, PyTorch .grad is None")
    assert "retain_grad()" in result.message
    assert "\n" not in result.message


@pytest.mark.parametrize(
    ("by_hand", "torch_value", "outcome"),
    [
        (12.0, torch.tensor(12.0), "exact"),
        (12, 12.0, "exact"),  # python numbers on both sides
        (12.0, torch.tensor([12.0]), "exact"),  # a one-element tensor
        (12.0, torch.tensor(12.0, requires_grad=True) * 1, "exact"),  # part of a graph
        (12.0, torch.tensor(12.0, dtype=torch.float64), "exact"),
        (0.0, torch.tensor(-0.0), "exact"),  # a dead ReLU's gradient can be -0.0
        (math.nan, math.nan, "exact"),
        (1.0, 1.0 + 1e-6, "close"),
        (1.0, 1.0 + 1e-3, "mismatch"),
        (math.inf, 1.0, "mismatch"),
        (1.0, math.nan, "mismatch"),
    ],
)
def test_outcomes(by_hand: float, torch_value: torch.Tensor | float, outcome: str) -> None:
    assert compare_values("q", by_hand, torch_value).outcome == outcome


def test_tolerances_can_be_tightened_and_loosened() -> None:
    f32 = torch.tensor(0.0408)
    assert compare_values("q", 0.0408, f32, rtol=0.0, atol=0.0).outcome == "mismatch"
    assert compare_values("q", 0.05, f32).outcome == "mismatch"
    assert compare_values("q", 0.05, f32, atol=0.01).outcome == "close"


def test_minus_zero_is_printed_as_zero() -> None:
    line = compare_values("w.grad", 0.0, torch.tensor(-0.0)).message
    assert line == "✓ w.grad: exact match (by hand 0.0, PyTorch 0.0)"


def test_compare_prints_exactly_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert compare("dz/dx", 12.0, torch.tensor(12.0)) is None
    assert capsys.readouterr().out == "✓ dz/dx: exact match (by hand 12.0, PyTorch 12.0)\n"
    compare("dz/dx", 0.0408, torch.tensor(0.0408), rtol=0.0, atol=0.0)
    assert capsys.readouterr().out.startswith("✗ dz/dx: MISMATCH")


def test_comparison_is_frozen() -> None:
    result = compare_values("q", 1.0, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.outcome = "mismatch"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("by_hand", "torch_value", "error", "words"),
    [
        (1.0, torch.ones(3), ValueError, "shape (3,)"),
        (..., torch.tensor(1.0), TypeError, "replace it with your answer"),
        ("6", torch.tensor(6.0), TypeError, "must be a number"),
        (None, torch.tensor(6.0), TypeError, "must be a number"),
        (1.0, [1.0], TypeError, "got list"),
        (1.0, torch.tensor(1 + 2j), TypeError, "complex"),
    ],
)
def test_friendly_errors(by_hand: object, torch_value: object, error: type, words: str) -> None:
    with pytest.raises(error, match=re.escape(words)):
        compare_values("q", by_hand, torch_value)  # type: ignore[arg-type]


# --- the course's numbers, checked the way the lessons check them ------------------


def test_lesson_5_only_leaves_keep_grad() -> None:
    x = torch.tensor(2.0, requires_grad=True)
    y = x**3
    y.retain_grad()
    z = y * 5
    z.backward()
    assert compare_values("x.grad", 60.0, x.grad).outcome == "exact"
    assert compare_values("y.grad", 5.0, y.grad).outcome == "exact"
    x2 = torch.tensor(2.0, requires_grad=True)
    y2 = x2**3
    (y2 * 5).backward()
    with pytest.warns(UserWarning, match="non-leaf"):
        assert compare_values("y.grad", 5.0, y2.grad).outcome == "mismatch"


def test_lesson_6_one_backward_fills_every_parameter() -> None:
    w, b = torch.tensor(2.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    loss = (w * 3.0 + b - 5) ** 2
    loss.backward()
    assert [
        compare_values(n, h, t).outcome
        for n, h, t in [("L", 4.0, loss), ("w", 12.0, w.grad), ("b", 4.0, b.grad)]
    ] == ["exact"] * 3


def test_lesson_7_exercises() -> None:
    x = torch.tensor(4.0, requires_grad=True)
    (x**3 - 2 * x).backward()
    assert compare_values("dy/dx", 46.0, x.grad).outcome == "exact"

    w, b, w2 = (torch.tensor(v, requires_grad=True) for v in (3.0, -1.0, 0.5))
    a = torch.relu(w * 2.0 + b)
    a.retain_grad()
    out = w2 * a
    out.retain_grad()
    loss = (out - 2.0) ** 2
    loss.backward()
    expected = {"out": (2.5, out), "L": (0.25, loss), "dL/dout": (1.0, out.grad)}
    expected |= {"dL/dw2": (5.0, w2.grad), "dL/da": (0.5, a.grad)}
    expected |= {"dL/dw": (1.0, w.grad), "dL/db": (0.5, b.grad)}
    for name, (by_hand, value) in expected.items():
        assert compare_values(name, by_hand, value).outcome == "exact", name


# --- formatting ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "long", "short"),
    [
        (12.0, "12.0", "12.0"),
        (-0.0, "0.0", "0.0"),
        (0.0408, "0.0408", "0.0408"),
        (float(torch.tensor(0.0408)), "0.040800001", "0.0408"),
        (float(torch.tensor(4.1616)), "4.1616001", "4.1616"),
        (-0.04, "-0.04", "-0.04"),
        (1e20, "1e+20", "1e+20"),
        (math.inf, "inf", "inf"),
    ],
)
def test_number_formats(value: float, long: str, short: str) -> None:
    assert (format_value(value), format_short(value)) == (long, short)


def test_difference_format() -> None:
    assert [format_diff(d) for d in (1.4722e-9, 6.0, 5.5, 0.0)] == ["1.5e-09", "6", "5.5", "0"]


# --- properties ------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)
float32_range = st.floats(min_value=-1e30, max_value=1e30, allow_nan=False)


@given(finite)
def test_a_number_matches_itself_exactly(value: float) -> None:
    result = compare_values("v", value, value)
    assert result.outcome == "exact"
    assert (
        result.message
        == f"✓ v: exact match (by hand {format_value(value)}, PyTorch {format_value(value)})"
    )


@given(float32_range)
def test_storing_a_number_in_float32_never_makes_a_mismatch(value: float) -> None:
    tensor = torch.tensor(value, dtype=torch.float32)
    assert compare_values("v", value, tensor).outcome in {"exact", "close"}
    assert compare_values("v", tensor.item(), tensor).outcome == "exact"


@given(finite, finite)
def test_the_line_agrees_with_the_outcome(by_hand: float, torch_value: float) -> None:
    result = compare_values("q", by_hand, torch_value)
    mark = {"exact": "✓", "close": "≈", "mismatch": "✗"}[result.outcome]
    assert result.message.startswith(f"{mark} q: ")
    assert "\n" not in result.message
    assert (result.outcome == "exact") == (by_hand == torch_value)
