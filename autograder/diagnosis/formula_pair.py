"""The learner's formula and the spec's, side by side, for one part: what each name means,
the value of any expression near the learner's numbers, and its SymPy form.

The learner's lines are read from their cells' text (`autograder.diagnosis.byhand`), never
run: the part's own line and the helper lines it reaches (`h = w * x + b`), each capped in
size (`MAX_NODES`, `MAX_TOTAL_NODES`, `MAX_HELPERS`). The spec's formula is each part's
model answer, earlier parts expanded. A `max` (a ReLU) is taken on the branch the learner's
numbers select, so "the same formula" means the same where the learner's numbers are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from autograder.diagnosis.byhand import GIVEN_DETAIL

if TYPE_CHECKING:
    from autograder.core.quantities import Quantity
    from autograder.core.spec import ExerciseSpec, Factor, Part
    from autograder.diagnosis.byhand import HandAnswer

MAX_NODES: Final = 60
"""Largest learner expression (ast nodes) whose formula is read; larger: numbers only."""
MAX_TOTAL_NODES: Final = 200
"""Largest learner formula with its helper lines expanded."""
MAX_HELPERS: Final = 8
MAX_EXPONENT: Final = 8
NUMERIC: Final = ("forward", "local_slope", "gradient")
DERIVATIVES: Final = ("local_slope", "gradient")
CALLS: Final = frozenset({"max", "min", "abs", "float"})
STRUCTURAL: Final = (0.0, 1.0, 2.0)
"""Numbers a formula may hold without being a copied value (a slope 1, a square's 2)."""
_OFFSETS: Final = (0.0123, -0.0211, 0.0317, -0.0097, 0.0173, -0.0269, 0.0229, -0.0151)
IDENTITY_RTOL: Final = 1e-9


class Unreadable(Exception):
    """The formula cannot be read (too big, an unsupported operation, a cycle)."""


def _size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


def parse_line(text: str) -> ast.expr:
    if len(text) > 400 or text.endswith("..."):
        raise Unreadable("truncated")
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as problem:
        raise Unreadable("unreadable") from problem
    if _size(node) > MAX_NODES:
        raise Unreadable("too long")
    return node


def src(node: ast.AST) -> str:
    return ast.unparse(node)


class Formulas:
    """The learner's numbers, the spec's formulas and the learner's own lines, for one part."""

    def __init__(
        self,
        q: Quantity,
        written: Mapping[str, HandAnswer],
        answers: Mapping[str, object],
    ) -> None:
        spec, part = q.spec, q.part
        if spec is None or part is None:
            raise Unreadable("no spec")
        self.spec: ExerciseSpec = spec
        self.part: Part = part
        self.q = q
        names = [*spec.given_names, *spec.constants]
        self.point = {n: float(q.values[n]) for n in names}  # type: ignore[arg-type]
        self.givens = tuple(spec.given_names)
        self.spec_defs: dict[str, ast.expr] = {}
        self.spec_order: list[str] = []
        for p in spec.parts:
            if p.kind not in NUMERIC:
                continue
            for line in p.code.split("\n"):
                target, _, expr = line.partition("=")
                name = target.strip()
                self.spec_defs[name] = ast.parse(expr.strip(), mode="eval").body
                self.spec_order.append(name)
        answer = written.get(part.name)
        if answer is None or answer.status != "number":
            raise Unreadable("no formula")
        self.expr = parse_line(answer.detail)
        self.learner_defs: dict[str, ast.expr] = {}
        self._collect(self.expr, written, 0)
        self.answers = answers
        self.points = [self.point, *self._nearby(3)]
        self.pins: list[dict[str, float]] = [{} for _ in self.points]
        """Earlier parts the learner's formula uses, at their free values, per point."""
        self._fresh(answer)
        self.pinning = True
        """False: every part at its spec value (see `consistent`)."""
        self._spec_memo: dict[tuple[str, int, bool], float] = {}
        self._base_memo: dict[tuple[int, bool], dict[str, float]] = {}
        """The learner's own helpers' values, per point (for edits of other lines)."""

    def _collect(self, node: ast.expr, written: Mapping[str, HandAnswer], depth: int) -> None:
        """The learner's helper lines the expression reaches (not parts, not givens)."""
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Name) or sub.id in self.learner_defs:
                continue
            if sub.id in CALLS:
                continue
            name = sub.id
            if name in self.spec_defs and name in self.spec.part_names:
                continue
            held = written.get(name)
            if held is None or held.status != "number":
                if name in self.point or name in self.spec_defs:
                    continue
                raise Unreadable(f"unknown name {name}")
            if held.detail.startswith(GIVEN_DETAIL):
                alias = held.detail.removeprefix(GIVEN_DETAIL)
                if alias != name:
                    self.learner_defs[name] = ast.Name(alias, ast.Load())
                continue
            if name in self.point and held.value == self.point[name]:
                continue
            if depth >= MAX_HELPERS or len(self.learner_defs) >= MAX_HELPERS:
                raise Unreadable("too many helpers")
            self.learner_defs[name] = parse_line(held.detail)
            self._collect(self.learner_defs[name], written, depth + 1)
        if sum(_size(d) for d in self.learner_defs.values()) + _size(self.expr) > MAX_TOTAL_NODES:
            raise Unreadable("too long")

    def _fresh(self, answer: HandAnswer) -> None:
        """The points: the learner's numbers and the fresh draws that keep every branch,
        with the earlier answers the formula uses free (`autograder.diagnosis.fresh_points`);
        the nearby points when there are none (an answer read without its recipe)."""
        from autograder.diagnosis.fresh_points import points

        fresh = points(self.q, answer)
        if not fresh:
            return
        self.points = [self.point]
        self.pins = [{}]
        for p in fresh:
            self.points.append({n: float(p.draw.givens.get(n, v)) for n, v in self.point.items()})
            self.pins.append(dict(p.pinned))

    def _nearby(self, count: int) -> list[dict[str, float]]:
        """Points near the learner's numbers (same ReLU branches), fixed for determinism."""
        result = []
        for k in range(count):
            moved = dict(self.point)
            for i, name in enumerate(self.givens):
                shift = _OFFSETS[(i + 3 * k) % len(_OFFSETS)] * (1 + k) / 3
                moved[name] = self.point[name] * (1 + shift) + shift / 10
            result.append(moved)
        return result

    # --- numbers -------------------------------------------------------------------------

    @contextmanager
    def consistent(self) -> Iterator[None]:
        """Meanwhile, no part is free: a whole formula compared as a function of the givens
        (another quantity, a known mistake), not as a step from earlier answers."""
        self.pinning = False
        try:
            yield
        finally:
            self.pinning = True

    def spec_value(self, name: str, at: int) -> float:
        key = (name, at, self.pinning)
        pinned = self.pins[at].get(name) if self.pinning else None
        if pinned is not None:
            return pinned
        if key not in self._spec_memo:
            self._spec_memo[key] = self.number(self.spec_defs[name], at, {}, spec_side=True)
        return self._spec_memo[key]

    def number(
        self, node: ast.expr, at: int, lines: Mapping[str, ast.expr], spec_side: bool = False
    ) -> float:
        """The value of `node` at point `at`; `lines` are the learner's (edited) helpers.
        Each helper is computed once per call; a helper that reaches itself is unreadable."""
        base = lines is self.learner_defs and not spec_side
        memo: dict[str, float] = self._base_memo.setdefault((at, self.pinning), {}) if base else {}
        active: set[str] = set()

        def name(n: str) -> float:
            if not spec_side and n in lines:
                if n not in memo:
                    if n in active:
                        raise Unreadable(f"{n} uses itself")
                    active.add(n)
                    memo[n] = evaluate(lines[n], name)
                    active.discard(n)
                return memo[n]
            if n in self.point:
                return self.points[at][n]
            if n in self.spec_defs:
                return self.spec_value(n, at)
            raise Unreadable(f"unknown name {n}")

        return evaluate(node, name)

    def right(self, at: int) -> float:
        return self.spec_value(self.part.name, at)


def without(lines: Mapping[str, ast.expr], name: str) -> Mapping[str, ast.expr]:
    """`lines` without `name`: a helper cannot use itself (no cycles)."""
    return {k: v for k, v in lines.items() if k != name}


def number_in(node: ast.AST) -> float | None:
    """The number a literal holds (None if `node` is not a number literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else float(node.value)
    return None


def evaluate(node: ast.expr, name: Callable[[str], float]) -> float:
    """The value of plain arithmetic `node`; `name` gives each name's value."""
    literal = number_in(node)
    if literal is not None:
        return literal
    if isinstance(node, ast.Name):
        return name(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = evaluate(node.operand, name)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = evaluate(node.left, name), evaluate(node.right, name)
        op = node.op
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            if right == 0:
                raise Unreadable("division by zero")
            return left / right
        if isinstance(op, ast.Pow):
            if not float(right).is_integer() or abs(right) > MAX_EXPONENT:
                raise Unreadable("exponent")
            if left == 0 and right < 0:
                raise Unreadable("division by zero")
            return float(left**right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [evaluate(a, name) for a in node.args]
        if node.func.id in ("max", "min") and len(args) >= 2:
            return max(args) if node.func.id == "max" else min(args)
        if node.func.id == "abs" and len(args) == 1:
            return abs(args[0])
        if node.func.id == "float" and len(args) == 1:
            return args[0]
    raise Unreadable("not plain arithmetic")


# --- SymPy: the confirmation ---------------------------------------------------------------


def sympy_expr(
    world: Formulas, node: ast.expr, lines: Mapping[str, ast.expr], spec_side: bool
) -> Any:
    """`node` as a SymPy expression over the givens; each max/min on the learner's branch."""
    import sympy

    def convert(n: ast.expr, lines: Mapping[str, ast.expr], spec_side: bool) -> Any:
        if isinstance(n, ast.Constant) and type(n.value) in (int, float):
            return (
                sympy.Rational(repr(n.value)) if type(n.value) is float else sympy.Integer(n.value)
            )
        if isinstance(n, ast.Name):
            if not spec_side and n.id in lines:
                return convert(lines[n.id], without(lines, n.id), False)
            if n.id in world.givens:
                return sympy.Symbol(n.id)
            if n.id in world.point:
                return sympy.Rational(repr(world.point[n.id]))
            return convert(world.spec_defs[n.id], {}, True)
        if isinstance(n, ast.UnaryOp):
            inner = convert(n.operand, lines, spec_side)
            return -inner if isinstance(n.op, ast.USub) else inner
        if isinstance(n, ast.BinOp):
            left, right = convert(n.left, lines, spec_side), convert(n.right, lines, spec_side)
            ops: dict[type, Callable[[Any, Any], Any]] = {
                ast.Add: lambda a, b: a + b,
                ast.Sub: lambda a, b: a - b,
                ast.Mult: lambda a, b: a * b,
                ast.Div: lambda a, b: a / b,
                ast.Pow: lambda a, b: a**b,
            }
            return ops[type(n.op)](left, right)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            if n.func.id == "float":
                return convert(n.args[0], lines, spec_side)
            values = [world.number(a, 0, lines, spec_side) for a in n.args]
            if n.func.id == "abs":
                inner = convert(n.args[0], lines, spec_side)
                return inner if values[0] >= 0 else -inner
            pick = max if n.func.id == "max" else min
            chosen = values.index(pick(values))
            return convert(n.args[chosen], lines, spec_side)
        raise Unreadable("not plain arithmetic")

    return convert(node, lines, spec_side)


def gap_to_spec(world: Formulas, top: ast.expr, lines: Mapping[str, ast.expr]) -> tuple[Any, Any]:
    """(the learner's `top`, with `lines`, minus the spec's formula for the part, simplified;
    the spec's formula), as SymPy expressions over the givens."""
    import sympy

    mine = sympy_expr(world, top, lines, False)
    right = sympy_expr(world, world.spec_defs[world.part.name], {}, True)
    return sympy.cancel(sympy.together(mine - right)), right


def flat_factors(spec: ExerciseSpec, part: Part) -> list[Factor]:
    """The part's chain with every earlier part expanded into its own factors."""
    result: list[Factor] = []
    for factor in part.factors:
        if factor.role == "upstream":
            earlier = spec.part(factor.expr)
            if earlier.factors:
                result.extend(flat_factors(spec, earlier))
                continue
        result.append(factor)
    return result
