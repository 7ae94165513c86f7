"""A verdict, and how a learner's number is compared with PyTorch's and printed.

Tolerance: a number passes when it is within a relative 1e-3 (or absolute 1e-6, for
values near zero) of PyTorch's float32 value. That accepts hand arithmetic such as
0.0408 against 0.040799998 and 4.16 against 4.1616, and rejects every slip the
diagnoses look for (a missing factor, a flipped sign, a closed gate).
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from typing import Final

REL_TOL: Final = 1e-3
ABS_TOL: Final = 1e-6


@dataclass(frozen=True)
class Verdict:
    """Outcome of one check; `reason` names the diagnosis (e.g. "sign", "gate_shut")."""

    passed: bool
    message: str
    reason: str = ""
    points: float | None = None
    """Points earned when a failed part still earns some (a class part credits each of its
    operations); None: all or nothing, as `passed` says."""


class _Missing:
    """Sentinel type: the learner's namespace has no such variable."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def matches(reference: float, value: float) -> bool:
    """True when `value` agrees with `reference` within the hand-arithmetic tolerance."""
    return math.isclose(value, reference, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def format_value(value: object) -> str:
    """A number as messages show it: 12.0, -4.0, 0.0408, 4.1616; anything else shortly."""
    if type(value) is float:
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return f"{value + 0.0:.1f}"
        return f"{value:.6g}"
    if type(value) in (int, bool):
        return repr(value)
    return short_repr(value)


class Shown:
    """A learner's value that is not a plain number, as their kernel showed it (the class
    check service receives only this text and the type's name, never the object)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def short_repr(value: object) -> str:
    if isinstance(value, Shown):
        return value.text
    short = reprlib.Repr()
    short.maxstring, short.maxother = 30, 40
    try:
        text = short.repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def is_tensor(value: object) -> bool:
    """A torch tensor (or a subclass), told by its class alone: torch need not be imported."""
    return any(
        cls.__name__ == "Tensor" and cls.__module__.startswith("torch")
        for cls in type(value).__mro__
    )
