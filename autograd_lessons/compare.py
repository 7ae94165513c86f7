"""Compare a gradient worked out by hand with the one PyTorch put in ``.grad``.

``compare(name, by_hand, torch_value)`` prints exactly one line:

- ``✓ dL/dw: exact match (by hand 12.0, PyTorch 12.0)``
- ``≈ dL/dw: close match (by hand 0.0408, PyTorch 0.040800001, max diff 1.5e-09)``
- ``✗ dL/dw: MISMATCH (by hand 6.0, PyTorch 12.0, max diff 6)``
- ``✗ y.grad: MISMATCH (by hand 5.0, PyTorch .grad is None: call .backward() first,
  and .retain_grad() on a non-leaf)`` (one line when printed)

The two numbers are printed with 8 significant digits (enough to show float32
rounding), whole numbers as ``12.0`` and ``-0.0`` as ``0.0``; the difference with 2
significant digits. See ``autograd_lessons._format``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from torch import Tensor

from ._format import format_diff, format_value

__all__ = ["Comparison", "Outcome", "compare", "compare_values"]

Outcome = Literal["exact", "close", "mismatch"]

GRAD_IS_NONE = ".grad is None: call .backward() first, and .retain_grad() on a non-leaf"


@dataclass(frozen=True)
class Comparison:
    """The verdict of one hand-vs-PyTorch comparison.

    ``torch_value`` and ``max_abs_diff`` are None when PyTorch's side was None
    (typically a ``.grad`` that was never filled in).
    """

    name: str
    by_hand: float
    torch_value: float | None
    outcome: Outcome
    max_abs_diff: float | None

    @property
    def matched(self) -> bool:
        """True for an exact or a close match."""
        return self.outcome != "mismatch"

    @property
    def message(self) -> str:
        """The one line that :func:`compare` prints."""
        hand = format_value(self.by_hand)
        if self.torch_value is None:
            return f"✗ {self.name}: MISMATCH (by hand {hand}, PyTorch {GRAD_IS_NONE})"
        torch_text = format_value(self.torch_value)
        if self.outcome == "exact":
            return f"✓ {self.name}: exact match (by hand {hand}, PyTorch {torch_text})"
        diff = format_diff(self.max_abs_diff if self.max_abs_diff is not None else math.nan)
        numbers = f"by hand {hand}, PyTorch {torch_text}, max diff {diff}"
        if self.outcome == "close":
            return f"≈ {self.name}: close match ({numbers})"
        return f"✗ {self.name}: MISMATCH ({numbers})"

    def __str__(self) -> str:
        return self.message


def _as_float(value: object, what: str) -> float:
    """One number out of a Python number or a one-element tensor, or a friendly error."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"{what} must be one number, but got a tensor of shape {tuple(value.shape)}; "
                "pick one element or reduce it first"
            )
        if value.is_complex():
            raise TypeError(f"{what} must be a real number, but got a complex tensor")
        return float(value.detach().item())
    if value is Ellipsis:
        raise TypeError(f"{what} is still `...`: replace it with your answer")
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{what} must be a number, but got {value!r}")
    try:
        return float(value)  # type: ignore[arg-type]  # numbers, numpy scalars
    except (TypeError, ValueError):
        raise TypeError(
            f"{what} must be a number or a one-element tensor, but got {type(value).__name__}"
        ) from None


def compare_values(
    name: str,
    by_hand: float | Tensor,
    torch_value: Tensor | float | None,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> Comparison:
    """Compare ``by_hand`` with ``torch_value`` and return the verdict (prints nothing).

    - exact: equal as floats (so ``0.0`` equals ``-0.0``; NaN equals NaN);
    - close: ``|by_hand - torch_value| <= atol + rtol * |torch_value|`` (the rule of
      ``torch.allclose``), e.g. a float32 tensor ``0.0408`` against the Python ``0.0408``;
    - mismatch: anything else, and a ``torch_value`` of None (an empty ``.grad``).

    ``torch_value`` may be a 0-d or one-element tensor, or a Python number.
    """
    hand = _as_float(by_hand, "by_hand")
    if torch_value is None:
        return Comparison(name, hand, None, "mismatch", None)
    theirs = _as_float(torch_value, "torch_value")
    if hand == theirs or (math.isnan(hand) and math.isnan(theirs)):
        return Comparison(name, hand, theirs, "exact", 0.0)
    diff = abs(hand - theirs)
    close = math.isfinite(diff) and diff <= atol + rtol * abs(theirs)
    return Comparison(name, hand, theirs, "close" if close else "mismatch", diff)


def compare(
    name: str,
    by_hand: float | Tensor,
    torch_value: Tensor | float | None,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> None:
    """Print one line saying whether ``by_hand`` matches PyTorch: ✓ exact, ≈ close or ✗."""
    print(compare_values(name, by_hand, torch_value, rtol=rtol, atol=atol).message)
