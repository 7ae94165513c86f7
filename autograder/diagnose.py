"""Turn (quantity, learner's value) into a verdict whose message teaches.

Tolerance: a number passes when it is within a relative 1e-3 (or absolute 1e-6, for
values near zero) of PyTorch's float32 value. That accepts hand arithmetic such as
0.0408 against 0.040799998 and 4.16 against 4.1616, and rejects every slip the
diagnoses below look for (a missing factor, a flipped sign, a closed gate).
Only plain `int`, `float` and `bool` are accepted: no subclasses, numpy or torch types,
so an object that claims to equal everything cannot pass. Yes/no facts match exactly.
"""

from __future__ import annotations

import math
import reprlib
import sys
from dataclasses import dataclass
from typing import Final

from autograder.quantities import Quantity

REL_TOL: Final = 1e-3
ABS_TOL: Final = 1e-6
SQUARE_FACTOR: Final = 2.0
MAX_MULTIPLE: Final = 10
"""Largest k for the "accumulated over k backward calls" diagnosis."""


@dataclass(frozen=True)
class Verdict:
    """Outcome of one check; `reason` names the diagnosis (e.g. "sign", "gate_shut")."""

    passed: bool
    message: str
    reason: str = ""


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
    return _short_repr(value)


def _short_repr(value: object) -> str:
    short = reprlib.Repr()
    short.maxstring, short.maxother = 30, 40
    try:
        text = short.repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _is_tensor(value: object) -> bool:
    return any(
        cls.__name__ == "Tensor" and cls.__module__.startswith("torch")
        for cls in type(value).__mro__
    )


def _tensor_number(value: object) -> str | None:
    """The single number inside a scalar torch tensor, formatted; None otherwise."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return None
    try:
        if value.numel() != 1:
            return None
        return format_value(float(value.detach().reshape(-1)[0].item()))
    except Exception:
        return None


def _type_problem(q: Quantity, value: object) -> Verdict | None:
    """A verdict when `value` is not an answer of the right type, else None."""
    name, label = q.name, q.label
    if value is None or value is Ellipsis or value is MISSING:
        return Verdict(
            False,
            f"✗ {label}: `{name}` is not answered yet; write `{name} = <your arithmetic>`.",
            "unanswered",
        )
    kind = type(value)
    if _is_tensor(value):
        number = _tensor_number(value)
        advice = f"the number itself, e.g. `{number}`" if number is not None else "one plain number"
        return Verdict(False, f"✗ {label}: `{name}` is a tensor; write {advice}.", "tensor")
    if kind.__module__ == "numpy":
        return Verdict(
            False,
            f"✗ {label}: `{name}` is a numpy {kind.__name__}; write a plain Python number.",
            "not_a_number",
        )
    if q.is_bool:
        if kind is bool:
            return None
        return Verdict(
            False,
            f"✗ {label}: `{name}` should be True or False, got {_short_repr(value)}.",
            "not_a_bool",
        )
    if kind is bool:
        return Verdict(
            False, f"✗ {label}: `{name}` should be a number, got {value!r}.", "not_a_number"
        )
    if kind not in (int, float):
        what = kind.__name__
        if isinstance(value, int | float):
            what = f"{what} (a subclass of {'float' if isinstance(value, float) else 'int'})"
        return Verdict(
            False,
            f"✗ {label}: `{name}` should be a plain int or float, not a {what}: "
            f"{_short_repr(value)}.",
            "not_a_number",
        )
    return None


def significant_digits(value: float) -> int:
    """How many significant digits the shortest repr of `value` has (0 for 0)."""
    mantissa = repr(abs(float(value))).split("e")[0].replace(".", "")
    return len(mantissa.strip("0"))


def digits_needed(reference: float) -> int:
    """Fewest significant digits whose rounding of `reference` passes."""
    for digits in range(1, 17):
        if matches(reference, float(f"{reference:.{digits}g}")):
            return digits
    return 17


def _too_rounded(reference: float, value: float) -> int | None:
    """Digits to ask for when `value` is `reference` rounded (or cut) too early."""
    needed = digits_needed(reference)
    have = significant_digits(value)
    if not 0 < have < needed or (have == 1 and value.is_integer()):
        return None
    exponent = math.floor(math.log10(abs(value)))
    last_digit = 10.0 ** (exponent - have + 1)
    return needed if abs(value - reference) <= last_digit else None


def _ratio_problem(q: Quantity, value: float) -> tuple[str, str] | None:
    """(reason, explanation) when `value` is the reference off by a telling factor."""
    ref = float(q.value)
    if ref == 0:
        return None
    hint = f" {q.hint}" if q.hint else ""
    for factor in q.chain_factors:
        # 1 and 0 change nothing telling; 2 gets the "half"/"double" messages below
        if any(matches(skip, abs(factor)) for skip in (0.0, 1.0, 2.0)):
            continue
        f = format_value(factor)
        if matches(ref, value * factor):
            return "chain_factor", f"A factor of {f} is missing from the chain.{hint}"
        if matches(ref * factor, value):
            return "chain_factor", f"An extra factor of {f}: one local slope counted twice?"
    if q.kind not in ("gradient", "local_slope") and SQUARE_FACTOR not in q.chain_factors:
        return None
    if matches(ref, value * 2):
        return (
            "half",
            f"Half of PyTorch's value: a factor of 2 is missing (the 2 of the square?).{hint}",
        )
    if matches(ref * 2, value):
        return "double", (
            "Twice PyTorch's value: a factor of 2 counted twice, "
            "or gradients accumulated over 2 backward calls?"
        )
    if q.kind == "gradient":
        for k in range(3, MAX_MULTIPLE + 1):
            if matches(ref * k, value):
                return "multiple", (
                    f"{k} × PyTorch's value: gradients accumulated over {k} backward calls? "
                    "Zero .grad before each backward()."
                )
    return None


def diagnose(q: Quantity, learner: object) -> Verdict:
    """Compare the learner's value with PyTorch's and say what most likely went wrong."""
    problem = _type_problem(q, learner)
    if problem is not None:
        return problem
    label = q.label
    if q.is_bool:
        if learner is q.value:
            return Verdict(True, f"✓ {label} = {learner!r} matches PyTorch", "match")
        return Verdict(
            False, f"✗ {label} = {learner!r}, but PyTorch says {q.value!r}.\n  {q.hint}", "mismatch"
        )
    if not isinstance(learner, int | float):  # unreachable: _type_problem rejected it
        raise TypeError(type(learner).__name__)
    value = float(learner)
    shown = format_value(learner)
    if not math.isfinite(value):
        return Verdict(False, f"✗ {label} = {shown} is not a finite number.", "not_finite")
    ref = float(q.value)
    if matches(ref, value):
        return Verdict(True, f"✓ {label} = {shown} matches PyTorch", "match")
    head = f"✗ {label} = {shown}, but PyTorch gives {format_value(ref)}."
    reason, why = _explain(q, ref, value)
    return Verdict(False, f"{head}\n  {why}", reason)


def _explain(q: Quantity, ref: float, value: float) -> tuple[str, str]:
    if q.gate == "shut" and matches(0.0, ref):
        return "gate_shut", (
            "The ReLU on this path is closed (h < 0): its slope 0 multiplies "
            "everything behind it, so this is 0."
        )
    if q.gate == "open" and matches(0.0, value):
        return "gate_open", (
            f"Nothing on the way back multiplies by zero here: the gradient gets through. {q.hint}"
        )
    if ref != 0 and matches(-ref, value):
        if q.kind == "forward":
            return "sign", "Right size, wrong sign: check the signs in the forward computation."
        return "sign", "Right size, wrong sign: check the sign of each factor on the way back."
    ratio = _ratio_problem(q, value)
    if ratio is not None:
        return ratio
    digits = _too_rounded(ref, value)
    if digits is not None:
        return "rounded", f"Close, but rounded too much: give at least {digits} significant digits."
    return "mismatch", q.hint or "Recompute it one step at a time."
