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
   the wrong answers (gradients overwritten, wrong order, ReLU slope on the wrong
   side, a missing local factor in ``*`` or ``**``, a wrong sign in ``-``).

A graph is ``{"leaves": [2.5, -1.0], "ops": [{"op": "mul", "args": [0, 1]}, ...]}``;
value ``i`` is leaf ``i`` or, past the leaves, the result of op ``i - len(leaves)``;
the last op is the output. Ops: ``add``/``sub``/``mul`` of two values; ``add_const``,
``radd_const``, ``sub_const``, ``rsub_const``, ``mul_const``, ``rmul_const`` of a value
and a number (``r``: the number on the left); ``neg``; ``pow`` (number exponent);
``relu``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.core.value_build import apply_op as _apply
from autograder.core.value_build import evaluate_with

__all__ = ["ALL_OPS", "BUGS", "Verdict", "draw_graphs", "evaluate_with", "judge"]

Graph = dict[str, Any]
BINARY = ("add", "sub", "mul")
WITH_NUMBER = ("add_const", "radd_const", "sub_const", "rsub_const", "mul_const", "rmul_const")
UNARY = ("neg", "relu")
EXPONENTS = (2, 3)
TOLERANCE = 1e-6  # relative, and absolute below 1

# --- drawing graphs ----------------------------------------------------------------


def _forward(op: Mapping[str, Any], values: Sequence[float]) -> float:
    a = values[op["args"][0]]
    if op["op"] == "pow":
        return float(a ** op["exponent"])
    if op["op"] == "relu":
        return max(float(a), 0.0)
    return float(_apply(op, values))


ALL_OPS = (*BINARY, *WITH_NUMBER, "pow", *UNARY)


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


def _draw_one(rng: random.Random, allowed: Sequence[str] = ALL_OPS) -> Graph:
    leaves = [round(rng.uniform(-2.0, 2.0), 2) or 0.5 for _ in range(rng.randint(2, 4))]
    values = list(leaves)
    ops: list[dict[str, Any]] = []
    used = [False] * len(leaves)

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
            result = _forward(op, values)
            relu_at_zero = op["op"] == "relu" and abs(values[op["args"][0]]) < 1e-6
            if abs(result) < 50 and not relu_at_zero:  # bounded, and no kink of ReLU at 0
                break
        for arg in op["args"]:
            used[arg] = True
        ops.append(op)
        values.append(result)
        used.append(False)
    for i, leaf_used in enumerate(used[: len(leaves)]):  # every leaf reaches the output
        if not leaf_used:
            ops.append({"op": "add", "args": [len(values) - 1, i]})
            values.append(_forward(ops[-1], values))
    return {"leaves": leaves, "ops": ops}


def draw_graphs(rng: random.Random, n: int, ops: Sequence[str] = ALL_OPS) -> list[Graph]:
    """``n`` random graphs as plain JSON data (lists, dicts, numbers, strings).

    ``ops`` limits the operations drawn (say ``("add", "mul")`` for a part that grades
    only ``+`` and ``*``); ``add`` is always allowed, to join unused leaves to the output.
    """
    unknown = set(ops) - set(ALL_OPS)
    if unknown or not ops:
        raise ValueError(f"unknown operations {sorted(unknown)}; choose from {ALL_OPS}")
    return [_draw_one(rng, tuple(ops)) for _ in range(n)]


# --- running the learner's class (answer-free): in value_build, which the sandbox mounts ---

# --- the reference (PyTorch) and the classic bugs -----------------------------------


def _torch_reference(graph: Graph) -> tuple[float, list[float]]:
    import torch

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
    grads = torch.autograd.grad(values[-1], leaves, allow_unused=True, materialize_grads=True)
    return float(values[-1].item()), [float(g.item()) for g in grads]


@dataclass(frozen=True)
class Bug:
    """A classic mistake, and what to tell the learner about it."""

    key: str
    advice: str


BUGS = {
    "overwrite": Bug(
        "overwrite",
        "gradients are overwritten instead of accumulated: a value used twice must add "
        "up what each path sends (self.grad += ..., never self.grad = ...)",
    ),
    "order": Bug(
        "order",
        "the backward pass runs in the wrong order: a node must send its gradient on only "
        "after every node that uses it has sent its share (sort the graph topologically, "
        "then walk it in reverse)",
    ),
    "relu_side": Bug(
        "relu_side",
        "the ReLU's slope is on the wrong side: it is 1 where the input was positive and 0 "
        "where it was negative",
    ),
    "pow_factor": Bug(
        "pow_factor",
        "a local factor is missing in **: the slope of x**n is n * x**(n - 1)",
    ),
    "mul_factor": Bug(
        "mul_factor",
        "a local factor is missing in *: each side's slope is the other side's value "
        "(self.grad += other.data * out.grad)",
    ),
    "sub_sign": Bug(
        "sub_sign",
        "the sign is wrong in -: the slope of a - b towards b is -1",
    ),
}


def _buggy_grads(graph: Graph, bug: str, delegated: bool = False) -> list[float]:
    """Leaf gradients a Value class with ``bug`` computes (a small engine, plain floats).

    ``delegated``: the class writes unary ``-`` as ``self * -1`` and ``c - a`` as
    ``Value(c) - a``, so a bug in ``*`` or ``-`` shows there too."""
    n_leaves = len(graph["leaves"])
    values: list[float] = [float(v) for v in graph["leaves"]]
    parents: list[list[tuple[int, float]]] = [[] for _ in range(n_leaves)]
    for op in graph["ops"]:
        name, args = op["op"], op["args"]
        a = values[args[0]]
        if name in ("add", "sub", "mul"):
            b = values[args[1]]
            slopes = {
                "add": (1.0, 1.0),
                "sub": (1.0, 1.0 if bug == "sub_sign" else -1.0),
                "mul": (1.0, 1.0) if bug == "mul_factor" else (b, a),
            }[name]
            links = [(args[0], slopes[0]), (args[1], slopes[1])]
        elif name in WITH_NUMBER:
            c = float(op["number"])
            flipped = delegated and bug == "sub_sign"
            slope = {
                "add_const": 1.0, "radd_const": 1.0, "sub_const": 1.0,
                "rsub_const": 1.0 if flipped else -1.0,
            }.get(name, 1.0 if bug == "mul_factor" else c)  # fmt: skip
            links = [(args[0], slope)]
        elif name == "neg":
            links = [(args[0], 1.0 if delegated and bug == "mul_factor" else -1.0)]
        elif name == "pow":
            k = op["exponent"]
            links = [(args[0], a ** (k - 1) if bug == "pow_factor" else k * a ** (k - 1))]
        else:
            open_gate = a <= 0 if bug == "relu_side" else a > 0
            links = [(args[0], 1.0 if open_gate else 0.0)]
        values.append(_forward(op, values))
        parents.append(links)
    root = len(values) - 1
    if bug == "order":  # breadth first from the output, each node once, when first reached
        order, seen = [root], {root}
        for node in order:
            for child, _ in parents[node]:
                if child not in seen:
                    seen.add(child)
                    order.append(child)
    else:  # micrograd's: depth first, inputs in order, then the node; reversed
        order, seen = [], set()

        def visit(node: int) -> None:
            if node not in seen:
                seen.add(node)
                for child, _ in parents[node]:
                    visit(child)
                order.append(node)

        visit(root)
        order.reverse()
    grads = [0.0] * len(values)
    grads[root] = 1.0
    for node in order:
        for child, slope in parents[node]:
            share = slope * grads[node]
            grads[child] = share if bug == "overwrite" else grads[child] + share
    return grads[:n_leaves]


# --- the verdict --------------------------------------------------------------------


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _numbers(result: object, n_leaves: int) -> tuple[float, list[float]] | str:
    """The learner's numbers, or why they cannot be used (fail closed)."""
    if not isinstance(result, dict):
        return "no result"
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
            "add": f"{a} + {b}", "sub": f"{a} - {b}", "mul": f"{a} * {b}",
            "add_const": f"{a} + {c}", "radd_const": f"{c} + {a}", "sub_const": f"{a} - {c}",
            "rsub_const": f"{c} - {a}", "mul_const": f"{a} * {c}", "rmul_const": f"{c} * {a}",
            "neg": f"-{a}", "pow": f"{a}**{op.get('exponent')}", "relu": f"{a}.relu()",
        }[op["op"]]  # fmt: skip
        steps.append(f"{names[len(graph['leaves']) + k]} = {text}")
    return f"{leaves}; " + "; ".join(steps) + f"; backward from {names[-1]}"


@dataclass(frozen=True)
class Verdict:
    """``passed`` only when every graph's output and every leaf gradient match PyTorch."""

    passed: bool
    correct: int
    total: int
    text: str


def judge(graphs: Sequence[Graph], results: Sequence[object]) -> Verdict:
    """Compare the learner's numbers with PyTorch's on every graph; name the bug if one fits."""
    if len(results) != len(graphs) or not graphs:
        return Verdict(False, 0, len(graphs), f"expected {len(graphs)} results, got {len(results)}")
    failures: list[tuple[int, str]] = []
    wrong_grads: list[tuple[int, list[float]]] = []
    for i, (graph, result) in enumerate(zip(graphs, results, strict=True)):
        numbers = _numbers(result, len(graph["leaves"]))
        if isinstance(numbers, str):
            failures.append((i, numbers))
            continue
        output, grads = numbers
        want_output, want_grads = _torch_reference(graph)
        if not _close(output, want_output):
            failures.append(
                (i, f"output {output}, PyTorch {want_output}: the forward pass is wrong")
            )
            continue
        bad = [
            k for k, (g, w) in enumerate(zip(grads, want_grads, strict=True)) if not _close(g, w)
        ]
        if bad:
            k = bad[0]
            failures.append((i, f"v{k}.grad is {grads[k]:.6g}, PyTorch says {want_grads[k]:.6g}"))
            wrong_grads.append((i, grads))
    total, correct = len(graphs), len(graphs) - len(failures)
    if not failures:
        return Verdict(
            True,
            total,
            total,
            f"✓ {total}/{total} random graphs: every leaf's .grad matches PyTorch.",
        )
    lines = [f"✗ {correct}/{total} random graphs right."]
    named = _name_bugs(graphs, wrong_grads)
    lines += [f"Likely bug: {BUGS[key].advice}." for key in named]
    first, why = failures[0]
    lines.append(f"First wrong graph (#{first}): {describe(graphs[first])}: {why}.")
    return Verdict(False, correct, total, "\n".join(lines))


def _name_bugs(graphs: Sequence[Graph], wrong: Sequence[tuple[int, list[float]]]) -> list[str]:
    """The classic bugs whose engine reproduces most of the learner's wrong gradients."""
    if not wrong:
        return []
    scores = {}
    for key in BUGS:
        explained = max(
            sum(
                all(
                    _close(g, b)
                    for g, b in zip(grads, _buggy_grads(graphs[i], key, delegated), strict=True)
                )
                for i, grads in wrong
            )
            for delegated in (False, True)
        )
        scores[key] = explained / len(wrong)
    best = max(scores.values())
    return [key for key, score in scores.items() if score >= 0.5 and score == best]
