"""The form of a learner's answer: a plain number (not a tensor, a numpy scalar or a
subclass), a yes/no where one is asked, and rounded no earlier than the check allows."""

from __future__ import annotations

import math
import sys

from autograder.core.quantities import Quantity
from autograder.core.verdict import MISSING, Verdict, format_value, is_tensor, matches, short_repr


def tensor_number(value: object) -> str | None:
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


def type_problem(q: Quantity, value: object) -> Verdict | None:
    """A verdict when `value` is not an answer of the right type, else None."""
    name, label = q.name, q.label
    if value is None or value is Ellipsis or value is MISSING:
        return Verdict(
            False,
            f"✗ {label}: `{name}` is not answered yet; write `{name} = <your arithmetic>`.",
            "unanswered",
        )
    kind = type(value)
    if is_tensor(value):
        number = tensor_number(value)
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
            f"✗ {label}: `{name}` should be True or False, got {short_repr(value)}.",
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
            f"{short_repr(value)}.",
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


def too_rounded(reference: float, value: float) -> int | None:
    """Digits to ask for when `value` is `reference` rounded (or cut) too early."""
    needed = digits_needed(reference)
    have = significant_digits(value)
    if not 0 < have < needed or (have == 1 and value.is_integer()):
        return None
    exponent = math.floor(math.log10(abs(value)))
    last_digit = 10.0 ** (exponent - have + 1)
    return needed if abs(value - reference) <= last_digit else None
