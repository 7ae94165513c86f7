"""Predict, then run; and the gradient-check habit (hand, nudge, ``.grad``). Never graded.

``check_prediction(question, my_prediction, x.grad)`` says whether a prediction the
learner wrote before running a cell was right. Shipped with ``my_prediction = ...``
it only invites a guess, so the lesson runs cleanly as it is.
``nudge_slope(f, x)`` is the finite-difference slope ``(f(x + h) - f(x)) / h``;
``gradient_check`` prints the three numbers side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from torch import Tensor

from ._format import format_short
from .compare import _as_float

__all__ = ["check_prediction", "gradient_check", "nudge_slope"]


def prediction_verdict(question: str, prediction: object, actual: float | Tensor) -> str:
    """The line ``check_prediction`` prints (pure)."""
    truth = _as_float(actual, "the actual value")
    if prediction is Ellipsis or prediction is None:
        return (
            f"✎ {question}: no prediction yet. Replace ... with your number, run the cells again "
            f"and see. (PyTorch: {format_short(truth)})"
        )
    try:
        guess = _as_float(prediction, "your prediction")
    except (TypeError, ValueError) as problem:
        return f"✎ {question}: {problem}"
    if math.isclose(guess, truth, rel_tol=1e-3, abs_tol=1e-6):
        said = f"you predicted {format_short(guess)}, PyTorch says {format_short(truth)}"
        return f"✓ {question}: {said}. Right."
    return (
        f"✗ {question}: you predicted {format_short(guess)}, PyTorch says {format_short(truth)}. "
        "Not quite: find the step where your reasoning and PyTorch part ways."
    )


def check_prediction(question: str, prediction: object, actual: float | Tensor) -> None:
    """Print whether ``prediction`` (written before running) matches ``actual``. Ungraded."""
    print(prediction_verdict(question, prediction, actual))


def nudge_slope(f: Callable[[float], float], x: float, h: float = 0.001) -> float:
    """The slope found by nudging: ``(f(x + h) - f(x)) / h``, in Python floats."""
    return (f(x + h) - f(x)) / h


def gradient_check(
    name: str, by_hand: float, nudged: float, grad: float | Tensor, tolerance: float = 0.01
) -> None:
    """Print hand, nudge and ``.grad`` side by side, and whether all three agree.

    The nudge is only close (it measures the slope over a small step, not at a point),
    so it agrees when within ``tolerance`` relative to the largest of the three.
    """
    exact = _as_float(grad, "grad")
    scale = max(abs(by_hand), abs(exact), 1.0)
    agree = by_hand == exact and abs(nudged - exact) <= tolerance * scale
    verdict = "all three agree" if agree else "they disagree: recheck the hand step"
    print(
        f"{'✓' if agree else '✗'} {name}: by hand {format_short(by_hand)} | "
        f"nudge {nudged:.4f} | .grad {format_short(exact)}: {verdict}"
    )
