"""Build a JSON expression graph with a learner's ``Value`` class: answer-free.

This module runs inside the grading sandbox (mounted beside the answer-free shim as
``autograder.core.value_build``): it only builds the graph the grader drew, calls
``.backward()`` and reports the numbers. What the numbers should be is computed outside,
by ``value_graphs.judge``. The graph format is described in ``value_graphs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["NOT_IN_NOTEBOOK", "apply_op", "build", "evaluate_all", "evaluate_with"]

NOT_IN_NOTEBOOK = "no class of that name defined by the notebook's cells"
"""What a part built without a class gives: the name is not bound to a class."""

BINARY = ("add", "sub", "mul", "div")


def apply_op(op: Mapping[str, Any], values: Sequence[Any]) -> Any:
    """``+``, ``-``, ``*``, ``/`` (values or numbers on either side) and unary ``-``, on any
    objects."""
    name, args = op["op"], op["args"]
    a = values[args[0]]
    if name in BINARY:
        b = values[args[1]]
        if name == "div":
            return a / b
        return a + b if name == "add" else a - b if name == "sub" else a * b
    if name == "neg":
        return -a
    c = float(op["number"])
    if name == "add_const":
        return a + c
    if name == "radd_const":
        return c + a
    if name == "sub_const":
        return a - c
    if name == "rsub_const":
        return c - a
    if name == "mul_const":
        return a * c
    if name == "rmul_const":
        return c * a
    if name == "div_const":
        return a / c
    if name == "rdiv_const":
        return c / a
    raise ValueError(f"unknown op {name!r}")


def build(cls: Callable[[float], Any], graph: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """The leaves and the output of ``graph``, built with ``cls``."""
    leaves = [cls(float(v)) for v in graph["leaves"]]
    values: list[Any] = list(leaves)
    for op in graph["ops"]:
        a = values[op["args"][0]]
        if op["op"] == "pow":
            values.append(a ** op["exponent"])
        elif op["op"] == "relu":
            values.append(a.relu())
        else:
            values.append(apply_op(op, values))
    return leaves, values[-1]


def _number(value: object) -> float:
    if type(value) not in (int, float):
        raise TypeError(f"a number was expected, got {type(value).__name__}")
    return float(value)  # type: ignore[arg-type]


def evaluate_with(cls: Callable[[float], Any], graph: Mapping[str, Any]) -> dict[str, Any]:
    """Build ``graph`` with the learner's ``cls``, run ``.backward()``, return the numbers.

    ``{"output": 3.0, "grads": [1.0, 2.0]}``, or ``{"error": "TypeError: ..."}`` when the
    class raises (a missing ``__rmul__``, say) or holds something that is not a plain
    number in ``.data`` or ``.grad``. Contains nothing to compare against.
    """
    try:
        leaves, out = build(cls, graph)
        out.backward()
        return {"output": _number(out.data), "grads": [_number(leaf.grad) for leaf in leaves]}
    except Exception as error:  # the learner's code: any failure is reported, not raised
        return {"error": f"{type(error).__name__}: {error}"[:300]}


def evaluate_all(cls: object, graphs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``evaluate_with`` on every graph (a class that is not callable: one error each)."""
    if not callable(cls):
        return [{"error": NOT_IN_NOTEBOOK} for _ in graphs]
    return [evaluate_with(cls, graph) for graph in graphs]
