"""How the drawing names an operation: as the learner wrote it (``w·x + b``), not ``AddBackward0``.

Pure string work on what a :class:`~autograd_lessons.tape.Tape` recorded: a function
name and its operands, each already written as text.
"""

from __future__ import annotations

import re

__all__ = ["SUPERSCRIPTS", "operation_text", "short_op"]

SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
CALLS = {"relu": "ReLU", "leaky_relu": "LeakyReLU", "sigmoid": "sigmoid", "tanh": "tanh",
         "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "mean": "mean", "sum": "sum",
         "abs": "abs", "sqrt": "sqrt"}  # fmt: skip


def _compound(text: str) -> bool:
    """True when ``text`` needs brackets as an operand of ``·``, ``/`` or a power."""
    return any(sign in text for sign in (" + ", " − ", "·", "/")) or text.startswith("−")


def _wrap(text: str) -> str:
    return f"({text})" if _compound(text) else text


def _power(base: str, exponent: str) -> str:
    if re.fullmatch(r"-?\d+", exponent):
        return f"{_wrap(base)}{exponent.translate(SUPERSCRIPTS)}"
    return f"{_wrap(base)}**{exponent}"


def operation_text(func: str, operands: list[str], numeric: list[bool]) -> str | None:
    """``mul``, ``["w", "x"]`` → ``w·x``; None for a function it does not know.

    ``numeric[i]`` says operand ``i`` was a plain Python number (written first in a
    product: PyTorch records ``2 * y`` as ``mul(y, 2)``).
    """
    name = func.strip("_").removeprefix("r") if func.startswith("__r") else func.strip("_")
    reverse = func.startswith("__r") and func not in ("__rshift__",)
    if reverse:
        operands = operands[::-1]
        numeric = numeric[::-1]
    if name in ("mul", "multiply") and len(operands) == 2:
        left, right = operands
        if numeric[1] and not numeric[0]:
            left, right = right, left
        return f"{_wrap(left)}·{_wrap(right)}"
    if name in ("add", "sub", "subtract") and len(operands) == 2:
        sign = "+" if name == "add" else "−"
        right = operands[1]
        right = f"({right})" if name != "add" and (" + " in right or " − " in right) else right
        return f"{operands[0]} {sign} {right}"
    if name in ("div", "true_divide", "truediv", "divide") and len(operands) == 2:
        return f"{_wrap(operands[0])} / {_wrap(operands[1])}"
    if name in ("pow", "square") and operands:
        return _power(operands[0], operands[1] if len(operands) > 1 else "2")
    if name in ("neg", "negative") and len(operands) == 1:
        return f"−{_wrap(operands[0])}"
    if name in CALLS and operands:
        return f"{CALLS[name]}({operands[0]})"
    return None


def short_op(node_name: str) -> str:
    """``MulBackward0`` → ``Mul``; ``torch::autograd::AccumulateGrad`` → ``AccumulateGrad``."""
    return re.sub(r"Backward\d*$", "", node_name.split("::")[-1])
