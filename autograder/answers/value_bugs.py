"""The classic bugs of a micrograd-style ``Value`` class, which one explains the numbers, and
which operations the numbers still show right.

A learner's class is simulated on plain floats as the learner wrote it: each graph
operation is expanded into the class's own nodes (``a - b`` may be its own node, or
``a + (-b)``, ``-a`` may be ``a * -1`` and ``a / b`` may be ``a * b**-1``: a bug in ``*``
then shows in ``-`` and ``/`` too), the
bug is put where learners put it, and ``backward()`` walks the nodes as the buggy class
would (breadth first, without a visited set, without the seed, not reversed). A bug
explains a class's numbers when its simulation gives, on every graph, the output, every
leaf gradient and every error the learner's class gave.

Each bug belongs to one operation of the class (``Bug.unit``: ``+``, ``*``, unary ``-``,
``-``, ``**``, ``/``, ``relu()`` or ``backward()``), so points follow the operation that holds
it: ``explain`` finds the bugs that fit, and ``observable`` says whether the numbers still
show that another operation is right despite them (a class whose ``backward()`` never
seeds the output shows nothing about any operation).
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

__all__ = ["BUGS", "UNITS", "Bug", "Explanation", "explain", "observable", "shared_nodes"]

Graph = Mapping[str, Any]
TOLERANCE = 1e-6  # relative, and absolute below 1
MOST_WRONG_READ = 40
"""Wrong graphs a bug must reproduce at most (then every right graph): the cost stays bounded."""

UNITS = {
    "add": "+ (__add__, __radd__)",
    "backward": "backward()",
    "mul": "* (__mul__, __rmul__)",
    "neg": "unary - (__neg__)",
    "sub": "- (__sub__, __rsub__)",
    "pow": "** (__pow__)",
    "relu": "relu()",
    "div": "/ (__truediv__, __rtruediv__)",
}
"""Every operation a class part credits, as the learner reads it."""

FAMILY = {
    "add": "add", "add_const": "add", "radd_const": "add",
    "mul": "mul", "mul_const": "mul", "rmul_const": "mul",
    "sub": "sub", "sub_const": "sub", "rsub_const": "sub",
    "div": "div", "div_const": "div", "rdiv_const": "div",
    "neg": "neg", "pow": "pow", "relu": "relu",
}  # fmt: skip
"""The operation (unit) of each graph op."""


@dataclass(frozen=True)
class Bug:
    """A classic mistake: the operation that holds it, and what to tell the learner."""

    key: str
    unit: str
    advice: str
    where: str = ""
    """The method named in the line (default: the unit's name)."""

    def line(self) -> str:
        """``in backward(): ...``, the line the learner reads."""
        return f"in {self.where or UNITS[self.unit]}: {self.advice}"


def _overwrite(unit: str) -> Bug:
    return Bug(
        f"overwrite_{unit}", unit,
        "a gradient is overwritten instead of accumulated: a value used twice must add up "
        "what each path sends (self.grad += ..., never self.grad = ...)",
    )  # fmt: skip


def _cut(unit: str) -> Bug:
    return Bug(
        f"cut_{unit}", unit,
        "it cuts the graph: the Value it returns does not remember its inputs (or has no "
        "_backward), so no gradient flows back through it; give the new Value its inputs "
        "(_prev) and a _backward",
    )  # fmt: skip


def _missing(unit: str, method: str, symbol: str) -> Bug:
    return Bug(
        f"missing_{method}", unit,
        f"a number on the left (2 {symbol} v) raises TypeError: the class has no {method}, "
        f"which Python calls when the number does not know Value",
        where=method,
    )  # fmt: skip


BUGS = {
    bug.key: bug
    for bug in (
        Bug(
            "order", "backward",
            "the nodes run in the wrong order (breadth first, or a node before every value "
            "made from it): a node may send its gradient on only after every node that uses "
            "it has sent its share; sort the graph topologically, then walk it in reverse",
        ),
        Bug(
            "unreversed", "backward",
            "the topological list is walked as built, leaves first: walk it reversed "
            "(for node in reversed(topo)), from the output back to the leaves",
        ),
        Bug(
            "no_visited", "backward",
            "the topological sort keeps no visited set, so a value reached along two paths "
            "is listed twice and its _backward runs twice (its share counted twice): "
            "remember the nodes already visited",
        ),
        Bug(
            "no_seed", "backward",
            "the output's gradient is never set to 1 before the walk (self.grad = 1.0), "
            "so every gradient stays 0",
        ),
        Bug(
            "relu_side", "relu",
            "the ReLU's slope is on the wrong side: it is 1 where the input was positive "
            "and 0 where it was negative",
        ),
        Bug(
            "relu_output", "relu",
            "the ReLU's slope is taken as its output (out.data): the slope is 1 where the "
            "input was positive, 0 elsewhere, whatever the value",
        ),
        Bug(
            "relu_kink", "relu",
            "at an input of exactly 0 the slope is 1 (self.data >= 0): PyTorch's ReLU sends "
            "nothing back at 0, so the test is self.data > 0",
        ),
        Bug(
            "pow_factor", "pow",
            "the factor n is missing: the slope of x**n is n * x**(n - 1)",
        ),
        Bug(
            "pow_power", "pow",
            "the power is not lowered: the slope of x**n is n * x**(n - 1), not n * x**n",
        ),
        Bug(
            "mul_factor", "mul",
            "the local factor is missing: each side's slope is the other side's value "
            "(self.grad += other.data * out.grad)",
        ),
        Bug(
            "mul_own", "mul",
            "each side uses its own value instead of the other side's: "
            "self.grad += other.data * out.grad and other.grad += self.data * out.grad",
        ),
        Bug(
            "neg_sign", "neg",
            "the sign is wrong: the slope of -a towards a is -1",
        ),
        Bug(
            "sub_sign", "sub",
            "the sign is wrong: the slope of a - b towards b is -1",
        ),
        Bug(
            "rsub_swap", "sub",
            "the operands are swapped: 5 - v must give 5 - v.data, so __rsub__(self, other) "
            "is other - self (Value(other) - self), not self - other",
            where="__rsub__",
        ),
        Bug(
            "div_sign", "div",
            "the sign is wrong: the slope of a / b towards b is -a/b² "
            "(other.grad += -self.data / other.data**2 * out.grad)",
        ),
        Bug(
            "div_square", "div",
            "the slope of a / b towards b lacks its 1/b²: it is -a/b², a over b squared "
            "(other.grad += -self.data / other.data**2 * out.grad)",
        ),
        Bug(
            "div_numerator", "div",
            "the slope of a / b towards a is 1/b, not b: a / b is a × (1/b) "
            "(self.grad += out.grad / other.data)",
        ),
        Bug(
            "rdiv_swap", "div",
            "the operands are swapped: 2 / v must give 2 / v.data, so __rtruediv__(self, "
            "other) is other / self (Value(other) / self), not self / other",
            where="__rtruediv__",
        ),
        _missing("add", "__radd__", "+"),
        _missing("mul", "__rmul__", "*"),
        _missing("sub", "__rsub__", "-"),
        _missing("div", "__rtruediv__", "/"),
        *(_overwrite(unit) for unit in ("add", "mul", "neg", "sub", "pow", "relu", "div")),
        *(_cut(unit) for unit in ("add", "mul", "neg", "sub", "pow", "relu", "div")),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Style:
    """How the class writes ``-`` and ``/``: its own node or built from other operations."""

    neg: str = "own"  # or "mul": -a is a * -1
    sub: str = "own"  # or "add_neg": a - b is a + (-b)
    rsub: str = "own"  # or "sub": Value(c) - a; "add_neg": (-a) + c; "radd_neg": c + (-a)
    div: str = "own"  # or "pow": a / b is a * b**-1 (lesson 9's)
    rdiv: str = "div"  # Value(c) / a, with the class's /; or "rmul": c * a**-1 (lesson 9's)


CHOICES = {
    "neg": ("own", "mul"),
    "sub": ("own", "add_neg"),
    "rsub": ("own", "sub", "add_neg", "radd_neg"),
    "div": ("own", "pow"),
    "rdiv": ("div", "rmul"),
}
"""Each way of writing ``Style``'s fields, the default first."""
SHOWN_BY = {
    "neg": {"neg", "sub", "sub_const", "rsub_const"},
    "sub": {"sub", "sub_const", "rsub_const"},
    "rsub": {"rsub_const"},
    "div": {"div", "div_const", "rdiv_const"},
    "rdiv": {"rdiv_const"},
}
"""The graph ops whose nodes each of ``Style``'s fields changes."""


def styles_for(graphs: Sequence[Graph]) -> list[Style]:
    """Every way of writing the class that gives different nodes on ``graphs`` (a field
    none of their ops uses stays at its default): fewer styles to simulate."""
    drawn = {op["op"] for graph in graphs for op in graph["ops"]}
    fields = [CHOICES[f] if SHOWN_BY[f] & drawn else CHOICES[f][:1] for f in CHOICES]
    return [Style(*choice) for choice in itertools.product(*fields)]


@dataclass(frozen=True)
class Variant:
    """One way a class can be written: how ``-`` is built, and its bugs (none: a right class)."""

    style: Style = Style()
    bugs: frozenset[str] = frozenset()
    walk: str = "topo"  # "bfs", "preorder" (each node once), "repeats", "unreversed"
    overwrite_sides: frozenset[int] = frozenset({0, 1})  # self (0), other (1), or both
    relu_test: str = "le"  # relu_side written `<= 0` ("le") or `< 0` ("lt")
    div_slope: str = "b"  # div_square written -a/b ("b") or -a ("one")

    def has(self, key: str) -> bool:
        """Whether the class has the bug ``key``."""
        return key in self.bugs


# --- the class's own nodes ------------------------------------------------------------


class Node(NamedTuple):
    """One node of the class: its kind, inputs, number (constant or exponent), whether cut.
    (A named tuple: a simulation makes one for every operation of every graph it runs.)"""

    kind: str
    args: tuple[int, ...] = ()
    number: float = 0.0
    cut: bool = False


class Raises(Exception):
    """The simulated class raises (a missing reflected method)."""


def _expand(graph: Graph, variant: Variant) -> tuple[list[Node], list[int]]:
    """The class's nodes for ``graph`` (leaves first) and the node of every graph value."""
    style = variant.style
    nodes: list[Node] = [Node("leaf", (), float(v)) for v in graph["leaves"]]
    where = list(range(len(nodes)))

    def new(kind: str, args: tuple[int, ...], number: float = 0.0) -> int:
        # a method that cuts the graph cuts every node it makes, inside - too
        nodes.append(Node(kind, args, number, cut=variant.has(f"cut_{kind}")))
        return len(nodes) - 1

    def const(c: float) -> int:
        return new("leaf", (), c)

    def neg(a: int) -> int:
        return new("mul", (a, const(-1.0))) if style.neg == "mul" else new("neg", (a,))

    def sub(a: int, b: int) -> int:
        return new("add", (a, neg(b))) if style.sub == "add_neg" else new("sub", (a, b))

    def div(a: int, b: int) -> int:  # b a Value
        return new("mul", (a, new("pow", (b,), -1.0))) if style.div == "pow" else new("div", (a, b))

    def div_number(a: int, c: float) -> int:  # a / c: c**-1 is a plain number in a * c**-1
        return new("mul", (a, const(1.0 / c))) if style.div == "pow" else new("div", (a, const(c)))

    def reflected(key: str) -> None:
        if variant.has(key):
            raise Raises(key)

    for op in graph["ops"]:
        name, args = op["op"], [where[i] for i in op["args"]]
        a = args[0]
        c = float(op.get("number", 0.0))
        if name in ("add", "mul"):
            node = new(name, (a, args[1]))
        elif name == "sub":
            node = sub(a, args[1])
        elif name in ("add_const", "radd_const", "mul_const", "rmul_const"):
            if name == "radd_const":
                reflected("missing___radd__")
            if name == "rmul_const":
                reflected("missing___rmul__")
            node = new(name.split("_")[0].lstrip("r"), (a, const(c)))
        elif name == "sub_const":
            node = sub(a, const(c))
        elif name == "rsub_const":
            reflected("missing___rsub__")
            if variant.has("rsub_swap"):
                node = sub(a, const(c))
            elif style.rsub == "sub":
                node = sub(const(c), a)
            elif style.rsub in ("add_neg", "radd_neg"):
                if style.rsub == "radd_neg":
                    reflected("missing___radd__")
                node = new("add", (neg(a), const(c)))
            else:
                node = new("sub", (const(c), a))
        elif name == "div":
            node = div(a, args[1])
        elif name == "div_const":
            node = div_number(a, c)
        elif name == "rdiv_const":
            reflected("missing___rtruediv__")
            if variant.has("rdiv_swap"):
                node = div_number(a, c)
            elif style.rdiv == "rmul":  # c * a**-1: the number on the left calls __rmul__
                reflected("missing___rmul__")
                node = new("mul", (new("pow", (a,), -1.0), const(c)))
            else:
                node = div(const(c), a)
        elif name == "neg":
            node = neg(a)
        elif name == "pow":
            node = new("pow", (a,), float(op["exponent"]))
        else:
            node = new("relu", (a,))
        if variant.has(f"cut_{FAMILY[name]}"):
            nodes[node] = nodes[node]._replace(cut=True)
        where.append(node)
    return nodes, where


def _forward(nodes: Sequence[Node]) -> list[float]:
    values: list[float] = []
    for node in nodes:
        x = values[node.args[0]] if node.args else 0.0
        y = values[node.args[1]] if len(node.args) > 1 else 0.0
        values.append({
            "leaf": node.number, "add": x + y, "mul": x * y, "sub": x - y, "neg": -x,
            "div": x / y if node.kind == "div" else 0.0,
            "pow": x**node.number if node.kind == "pow" else 0.0, "relu": max(x, 0.0),
        }[node.kind])  # fmt: skip
    return values


def _relu_slope(x: float, variant: Variant) -> float:
    if variant.has("relu_side"):
        return 1.0 if (x <= 0 if variant.relu_test == "le" else x < 0) else 0.0
    if variant.has("relu_output"):
        return max(x, 0.0)
    if variant.has("relu_kink"):
        return 1.0 if x >= 0 else 0.0
    return 1.0 if x > 0 else 0.0


def _denominator_slope(x: float, y: float, variant: Variant) -> float:
    """The slope of x / y towards y the class sends: -x/y², or a classic bug's."""
    if variant.has("div_sign"):
        return x / y**2
    if variant.has("div_square"):
        return -x / y if variant.div_slope == "b" else -x
    return -x / y**2


def _slopes(node: Node, values: Sequence[float], variant: Variant) -> tuple[float, ...]:
    """The local slopes the class sends to each input of ``node``."""
    if node.cut:
        return (0.0,) * len(node.args)
    x = values[node.args[0]] if node.args else 0.0
    y = values[node.args[1]] if len(node.args) > 1 else 0.0
    n = node.number
    if node.kind == "mul":
        if variant.has("mul_factor"):
            return (1.0, 1.0)
        return (x, y) if variant.has("mul_own") else (y, x)
    if node.kind == "neg":
        return (1.0 if variant.has("neg_sign") else -1.0,)
    if node.kind == "sub":
        return (1.0, 1.0 if variant.has("sub_sign") else -1.0)
    if node.kind == "div":
        return (y if variant.has("div_numerator") else 1 / y, _denominator_slope(x, y, variant))
    if node.kind == "pow":
        if variant.has("pow_factor"):
            return (x ** (n - 1),)
        return (n * x**n,) if variant.has("pow_power") else (n * x ** (n - 1),)
    if node.kind == "relu":
        return (_relu_slope(x, variant),)
    return (1.0,) * len(node.args)


def _walk(nodes: Sequence[Node], root: int, walk: str) -> list[int]:
    """The nodes in the order the class's ``backward()`` runs their ``_backward``."""
    if walk in ("bfs", "preorder"):
        order, seen, todo = [], {root}, [root]
        while todo:
            node = todo.pop(0 if walk == "bfs" else -1)
            order.append(node)
            for child in nodes[node].args:
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
            stack.extend((child, False) for child in reversed(nodes[node].args))
        if len(topo) > 10_000:  # exponential repeats: this variant explains nothing sane
            raise OverflowError("too many repeats")
    return topo if walk == "unreversed" else topo[::-1]


Outcome = tuple[float, list[float]] | None
"""A class's output and leaf gradients on one graph, or None when it raises."""

NODE_BUGS = ("cut_", "missing___", "rsub_swap", "rdiv_swap")
"""The bugs that change the class's nodes (``_expand``); the others change only slopes."""

ARITHMETIC_FAILURES = (OverflowError, ZeroDivisionError, ValueError)
"""What a simulation's arithmetic may raise on a graph (the learner's class would too)."""

Built = tuple[list[Node], list[int], list[float]]
_shared: dict[tuple[Any, ...], tuple[Graph, Built | Exception | list[int]]] | None = None


@contextlib.contextmanager
def shared_nodes() -> Iterator[None]:
    """Meanwhile, the simulations of one graph by variants that build the same nodes (the
    same style, the same bugs in how nodes are made: they differ in slopes or the walk
    only) build, run forward and walk them once. A judging runs thousands of variants
    over the same few graphs; each graph is kept with what was built from it (the key is
    its identity), and all of it is dropped at the end."""
    global _shared
    outer, _shared = _shared, {} if _shared is None else _shared
    try:
        yield
    finally:
        _shared = outer


def _shared_work(key: tuple[Any, ...], graph: Graph, work: Callable[[], Any]) -> Any:
    """``work()``, or what it returned (or raised) for ``key`` before, while shared."""
    if _shared is None:
        return work()
    if key not in _shared:
        try:
            _shared[key] = (graph, work())
        except (Raises, *ARITHMETIC_FAILURES) as failed:
            _shared[key] = (graph, failed)
    done = _shared[key][1]
    if isinstance(done, Exception):
        raise type(done)(*done.args)
    return done


def _built(graph: Graph, variant: Variant, made_by: frozenset[str]) -> Built:
    """The class's nodes for ``graph``, the node of every graph value, and every node's value
    (``made_by``: the variant's bugs of NODE_BUGS)."""

    def build() -> Built:
        nodes, where = _expand(graph, variant)
        return nodes, where, _forward(nodes)

    built: Built = _shared_work((id(graph), variant.style, made_by), graph, build)
    return built


def simulate(graph: Graph, variant: Variant) -> Outcome:
    """The output and leaf gradients a class written as ``variant`` gives on ``graph``."""
    made_by = frozenset(bug for bug in variant.bugs if bug.startswith(NODE_BUGS))
    try:
        nodes, where, values = _built(graph, variant, made_by)
    except Raises:
        return None
    root = where[-1]
    grads = [0.0] * len(nodes)
    grads[root] = 0.0 if variant.has("no_seed") else 1.0
    order: list[int] = _shared_work(
        (id(graph), variant.style, made_by, variant.walk),
        graph,
        lambda: _walk(nodes, root, variant.walk),
    )
    overwritten = {bug[10:] for bug in variant.bugs if bug.startswith("overwrite_")}  # kinds
    for index in order:
        node = nodes[index]
        overwrite = node.kind in overwritten
        for side, (child, slope) in enumerate(
            zip(node.args, _slopes(node, values, variant), strict=True)
        ):
            share = slope * grads[index]
            if overwrite and side in variant.overwrite_sides:
                grads[child] = share
            else:
                grads[child] += share
    return values[root], grads[: len(graph["leaves"])]


# --- which bug explains the learner's numbers ----------------------------------------

WALKS = {"order": ("bfs", "preorder"), "no_visited": ("repeats",), "unreversed": ("unreversed",)}
OVERWRITTEN_SIDES = (frozenset({0, 1}), frozenset({0}), frozenset({1}))


def _with_bug(base: Variant, key: str) -> Iterator[Variant]:
    """``base`` with the bug ``key`` added, every way learners write it."""
    bugs = base.bugs | {key}
    if key in WALKS:
        for walk in WALKS[key]:
            yield replace(base, bugs=bugs, walk=walk)
    elif key.startswith("overwrite_"):  # often on one side only: self.grad = ...; other +=
        for sides in OVERWRITTEN_SIDES:
            yield replace(base, bugs=bugs, overwrite_sides=sides)
    elif key == "relu_side":
        for test in ("le", "lt"):
            yield replace(base, bugs=bugs, relu_test=test)
    elif key == "div_square":
        for slope in ("b", "one"):
            yield replace(base, bugs=bugs, div_slope=slope)
    else:
        yield replace(base, bugs=bugs)


Result = tuple[float, Sequence[float]] | None
"""The learner's numbers on one graph (None: the class raised TypeError)."""


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _same(found: Outcome, result: Result) -> bool:
    if found is None or result is None:
        return found is None and result is None
    output, grads = result
    return _close(found[0], output) and all(
        _close(g, s) for g, s in zip(grads, found[1], strict=True)
    )


def _reproduces(graphs: Sequence[Graph], results: Sequence[Result], variant: Variant) -> bool:
    for graph, result in zip(graphs, results, strict=True):
        try:
            if not _same(simulate(graph, variant), result):
                return False
        except ARITHMETIC_FAILURES:
            return False
    return True


@dataclass(frozen=True)
class Explanation:
    """A bug whose simulation gives every number the learner's class gave."""

    bug: Bug
    variant: Variant


def explain(
    graphs: Sequence[Graph], results: Sequence[Result], wrong: Sequence[int]
) -> list[Explanation]:
    """The single bugs that reproduce the learner's numbers on the graphs (``wrong``: the
    indexes of the wrong ones, read first), each with one way of writing it that fits."""
    read = [*wrong[:MOST_WRONG_READ], *(i for i in range(len(graphs)) if i not in set(wrong))]
    chosen = [graphs[i] for i in read]
    got = [results[i] for i in read]
    found: list[Explanation] = []
    styles = styles_for(chosen)
    for key, bug in BUGS.items():
        fits = (
            variant
            for style in styles
            for variant in _with_bug(Variant(style), key)
            if _reproduces(chosen, got, variant)
        )
        variant = next(fits, None)
        if variant is not None:
            found.append(Explanation(bug, variant))
    return found


def _outcome(graph: Graph, variant: Variant) -> Outcome | str:
    try:
        return simulate(graph, variant)
    except ARITHMETIC_FAILURES:
        return "overflow"


def _outcomes(graphs: Sequence[Graph], variant: Variant) -> list[Outcome | str]:
    return [_outcome(graph, variant) for graph in graphs]


def _differs(a: Outcome | str, b: Outcome | str) -> bool:
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a != b
    return not _same(a, b)


def _changes(before: Sequence[Outcome | str], graphs: Sequence[Graph], variant: Variant) -> bool:
    """Whether ``variant`` gives other numbers on ``graphs`` than ``before`` (the outcomes
    of the class it is compared with, simulated once for every variant). Graph by graph:
    the first that differs answers, and the graphs after it are not simulated."""
    return any(
        _differs(a, _outcome(graph, variant)) for a, graph in zip(before, graphs, strict=True)
    )


def observable(graphs: Sequence[Graph], unit: str, explanation: Explanation) -> bool:
    """Whether, in a class with ``explanation``'s bug, every bug of ``unit`` that would show
    on ``graphs`` in a right class still changes the numbers: then numbers without them
    show ``unit`` right despite the other bug."""
    base = explanation.variant
    right = replace(base, bugs=frozenset(), walk="topo")
    in_right, in_base = _outcomes(graphs, right), _outcomes(graphs, base)
    for key, bug in BUGS.items():
        if bug.unit != unit or key in base.bugs:
            continue
        for variant in _with_bug(base, key):
            walk = variant.walk if key in WALKS else "topo"
            mutant = replace(variant, bugs=frozenset({key}), walk=walk)
            if _changes(in_right, graphs, mutant) and not _changes(in_base, graphs, variant):
                return False
    return True
