"""Judge a learner's micrograd-style ``Value`` class on random expression graphs.

Three steps, so that the learner's code runs where no answer is (a sandboxed worker)
and the verdict is computed where the learner's code is not (the grader):

1. ``draw_graphs(rng, n)``: plain-JSON descriptions of random expression graphs
   (leaves, then operations that may reuse any earlier value: shared subexpressions).
2. ``evaluate_with(cls, graph)`` (in ``value_build``, which the sandbox mounts): builds
   one graph with the learner's class, calls
   ``.backward()`` and returns the numbers (no reference, no answer in it).
3. ``judge(graphs, results)``: recomputes every graph with PyTorch (float64), compares
   the output and every leaf's ``.grad``, and names the classic bug when one explains
   the wrong answers (``value_bugs``: each blamed on the operation that holds it).

A graph is ``{"leaves": [2.5, -1.0], "ops": [{"op": "mul", "args": [0, 1]}, ...]}``;
value ``i`` is leaf ``i`` or, past the leaves, the result of op ``i - len(leaves)``;
the last op is the output. Ops: ``add``/``sub``/``mul``/``div`` of two values;
``add_const``, ``radd_const``, ``sub_const``, ``rsub_const``, ``mul_const``,
``rmul_const``, ``div_const``, ``rdiv_const`` of a value and a number (``r``: the number
on the left); ``neg``; ``pow`` (number exponent); ``relu``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.answers.value_bugs import (
    BUGS,
    TOLERANCE,
    UNITS,
    Explanation,
    Result,
    explain,
    observable,
    shared_nodes,
)
from autograder.core.value_build import NOT_IN_NOTEBOOK, evaluate_with
from autograder.core.value_build import apply_op as _apply

__all__ = [
    "ALL_OPS", "BUGS", "UNIT_OPS", "Verdict", "draw_graphs", "draw_unit", "evaluate_with", "judge",
]  # fmt: skip

Graph = dict[str, Any]
BINARY = ("add", "sub", "mul", "div")
WITH_NUMBER = (
    "add_const", "radd_const", "sub_const", "rsub_const", "mul_const", "rmul_const",
    "div_const", "rdiv_const",
)  # fmt: skip
UNARY = ("neg", "relu")
EXPONENTS = (2, 3)
SMALLEST_DIVISOR = 0.25
"""No graph divides by a value nearer 0 than this: its slopes stay moderate numbers."""

# --- drawing graphs ----------------------------------------------------------------


def _forward(op: Mapping[str, Any], values: Sequence[float]) -> float:
    a = values[op["args"][0]]
    if op["op"] == "pow":
        return float(a ** op["exponent"])
    if op["op"] == "relu":
        return max(float(a), 0.0)
    return float(_apply(op, values))


ALL_OPS = (*BINARY, *WITH_NUMBER, "pow", *UNARY)
EXACT = frozenset(
    {"relu", "add", "add_const", "radd_const", "sub", "sub_const", "rsub_const", "neg"}
)
"""Ops whose float results are the same in any class and in PyTorch: a ReLU may sit at 0."""

UNIT_OPS = {
    "add": ("add", "add_const", "radd_const"),
    "backward": ("add", "add_const"),
    "mul": ("mul", "mul_const", "rmul_const"),
    "neg": ("neg", "mul", "mul_const"),
    "sub": ("sub", "sub_const", "rsub_const", "add", "neg"),
    "pow": ("pow", "mul", "mul_const"),
    "relu": ("relu", "add", "add_const"),
    "div": ("mul", "div", "div_const", "rdiv_const", "pow"),
}
"""The graphs each operation is judged on: itself, and as few other operations as will
share values (a value used twice is where accumulation bugs show), and enough of them
to tell the bugs apart (- is often a + (-b): + and unary - are drawn beside it; / is
often a * b**-1: * and ** are drawn beside it, * first, so unused leaves join by *)."""
LEAF_OUTPUT_EVERY = 20
"""backward()'s graphs: one in this many is a leaf alone (its grad is the seed, 1)."""


def draw_unit(rng: random.Random, unit: str, n: int) -> list[Graph]:
    """``n`` graphs that judge one operation (``UNIT_OPS``); ``backward()``'s include
    outputs that are leaves, where a missing seed shows apart from a cut graph."""
    graphs = draw_graphs(rng, n, UNIT_OPS[unit])
    if unit == "backward":
        for i in range(0, n, LEAF_OUTPUT_EVERY):
            graphs[i] = {"leaves": graphs[i]["leaves"], "ops": []}
    return graphs


def _draw_op(rng: random.Random, kinds: Sequence[str], pick: Callable[[], int]) -> dict[str, Any]:
    name = rng.choice(kinds)
    if name in BINARY:
        return {"op": name, "args": [pick(), pick()]}
    if name in WITH_NUMBER:
        return {
            "op": name,
            "args": [pick()],
            "number": rng.choice([-2.0, -1.5, 0.5, 1.0, 2.0, 3.0]),
        }
    if name == "pow":
        return {"op": "pow", "args": [pick()], "exponent": rng.choice(EXPONENTS)}
    return {"op": name, "args": [pick()]}


def _divides_near_zero(op: Mapping[str, Any], values: Sequence[float]) -> bool:
    """Whether ``op`` divides by a value nearer 0 than ``SMALLEST_DIVISOR``."""
    divisor = {"div": 1, "rdiv_const": 0}.get(op["op"])
    return divisor is not None and abs(values[op["args"][divisor]]) < SMALLEST_DIVISOR


def _draw_one(rng: random.Random, allowed: Sequence[str] = ALL_OPS) -> Graph:
    # a ReLU exactly at its kink (input 0.0) only where every op is exact in floats
    kinks = "relu" in allowed and set(allowed) <= EXACT
    leaves = [round(rng.uniform(-2.0, 2.0), 2) or 0.5 for _ in range(rng.randint(2, 4))]
    join = next((k for k in allowed if k in BINARY), "add")
    values: list[float] = list(leaves)
    ops: list[dict[str, Any]] = []
    used = [False] * len(leaves)
    if kinks and rng.random() < 0.5:  # a leaf of exactly 0 through the ReLU
        leaves[0] = values[0] = 0.0
        ops.append({"op": "relu", "args": [0]})
        values.append(0.0)
        used[0] = True
        used.append(False)

    def pick() -> int:  # favour recent values and reuse: shared subexpressions are the point
        recent = rng.random() < 0.6
        return rng.choice(range(len(values))[-4:] if recent else range(len(values)))

    for _ in range(rng.randint(3, 8)):
        while True:
            # two values combined about half the time, as in real expressions
            binary = [k for k in allowed if k in BINARY]
            others = [k for k in allowed if k not in BINARY]
            kinds = binary if binary and (not others or rng.random() < 0.45) else others
            op = _draw_op(rng, kinds, pick)
            if _divides_near_zero(op, values):
                continue
            result = _forward(op, values)
            near_kink = op["op"] == "relu" and abs(values[op["args"][0]]) < 1e-6
            if kinks and values[op["args"][0]] == 0.0:
                near_kink = False  # exactly 0 in every class: the kink is checked
            if abs(result) < 50 and not near_kink:  # bounded, and never 1e-9 from the kink
                break
        for arg in op["args"]:
            used[arg] = True
        ops.append(op)
        values.append(result)
        used.append(False)
    for i, leaf_used in enumerate(used[: len(leaves)]):  # every leaf reaches the output
        if not leaf_used:
            ops.append({"op": join, "args": [len(values) - 1, i]})
            values.append(_forward(ops[-1], values))
    return {"leaves": leaves, "ops": ops}


def draw_graphs(rng: random.Random, n: int, ops: Sequence[str] = ALL_OPS) -> list[Graph]:
    """``n`` random graphs as plain JSON data (lists, dicts, numbers, strings).

    ``ops`` limits the operations drawn (say ``("add", "mul")`` for a part that grades
    only ``+`` and ``*``); unused leaves are joined to the output with the first of them
    that takes two values (``add`` when none does).
    """
    unknown = set(ops) - set(ALL_OPS)
    if unknown or not ops:
        raise ValueError(f"unknown operations {sorted(unknown)}; choose from {ALL_OPS}")
    return [_draw_one(rng, tuple(ops)) for _ in range(n)]


# --- running the learner's class (answer-free): in value_build, which the sandbox mounts ---

# --- the reference (PyTorch) and the classic bugs -----------------------------------


def _torch_references(graphs: Sequence[Graph]) -> list[tuple[float, list[float]]]:
    """PyTorch's output and leaf gradients of every graph (float64), in one backward pass:
    the graphs share no tensor, so the gradient of their outputs' sum is each one's own."""
    import torch

    every_leaf: list[Any] = []
    outputs: list[Any] = []
    for graph in graphs:
        leaves = [
            torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in graph["leaves"]
        ]
        values: list[Any] = list(leaves)
        for op in graph["ops"]:
            name, args = op["op"], op["args"]
            a = values[args[0]]
            if name in BINARY or name in WITH_NUMBER or name == "neg":
                out = _apply(op, values)
            elif name == "pow":
                out = a ** op["exponent"]
            else:
                out = torch.relu(a)
            values.append(out)
        every_leaf += leaves
        outputs.append(values[-1])
    if not outputs:
        return []
    total = torch.stack(outputs).sum()
    grads = torch.autograd.grad(total, every_leaf, allow_unused=True, materialize_grads=True)
    flat: list[float] = torch.stack(list(grads)).tolist()
    found, start = [], 0
    for graph, output in zip(graphs, torch.stack(outputs).tolist(), strict=True):
        count = len(graph["leaves"])
        found.append((float(output), flat[start : start + count]))
        start += count
    return found


# --- the verdict --------------------------------------------------------------------


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _numbers(result: object, n_leaves: int) -> tuple[float, list[float]] | str:
    """The learner's numbers, or why they cannot be used (fail closed)."""
    if not isinstance(result, dict):
        return "no result"
    if result.get("error") == NOT_IN_NOTEBOOK:
        return (
            "the notebook's own cells define no such class (the grader runs only your "
            "cells: a class imported from a module, such as autograd_lessons.value, is not "
            "there; write the class yourself)"
        )
    if "error" in result:
        return f"the class raised {result['error']}"
    output, grads = result.get("output"), result.get("grads")
    real = (int, float)
    if not isinstance(output, real) or isinstance(output, bool):
        return "no output number"
    if not isinstance(grads, list) or len(grads) != n_leaves:
        return "not one gradient per leaf"
    if not all(isinstance(g, real) and not isinstance(g, bool) for g in grads):
        return "a gradient that is not a number"
    return float(output), [float(g) for g in grads]


def describe(graph: Graph) -> str:
    """``v2 = v0*v1; v3 = v2 + v0`` (leaves v0.. with their values)."""
    names = [f"v{i}" for i in range(len(graph["leaves"]) + len(graph["ops"]))]
    leaves = ", ".join(f"v{i} = {v}" for i, v in enumerate(graph["leaves"]))
    steps = []
    for k, op in enumerate(graph["ops"]):
        a = names[op["args"][0]]
        b = names[op["args"][1]] if len(op["args"]) > 1 else ""
        c = op.get("number")
        text = {
            "add": f"{a} + {b}", "sub": f"{a} - {b}", "mul": f"{a} * {b}", "div": f"{a} / {b}",
            "add_const": f"{a} + {c}", "radd_const": f"{c} + {a}", "sub_const": f"{a} - {c}",
            "rsub_const": f"{c} - {a}", "mul_const": f"{a} * {c}", "rmul_const": f"{c} * {a}",
            "div_const": f"{a} / {c}", "rdiv_const": f"{c} / {a}",
            "neg": f"-{a}", "pow": f"{a}**{op.get('exponent')}", "relu": f"{a}.relu()",
        }[op["op"]]  # fmt: skip
        steps.append(f"{names[len(graph['leaves']) + k]} = {text}")
    return "; ".join([leaves, *steps, f"backward from {names[-1]}"])


@dataclass(frozen=True)
class Verdict:
    """``passed`` only when every graph's output and every leaf gradient match PyTorch."""

    passed: bool
    correct: int
    total: int
    text: str


def _learner_result(numbers: tuple[float, list[float]] | str) -> Result | str:
    """What the bug simulations compare with: numbers, None for a TypeError, or why neither."""
    if isinstance(numbers, str):
        return None if numbers.startswith("the class raised TypeError") else numbers
    return numbers


def judge(graphs: Sequence[Graph], results: Sequence[object], unit: str = "") -> Verdict:
    """Compare the learner's numbers with PyTorch's on every graph; name the bug if one fits.

    With ``unit`` (an operation of ``value_bugs.UNITS``), the verdict is that operation's:
    wrong numbers that a bug elsewhere explains in full, where that operation's own bugs
    would still show, do not cost it."""
    with shared_nodes():  # the bug simulations of these graphs share their nodes
        return _verdict(graphs, results, unit)


def _verdict(graphs: Sequence[Graph], results: Sequence[object], unit: str) -> Verdict:
    if len(results) != len(graphs) or not graphs:
        return Verdict(False, 0, len(graphs), f"expected {len(graphs)} results, got {len(results)}")
    failures: list[tuple[int, str]] = []
    learner: list[Result | str] = []
    references = _torch_references(graphs)
    for i, (graph, result) in enumerate(zip(graphs, results, strict=True)):
        numbers = _numbers(result, len(graph["leaves"]))
        learner.append(_learner_result(numbers))
        if isinstance(numbers, str):
            failures.append((i, numbers))
            continue
        output, grads = numbers
        want_output, want_grads = references[i]
        if not _close(output, want_output):
            failures.append(
                (i, f"output {output:.6g}, PyTorch {want_output:.6g}: the forward pass is wrong")
            )
            continue
        bad = [
            k for k, (g, w) in enumerate(zip(grads, want_grads, strict=True)) if not _close(g, w)
        ]
        if bad:
            k = bad[0]
            failures.append((i, f"v{k}.grad is {grads[k]:.6g}, PyTorch says {want_grads[k]:.6g}"))
    total, correct = len(graphs), len(graphs) - len(failures)
    if not failures:
        return Verdict(
            True,
            total,
            total,
            f"✓ {total}/{total} random graphs: every leaf's .grad matches PyTorch.",
        )
    first, why = failures[0]
    first_line = f"First wrong graph (#{first}): {describe(graphs[first])}: {why}."
    usable = [r for r in learner if not isinstance(r, str)]
    found: list[Explanation] = []
    if len(usable) == len(learner):  # numbers or TypeErrors only: a bug may explain them
        found = explain(graphs, usable, [i for i, _ in failures])
    reasons = {why for _, why in failures}
    if not found and correct == 0 and len(reasons) == 1:  # one cause for every graph
        return Verdict(False, 0, total, f"✗ 0/{total} random graphs right: {reasons.pop()}.")
    lines = [f"✗ {correct}/{total} random graphs right."]
    own = [e for e in found if not unit or e.bug.unit == unit]
    if found and not own:  # every bug that fits is in another operation
        hidden = [e for e in found if not observable(graphs, unit, e)]
        elsewhere = "; or ".join(e.bug.line() for e in found)
        if not hidden:
            return Verdict(
                True,
                correct,
                total,
                f"✓ {UNITS[unit]} is right: the {total - correct} wrong graphs of {total} all "
                f"come from a bug {elsewhere}. That bug costs its own operation's point, not "
                "this one.",
            )
        lines.append(
            f"{UNITS[unit]} cannot be checked yet: the numbers fit a bug "
            f"{'; or '.join(e.bug.line() for e in hidden)}, which hides whether "
            f"{UNITS[unit]} is right. Fix that first."
        )
    elif len(found) == 1:
        lines.append(f"Likely bug {found[0].bug.line()}.")
    elif found:  # the numbers fit several bugs: none is named as if certain
        lines.append("Likely one of these bugs (each explains the numbers):")
        lines += [f"  - {e.bug.line()}." for e in found]
    lines.append(first_line)
    return Verdict(False, correct, total, "\n".join(lines))
