"""autograd_lessons.predict: predict-then-run checks and the gradient-check habit."""

from __future__ import annotations

import pytest
import torch

from autograd_lessons import check_prediction, gradient_check, nudge_slope
from autograd_lessons.predict import prediction_verdict


def test_a_prediction_left_as_dots_only_invites_a_guess() -> None:
    line = prediction_verdict("x.grad", ..., torch.tensor(6.0))
    assert line.startswith("✎ x.grad: no prediction yet") and "6.0" in line


@pytest.mark.parametrize(
    ("guess", "mark"), [(6, "✓"), (6.0, "✓"), (6.004, "✓"), (torch.tensor(6.0), "✓"), (12, "✗")]
)
def test_a_prediction_is_right_or_not(guess: object, mark: str) -> None:
    assert prediction_verdict("x.grad", guess, torch.tensor(6.0)).startswith(f"{mark} x.grad:")


def test_a_prediction_that_is_not_a_number_is_explained() -> None:
    assert "must be a number" in prediction_verdict("x.grad", "six", 6.0)


def test_check_prediction_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    check_prediction("q", 12, 18.0)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("✗ q: you predicted 12.0, PyTorch says 18.0")


def test_nudge_slope_is_the_finite_difference() -> None:
    assert nudge_slope(lambda x: x**2, 3.0) == pytest.approx(6.001)
    assert nudge_slope(lambda x: x**2, 3.0, h=1e-6) == pytest.approx(6.0, abs=1e-5)


def test_gradient_check_agrees_and_disagrees(capsys: pytest.CaptureFixture[str]) -> None:
    gradient_check("dy/dx", 6.0, 6.001, torch.tensor(6.0))
    gradient_check("dy/dx", 5.0, 6.001, torch.tensor(6.0))  # a wrong hand value
    gradient_check("dy/dx", 6.0, 7.5, torch.tensor(6.0))  # a nudge far off
    first, second, third = capsys.readouterr().out.splitlines()
    assert first == "✓ dy/dx: by hand 6.0 | nudge 6.0010 | .grad 6.0: all three agree"
    assert second.startswith("✗") and third.startswith("✗")
