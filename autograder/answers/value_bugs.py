"""The classic bugs of a micrograd-style ``Value`` class, and which one explains the numbers.

A learner's class is simulated on plain floats as the learner wrote it: each graph
operation is expanded into the class's own nodes (``a - b`` may be its own node, or
``a + (-b)``, and ``-a`` may be ``a * -1``: a bug in ``*`` then shows in ``-`` too), the
bug is put where learners put it, and ``backward()`` walks the nodes as the buggy class
would (breadth first, without a visited set, without the seed). A bug explains a wrong
graph when its simulation gives every leaf gradient the learner's class gave.

Each bug names the operation that holds it (``where``), so a ``*`` bug found while
checking ``-`` is blamed on ``*``, and an order bug on ``backward()``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["BUGS", "Bug", "name_bugs"]

Graph = Mapping[str, Any]
TOLERANCE = 1e-6  # relative, and absolute below 1
MOST_GRAPHS_READ = 40
"""Wrong graphs simulated per bug at most: the cost stays bounded whatever the class does."""


@dataclass(frozen=True)
class Bug:
    """A classic mistake: the operation that holds it, and what to tell the learner."""

    key: str
    where: str
    advice: str

    def line(self, where: str = "") -> str:
        """``in backward(): ...``, the line the learner reads."""
        return f"in {where or self.where}: {self.advice}"


BUGS = {
    bug.key: bug
    for bug in (
        Bug(
            "overwrite", "a _backward",
            "a gradient is overwritten instead of accumulated: a value used twice must "
            "add up what each path sends (self.grad += ..., never self.grad = ...)",
        ),
        Bug(
            "order", "backward()",
            "the nodes run in the wrong order (breadth first, or a node before every value "
            "made from it): a node may send its gradient on only after every node that uses "
            "it has sent its share; sort the graph topologically, then walk it in reverse",
        ),
        Bug(
            "no_visited", "backward()",
            "the topological sort keeps no visited set, so a value reached along two paths "
            "is listed twice and its _backward runs twice (its share counted twice): "
            "remember the nodes already visited",
        ),
        Bug(
            "no_seed", "backward()",
            "the output's gradient is never set to 1 before the walk (self.grad = 1.0), "
            "so every gradient stays 0",
        ),
        Bug(
            "relu_side", "relu()",
            "the ReLU's slope is on the wrong side: it is 1 where the input was positive "
            "and 0 where it was negative",
        ),
        Bug(
            "pow_factor", "** (__pow__)",
            "the factor n is missing: the slope of x**n is n * x**(n - 1)",
        ),
        Bug(
            "mul_factor", "* (__mul__)",
            "the local factor is missing: each side's slope is the other side's value "
            "(self.grad += other.data * out.grad)",
        ),
        Bug(
            "mul_own", "* (__mul__)",
            "each side uses its own value instead of the other side's: "
            "self.grad += other.data * out.grad and other.grad += self.data * out.grad",
        ),
        Bug(
            "minus_sign", "- (__sub__ / __neg__)",
            "the sign is wrong: the slope of a - b towards b is -1, and of -a towards a is -1",
        ),
    )
}  # fmt: skip

FAMILY_NAMES = {
    "add": "+ (__add__)",
    "mul": "* (__mul__)",
    "sub": "- (__sub__)",
    "neg": "unary - (__neg__)",
    "pow": "** (__pow__)",
    "relu": "relu()",
}


@dataclass(frozen=True)
class Style:
    """How the class writes ``-``: its own node or built from other operations."""

    neg: str = "own"  # or "mul": -a is a * -1
    sub: str = "own"  # or "add_neg": a - b is a + (-b)
    rsub: str = "own"  # or "sub": Value(c) - a; or "add_neg": c + (-a)


STYLES = tuple(
    Style(neg, sub, rsub)
    for neg, sub, rsub in itertools.product(
        ("own", "mul"), ("own", "add_neg"), ("own", "sub", "add_neg")
    )
)


@dataclass(frozen=True)
class Variant:
    """One way a buggy class can be written (the bug, where it sits, how ``-`` is built)."""

    bug: str
    style: Style = Style()
    walk: str = "topo"  # "bfs", "preorder" (each node once), "repeats" (no visited set)
    overwrite_in: frozenset[str] = frozenset()  # the primitive kinds that write = for +=
    overwrite_sides: frozenset[int] = frozenset({0, 1})  # self (0), other (1), or both
    seed: float = 1.0


# --- the class's own nodes ------------------------------------------------------------

Node = tuple[str, tuple[int, ...], float]  # kind, inputs, number (constant or exponent)


def _expand(graph: Graph, style: Style) -> tuple[list[Node], list[int]]:
    """The class's nodes for ``graph`` (leaves first) and the node of every graph value."""
    nodes: list[Node] = [("leaf", (), float(v)) for v in graph["leaves"]]
    where = list(range(len(nodes)))

    def new(kind: str, args: tuple[int, ...], number: float = 0.0) -> int:
        nodes.append((kind, args, number))
        return len(nodes) - 1

    def const(c: float) -> int:
        return new("leaf", (), c)

    def neg(a: int) -> int:
        return new("mul", (a, const(-1.0))) if style.neg == "mul" else new("neg", (a,))

    def sub(a: int, b: int) -> int:
        return new("add", (a, neg(b))) if style.sub == "add_neg" else new("sub", (a, b))

    for op in graph["ops"]:
        name, args = op["op"], [where[i] for i in op["args"]]
        a = args[0]
        c = float(op.get("number", 0.0))
        if name in ("add", "mul"):
            node = new(name, (a, args[1]))
        elif name == "sub":
            node = sub(a, args[1])
        elif name in ("add_const", "radd_const", "mul_const", "rmul_const"):
            node = new(name.split("_")[0].lstrip("r"), (a, const(c)))
        elif name == "sub_const":
            node = sub(a, const(c))
        elif name == "rsub_const":
            if style.rsub == "sub":
                node = sub(const(c), a)
            elif style.rsub == "add_neg":
                node = new("add", (neg(a), const(c)))
            else:
                node = new("sub", (const(c), a))
        elif name == "neg":
            node = neg(a)
        elif name == "pow":
            node = new("pow", (a,), float(op["exponent"]))
        else:
            node = new("relu", (a,))
        where.append(node)
    return nodes, where


def _forward(nodes: Sequence[Node]) -> list[float]:
    values: list[float] = []
    for kind, args, number in nodes:
        x = values[args[0]] if args else 0.0
        y = values[args[1]] if len(args) > 1 else 0.0
        values.append({
            "leaf": number, "add": x + y, "mul": x * y, "sub": x - y, "neg": -x,
            "pow": x**number if kind == "pow" else 0.0, "relu": max(x, 0.0),
        }[kind])  # fmt: skip
    return values


def _slopes(node: Node, values: Sequence[float], bug: str) -> tuple[float, ...]:
    """The local slopes the buggy class sends to each input of ``node``."""
    kind, args, number = node
    x = values[args[0]] if args else 0.0
    y = values[args[1]] if len(args) > 1 else 0.0
    if kind == "mul":
        return (1.0, 1.0) if bug == "mul_factor" else (x, y) if bug == "mul_own" else (y, x)
    if kind in ("sub", "neg"):
        sign = 1.0 if bug == "minus_sign" else -1.0
        return (1.0, sign) if kind == "sub" else (sign,)
    if kind == "pow":
        return ((1.0 if bug == "pow_factor" else number) * x ** (number - 1),)
    if kind == "relu":
        return (1.0 if (x <= 0 if bug == "relu_side" else x > 0) else 0.0,)
    return (1.0,) * len(args)


def _walk(nodes: Sequence[Node], root: int, walk: str) -> list[int]:
    """The nodes in the order the buggy ``backward()`` runs their ``_backward``."""
    if walk in ("bfs", "preorder"):
        order, seen, todo = [], {root}, [root]
        while todo:
            node = todo.pop(0 if walk == "bfs" else -1)
            order.append(node)
            for child in nodes[node][1]:
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        return order
    topo: list[int] = []
    visited: set[int] = set()
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:  # depth first, inputs in order, then the node (no recursion limit)
        node, done = stack.pop()
        if done:
            topo.append(node)
        elif walk == "repeats" or node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(nodes[node][1]))
        if len(topo) > 10_000:  # exponential repeats: this variant explains nothing sane
            break
    return topo[::-1]


def simulate(graph: Graph, variant: Variant) -> list[float]:
    """The leaf gradients a class with ``variant``'s bug gives on ``graph``."""
    nodes, where = _expand(graph, variant.style)
    values = _forward(nodes)
    root = where[-1]
    grads = [0.0] * len(nodes)
    grads[root] = variant.seed
    for node in _walk(nodes, root, variant.walk):
        kind, args, _ = nodes[node]
        slopes = _slopes(nodes[node], values, variant.bug)
        for side, (child, slope) in enumerate(zip(args, slopes, strict=True)):
            share = slope * grads[node]
            overwrite = kind in variant.overwrite_in and side in variant.overwrite_sides
            grads[child] = share if overwrite else grads[child] + share
    return grads[: len(graph["leaves"])]


# --- which bug explains the learner's numbers ----------------------------------------

KINDS = ("add", "mul", "sub", "neg", "pow", "relu")
OVERWRITTEN_SIDES = (frozenset({0, 1}), frozenset({0}), frozenset({1}))


def _variants(key: str) -> Iterator[tuple[Variant, str]]:
    """Every way to write ``key``'s bug, with the operation to blame when that one fits."""
    if key == "overwrite":
        # learners often overwrite on one side only (self.grad = ...; other.grad += ...)
        for style, sides in itertools.product(STYLES, OVERWRITTEN_SIDES):
            every = Variant(key, style, overwrite_in=frozenset(KINDS), overwrite_sides=sides)
            yield every, "every _backward"
            for kind in KINDS:
                one = Variant(key, style, overwrite_in=frozenset({kind}), overwrite_sides=sides)
                yield one, FAMILY_NAMES[kind]
    elif key in ("order", "no_visited", "no_seed"):
        walks = {"order": ("bfs", "preorder"), "no_visited": ("repeats",), "no_seed": ("topo",)}
        for style in STYLES:
            for walk in walks[key]:
                yield Variant(key, style, walk=walk, seed=0.0 if key == "no_seed" else 1.0), ""
    else:
        for style in STYLES:
            yield Variant(key, style), ""


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _reproduces(graph: Graph, grads: Sequence[float], variant: Variant) -> bool:
    try:
        simulated = simulate(graph, variant)
    except (OverflowError, ZeroDivisionError, ValueError):
        return False
    return all(_close(g, s) for g, s in zip(grads, simulated, strict=True))


def name_bugs(graphs: Sequence[Graph], wrong: Sequence[tuple[int, Sequence[float]]]) -> list[str]:
    """``in backward(): ...`` for the bug that reproduces most of the wrong gradients.

    Several lines when several bugs explain the numbers equally well (the caller says
    "one of"); none when no bug explains at least half of the wrong graphs read."""
    read = list(wrong)[:MOST_GRAPHS_READ]
    if not read:
        return []
    best: dict[str, tuple[int, str]] = {}
    for key in BUGS:
        for variant, where in _variants(key):
            explained = sum(_reproduces(graphs[i], grads, variant) for i, grads in read)
            if explained > best.get(key, (-1, ""))[0]:
                best[key] = (explained, where)
    top = max(score for score, _ in best.values())
    if top * 2 < len(read):
        return []
    return [BUGS[key].line(where) for key, (score, where) in best.items() if score == top]
