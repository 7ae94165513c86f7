"""A formula part judged as an expression: it earns its points only when it *is* the
spec's chain, decided exactly (`exact_algebra`), never by closeness at a few numbers.

The learner's answer is rebuilt from their cells (its `byhand.Recipe`: the line that assigns
it and the helper lines it reaches) as a formula in the givens and in the earlier answers
it uses upstream in the chain, which stand as symbols (a step is judged on its own, from
the learner's earlier answers whatever they are). The spec's model answer is rebuilt the
same way, every other part written out. Both are rational functions; literals are exact
(0.1 is 1/10). The two must be equal, or equal up to a constant factor written as a
rounded decimal (0.333 for 1/3: within `REL_TOL`).

Gates and conditionals (`max`, `min`, `abs`, `a if c else b`, comparisons) are decided on
the learner's side of every branch the chain takes: a condition counts only when it is the
sign of something the chain itself tests (a given, an earlier answer, a named value of the
spec's program, the difference a spec's `max` compares), a constant multiple of it. Anything
else (`w == 4.9365`, `x > 3`) is a lookup, refused by name, as is a difference quotient (a
given or a named value shifted by a constant and divided by the step: a numerical
derivative, even where it is exact, as the central difference of a square) and `round`
of a formula. What cannot be decided (too large, `exp` where the chain has none) earns
nothing and says so.

Literals that are the learner's own numbers (`2 * (19 - 11) * 3`) are read as the names
they could be (a given, an earlier answer): when one reading is the chain, the answer is
that formula, and the verdict says how it was read.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Final, Literal, TypeGuard

from autograder.core.verdict import REL_TOL, format_value
from autograder.diagnosis.byhand_arithmetic import MATH_CALLS, MATH_FUNCTIONS
from autograder.diagnosis.exact_algebra import Rational, TooLarge

if TYPE_CHECKING:
    from autograder.core.quantities import Quantity
    from autograder.core.spec import ExerciseSpec
    from autograder.diagnosis.byhand import Recipe

Kind = Literal[
    "chain",
    "differs",
    "numerical_derivative",
    "lookup",
    "branch",
    "rounded_formula",
    "undecided",
]
CHEATS: Final = frozenset({"numerical_derivative", "lookup", "branch", "rounded_formula"})
"""Kinds that earn nothing whatever the value: not a derivation."""
NUMERIC: Final = ("forward", "local_slope", "gradient")
MAX_READINGS: Final = 256
"""Most ways of reading a learner's numbers as names that are tried (each costs one
reading of the formula, about 0.3 ms)."""
CHAIN_READINGS: Final = 32
"""Readings that are the chain gathered before the plainest is shown."""
SMALL_WHOLE: Final = 4
"""A whole number up to this may be a constant of the formula (the 2 of a square), not a
name; a larger number or a decimal that is one of the learner's is read as that name."""
NEAR_ONE: Final = Fraction(1, 10)
"""A given multiplied by a factor within this of 1 (not 1) is a shifted point (1.001·x)."""
BIG_MULTIPLIER: Final = 10
"""A multiplication by a constant this large or larger may be a division by a step (× 500
for / 0.002)."""


class Refused(Exception):
    """The formula is not a derivation, or cannot be decided: `kind` and what to say."""

    def __init__(self, kind: Kind, detail: str) -> None:
        super().__init__(detail)
        self.kind: Kind = kind
        self.detail = detail


@dataclass(frozen=True)
class Judgement:
    """What the formula is: `kind`, `detail` in the learner's terms, and for a formula read
    from the learner's numbers, how it was read (`reading`)."""

    kind: Kind
    detail: str = ""
    reading: str = ""
    ambiguous: tuple[str, ...] = ()
    """Literals that could each stand for two or more names (when no reading is the chain)."""

    @property
    def is_chain(self) -> bool:
        return self.kind == "chain"


def fraction_of(value: float | int | bool) -> Fraction:
    """A literal exactly as written: 0.1 is 1/10 (its shortest repr), never the binary float."""
    if isinstance(value, bool | int):
        return Fraction(int(value))
    return Fraction(repr(float(value)))


def _sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)


@dataclass
class _Marks:
    """What the learner's side did that a derivation does not: shifted points, divisions by a
    constant, rounding."""

    shifts: list[tuple[int, Fraction]] = field(default_factory=list)
    scales: list[tuple[int, Fraction]] = field(default_factory=list)
    divisors: list[Rational] = field(default_factory=list)
    rounded: str = ""
    lookup: str = ""
    """An equality tested on the numbers: a lookup whatever else the formula is."""
    branch: str = ""
    """A condition that is no gate of the chain: refused when the formula is the chain on
    the learner's side of it (it is not the chain on the other side)."""


class Expressions:
    """Both sides of one part as exact formulas, for one learner's numbers."""

    def __init__(
        self,
        spec: ExerciseSpec,
        part: str,
        values: Mapping[str, object],
        free: Sequence[str],
    ) -> None:
        self.spec = spec
        self.part = part
        self.free = set(free)
        self.numeric = {p.name for p in spec.parts if p.kind in NUMERIC}
        self.givens = set(spec.given_names)
        self.constants = {n: fraction_of(float(v)) for n, v in spec.constants.items()}
        self.point: dict[str, Fraction] = {}
        for name in (*spec.given_names, *self.free):
            held = values[name]
            self.point[name] = Fraction(float(held))  # type: ignore[arg-type]
        self.spec_defs: dict[str, ast.expr] = {}
        for p in spec.parts:
            if p.kind in NUMERIC:
                for line in p.code.split("\n"):
                    target, _, expression = line.partition("=")
                    self.spec_defs[target.strip()] = ast.parse(expression.strip(), mode="eval").body
        self._spec_memo: dict[str, Rational] = {}
        self._active: set[str] = set()
        self.gates: list[Rational] = [Rational.symbol(n) for n in sorted(self.point)]
        self.spec_shifts: list[tuple[Rational, Fraction]] = []
        """Where the spec's own formulas add a constant to something (c·y + 1): a learner
        writing the same is not evaluating at a shifted point."""
        for name in self.spec_defs:  # every named value, and what each max compares, is a gate
            self.gates.append(self.spec_value(name))
        self.right = self.spec_value(part)

    # --- the spec's side ---------------------------------------------------------------

    def spec_value(self, name: str) -> Rational:
        if name in self.free and name != self.part:
            return Rational.symbol(name)
        if name in self._spec_memo:
            return self._spec_memo[name]
        if name in self._active:
            raise Refused("undecided", f"the spec's {name} uses itself")
        self._active.add(name)
        try:
            value = _Converter(self, self._spec_name, _Marks(), spec_side=True).convert(
                self.spec_defs[name]
            )
        finally:
            self._active.discard(name)
        self._spec_memo[name] = value
        return value

    def _spec_name(self, name: str, node: ast.Name) -> Rational:
        del node
        if name in self.givens:
            return Rational.symbol(name)
        if name in self.constants:
            return Rational.number(self.constants[name])
        if name in self.spec_defs:
            return self.spec_value(name)
        raise Refused("undecided", f"the spec names {name}, which it never defines")

    # --- deciding a condition ------------------------------------------------------------

    def sign(self, difference: Rational, spec_side: bool, shown: str) -> int:
        """The sign of `difference` on the learner's branch; refused (a lookup, a branch the
        chain does not take) when it is not the sign of a gate."""
        constant = difference.constant()
        if constant is not None:
            return _sign(constant)
        if spec_side:
            self.gates.append(difference)
            return _sign(difference.at(self.point))
        for gate in self.gates:
            if gate.symbols() - set(self.point):
                continue
            ratio = difference.ratio(gate)
            if ratio:
                return _sign(ratio) * _sign(gate.at(self.point))
        raise Refused(
            "branch",
            f"it branches on `{shown}`, which the chain never tests: a derivation branches "
            "only where the chain does (the sign of a ReLU's input)",
        )


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


class _Converter:
    """One expression as a `Rational`, names resolved by `name`."""

    def __init__(
        self,
        world: Expressions,
        name: Callable[[str, ast.Name], Rational],
        marks: _Marks,
        spec_side: bool,
        readings: Mapping[int, str] | None = None,
        literal: Callable[[str], Rational] | None = None,
    ) -> None:
        self.world = world
        self.name = name
        self.marks = marks
        self.spec_side = spec_side
        self.readings = readings or {}
        self.literal = literal

    def convert(self, node: ast.expr) -> Rational:
        try:
            return self._convert(node)
        except ZeroDivisionError:
            raise Refused("undecided", "it divides by a formula that is 0") from None
        except TooLarge as problem:
            raise Refused("undecided", str(problem)) from None

    def _convert(self, node: ast.expr) -> Rational:
        if id(node) in self.readings and self.literal is not None:
            name = self.readings[id(node)]
            return -self.literal(name[1:]) if name.startswith("-") else self.literal(name)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, int | float):  # bool is an int
                return Rational.number(fraction_of(node.value))
            raise Refused("undecided", f"`{_shown(node)}` is not a number")
        if isinstance(node, ast.Name):
            return self.name(node.id, node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return Rational.number(int(not self.truth(node.operand)))
            inner = self._convert(node.operand)
            if isinstance(node.op, ast.USub):
                return -inner
            if isinstance(node.op, ast.UAdd):
                return inner
            raise Refused("undecided", "it uses `~`")
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.IfExp):
            return self._convert(node.body if self.truth(node.test) else node.orelse)
        if isinstance(node, ast.Compare | ast.BoolOp):
            return Rational.number(int(self.truth(node)))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Refused("undecided", f"`{_shown(node)}` is not arithmetic that can be decided")

    # --- operators ---------------------------------------------------------------------

    def binary(self, node: ast.BinOp) -> Rational:
        left, right = self._convert(node.left), self._convert(node.right)
        op = node.op
        if isinstance(op, ast.Add | ast.Sub):
            result = left + right if isinstance(op, ast.Add) else left - right
            self.note_shift(left, right, 1 if isinstance(op, ast.Add) else -1)
            return result
        if isinstance(op, ast.Mult):
            self.note_scale(left, right)
            return left * right
        if isinstance(op, ast.Div):
            if not self.spec_side:
                self.marks.divisors.append(right)
            return left / right
        if isinstance(op, ast.Pow):
            return self.power(left, right, node)
        if isinstance(op, ast.FloorDiv | ast.Mod):
            a, b = left.constant(), right.constant()
            if a is None or b is None:
                raise Refused("undecided", f"`{_shown(node)}` rounds a formula (// or %)")
            if b == 0:
                raise ZeroDivisionError
            return Rational.number(a // b if isinstance(op, ast.FloorDiv) else a % b)
        raise Refused("undecided", f"`{_shown(node)}` uses an operator that is not arithmetic")

    def power(self, base: Rational, exponent: Rational, node: ast.AST) -> Rational:
        k = exponent.constant()
        if k is None:
            raise Refused("undecided", f"`{_shown(node)}` raises to a power that is a formula")
        if k.denominator == 1:
            return base.power(int(k))
        b = base.constant()
        if b is not None and b > 0:
            return Rational.number(Fraction(repr(float(b) ** float(k))))
        return Rational.symbol(f"pow[{base.key()}]^{k}")

    def note_shift(self, left: Rational, right: Rational, sign: int) -> None:
        """A given (or a gate) moved by a constant: a shifted point, unless the spec's own
        formulas move it so (`Expressions.spec_shifts`)."""
        for moved, by, factor in ((left, right, sign), (right, left, 1)):
            step = by.constant()
            if step is None or step == 0 or moved.constant() is not None:
                continue
            if self.spec_side:
                self.world.spec_shifts.append((moved, step * factor))
                continue
            for index, gate in enumerate(self.world.gates):
                k = moved.ratio(gate)
                if k:
                    self.marks.shifts.append((index, step * factor / k))
                    break

    def note_scale(self, left: Rational, right: Rational) -> None:
        if self.spec_side:
            return
        for factor, other in ((left, right), (right, left)):
            c = factor.constant()
            if c is None or other.constant() is not None:
                continue
            if abs(c) >= BIG_MULTIPLIER:
                self.marks.divisors.append(Rational.number(1 / c))
            if c != 1 and abs(c - 1) <= NEAR_ONE:
                for index, gate in enumerate(self.world.gates):
                    k = other.ratio(gate)
                    if k:
                        self.marks.scales.append((index, c))
                        break

    # --- conditions --------------------------------------------------------------------

    def truth(self, node: ast.expr) -> bool:
        if isinstance(node, ast.BoolOp):
            values = (self.truth(v) for v in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.truth(node.operand)
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                if not self.compare(left, op, right):
                    return False
                left = right
            return True
        return self.sign(self._convert(node), _shown(node)) != 0

    def sign(self, difference: Rational, shown: str, equality: bool = False) -> int:
        """The sign of a condition's difference. One that is no gate of the chain is noted
        (`_Marks.branch`; an equality, `_Marks.lookup`) and the formula followed on the
        learner's side of it, so a wrong formula (a ReLU of the wrong input) is judged as
        the mistake it is and a difference quotient is named first."""
        try:
            return self.world.sign(difference, self.spec_side, shown)
        except Refused as refusal:
            if self.spec_side or refusal.kind != "branch":
                raise
            if difference.symbols() - set(self.world.point):
                raise Refused("undecided", f"`{shown}` cannot be decided") from None
            if equality and not self.marks.lookup:
                self.marks.lookup = (
                    f"it compares numbers for equality (`{shown}`): an answer chosen by the "
                    "numbers is a lookup table, not a derivation"
                )
            if not self.marks.branch:
                self.marks.branch = refusal.detail
            return _sign(difference.at(self.world.point))

    def compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool:
        shown = f"{_shown(left)} {_OPS.get(type(op), '?')} {_shown(right)}"
        equality = isinstance(op, ast.Eq | ast.NotEq)
        s = self.sign(self._convert(left) - self._convert(right), shown, equality)
        if isinstance(op, ast.Gt):
            return s > 0
        if isinstance(op, ast.GtE):
            return s >= 0
        if isinstance(op, ast.Lt):
            return s < 0
        if isinstance(op, ast.LtE):
            return s <= 0
        if isinstance(op, ast.Eq):
            return s == 0
        if isinstance(op, ast.NotEq):
            return s != 0
        raise Refused("undecided", f"`{shown}` is not a comparison of numbers")

    # --- calls -------------------------------------------------------------------------

    def call(self, node: ast.Call) -> Rational:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else ""
        if node.keywords or not node.args:
            raise Refused("undecided", f"`{_shown(node)}` is not a call that can be decided")
        if name in ("max", "min"):
            best = node.args[0]
            for other in node.args[1:]:
                bigger = self.compare(other, ast.Gt(), best)
                if bigger == (name == "max"):
                    best = other
            return self._convert(best)
        if name in ("abs", "math.fabs") and len(node.args) == 1:
            inner = self._convert(node.args[0])
            s = self.sign(inner, _shown(node.args[0]))
            return -inner if s < 0 else inner
        if name == "float" and len(node.args) == 1:
            return self._convert(node.args[0])
        if name in ("pow", "math.pow") and len(node.args) == 2:
            base, exponent = (self._convert(a) for a in node.args)
            return self.power(base, exponent, node)
        if name in ("round", "int") and 1 <= len(node.args) <= 2:
            inner = self._convert(node.args[0])
            value = inner.constant()
            if value is None:
                self.marks.rounded = _shown(node)
                return inner
            digits = self._convert(node.args[1]).constant() if len(node.args) == 2 else None
            if name == "int":
                return Rational.number(int(value))
            if digits is None:
                return Rational.number(round(value))
            return Rational.number(round(value, int(digits)))
        if name.startswith("math.") and name[5:] in MATH_FUNCTIONS and len(node.args) == 1:
            inner = self._convert(node.args[0])
            value = inner.constant()
            if value is None:
                return Rational.symbol(f"{name}[{inner.key()}]")
            try:
                return Rational.number(fraction_of(MATH_CALLS[name[5:]](float(value))))
            except (ValueError, OverflowError):
                raise Refused("undecided", f"`{_shown(node)}` cannot be computed") from None
        raise Refused("undecided", f"`{_shown(node)}` is not a call that can be decided")


_OPS: Final = {
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}


# --- the learner's side -------------------------------------------------------------------


def needed_steps(recipe: Recipe, stop: set[str]) -> list[int]:
    """Indices of the bindings the answer's own binding reaches, in order (not through
    the bindings of the names in `stop`)."""
    steps = recipe.steps[: recipe.length]
    marked = [len(steps) - 1]
    wanted = _names(steps[-1].source)
    for index in range(len(steps) - 2, -1, -1):
        step = steps[index]
        if step.name in wanted:
            marked.append(index)
            wanted.discard(step.name)
            if step.name not in stop:
                wanted |= _names(step.source)
    return sorted(marked)


def _names(source: object) -> set[str]:
    if not isinstance(source, ast.expr):
        return set()
    return {n.id for n in ast.walk(source) if isinstance(n, ast.Name)}


def literals(recipe: Recipe, order: Sequence[int]) -> list[tuple[ast.expr, Fraction]]:
    """The number literals of the lines in `order` with their values, a minus sign included
    (`-4`), in order; not exponents: the 2 of x**2 is the power rule's, never a name."""
    found: list[tuple[ast.expr, Fraction]] = []
    for index in order:
        source = recipe.steps[index].source
        if not isinstance(source, ast.expr):
            continue
        skip: set[int] = set()
        for node in ast.walk(source):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
                skip.add(id(node.right))
            if id(node) in skip:
                continue
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                inner = node.operand
                if isinstance(inner, ast.Constant) and _literal(inner.value):
                    skip.add(id(inner))
                    found.append((node, -fraction_of(inner.value)))
            elif isinstance(node, ast.Constant) and _literal(node.value):
                found.append((node, fraction_of(node.value)))
    return sorted(found, key=lambda item: _place(item[0]))


def _literal(value: object) -> TypeGuard[int | float]:
    """A number literal (never True or False, which are facts)."""
    return type(value) in (int, float)


def _place(node: ast.expr) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


class Learner:
    """The learner's answer as an exact formula: `formula(readings)`."""

    def __init__(self, world: Expressions, recipe: Recipe) -> None:
        self.world = world
        self.recipe = recipe
        self.steps = recipe.steps[: recipe.length]
        self.own = self.steps[-1].name
        self.pinned = world.numeric - {self.own}
        self.order = needed_steps(recipe, self.pinned)

    def formula(self, readings: Mapping[int, str] | None = None) -> tuple[Rational, _Marks]:
        marks = _Marks()
        env: dict[str, Rational] = {}

        def name(n: str, node: ast.Name) -> Rational:
            del node
            if n in env:
                return env[n]
            return self.part(n)

        converter = _Converter(self.world, name, marks, False, readings, self.part)
        value = Rational.number(0)
        for index in self.order:
            step = self.steps[index]
            last = index == len(self.steps) - 1
            if step.name in self.pinned and not last:
                continue
            if isinstance(step.source, str):
                value = self.given(step.source)
            elif isinstance(step.source, ast.expr):
                value = converter.convert(step.source)
            else:
                env.pop(step.name, None)
                continue
            env[step.name] = value
        return value, marks

    def given(self, name: str) -> Rational:
        if name in self.world.givens:
            return Rational.symbol(name)
        if name in self.world.constants:
            return Rational.number(self.world.constants[name])
        raise Refused("undecided", f"`{name}` is not one of your givens")

    def part(self, name: str) -> Rational:
        if name in self.pinned:
            return self.world.spec_value(name)
        if name in self.world.givens:
            return Rational.symbol(name)
        raise Refused("undecided", f"it uses `{name}`, which no line before it assigns")


def _decimals(value: Fraction) -> int:
    """How many decimals a literal was written with (19 → 0, 4.94 → 2)."""
    digits = 0
    while value.denominator != 1 and digits < 20:
        value *= 10
        digits += 1
    return digits


def candidates(value: Fraction, named: Mapping[str, float]) -> list[str]:
    """The names (givens, earlier answers) a literal is, as written: 19 for a = 19.0; 5 for
    b = -5 is `-b`; 4.94 is not w = 4.9365 (w is 4.94 only rounded)."""
    digits = _decimals(value)
    same, opposite = [], []
    for name, held in named.items():
        if not math.isfinite(held) or round(held, digits) != held:
            continue
        exact = Fraction(repr(held))
        if exact == value:
            same.append(name)
        elif exact == -value and value:
            opposite.append(f"-{name}")
    return same + opposite


def _readings(
    nodes: Sequence[tuple[ast.expr, Fraction]], named: Mapping[str, float]
) -> tuple[Iterator[dict[int, str]], dict[str, list[str]], bool]:
    """The ways of reading the literals as names (lazily, the fewest small whole numbers read
    as names first: 2 · (9 − 11) · 7 keeps its 2); the literals that could be two names or
    more; and whether every literal that is no small whole number could be a name."""
    options: dict[Fraction, list[str | None]] = {}
    ambiguous: dict[str, list[str]] = {}
    every = True
    for value in dict.fromkeys(v for _, v in nodes):
        names = candidates(value, named)
        small = value.denominator == 1 and abs(value) <= SMALL_WHOLE
        every = every and (bool(names) or small)
        options[value] = [None, *names] if small or not names else list(names)
        if len(names) > 1:
            ambiguous[format_value(float(value))] = names
    return _each_reading(nodes, options), ambiguous, every


def _each_reading(
    nodes: Sequence[tuple[ast.expr, Fraction]], options: Mapping[Fraction, list[str | None]]
) -> Iterator[dict[int, str]]:
    small = [i for i, (_, value) in enumerate(nodes) if None in options[value]]
    for count in range(len(small) + 1):
        for chosen in itertools.combinations(reversed(small), count):  # the earliest kept first
            picks = [
                [c for c in options[value] if c is not None]
                if i in chosen
                else [None]
                if i in small
                else options[value]
                for i, (_, value) in enumerate(nodes)
            ]
            for choice in itertools.product(*picks):
                reading = {id(nodes[i][0]): c for i, c in enumerate(choice) if c is not None}
                if reading:
                    yield reading


def _as_read(recipe: Recipe, order: Sequence[int], reading: Mapping[int, str]) -> str:
    """The lines that hold a literal read as a name, with the name written in (`a` for 19)."""
    shown = []
    for index in order:
        step = recipe.steps[index]
        if not isinstance(step.source, ast.expr):
            continue
        copy = deepcopy(step.source)
        named = {
            id(twin): reading[id(original)]
            for original, twin in zip(ast.walk(step.source), ast.walk(copy), strict=True)
            if id(original) in reading
        }
        if named:
            shown.append(f"{step.name} = {ast.unparse(_Named(named).visit(copy))}")
    return "; ".join(shown)


class _Named(ast.NodeTransformer):
    """Literals replaced by the names they were read as (by node identity)."""

    def __init__(self, named: Mapping[int, str]) -> None:
        self.named = named

    def visit(self, node: ast.AST) -> ast.AST:
        if id(node) in self.named:
            name = self.named[id(node)]
            if name.startswith("-"):
                return ast.UnaryOp(ast.USub(), ast.Name(name[1:], ast.Load()))
            return ast.Name(name, ast.Load())
        visited: ast.AST = super().visit(node)
        return visited


def _verdict_of(world: Expressions, mine: Rational, marks: _Marks) -> Judgement:
    """What `mine` is against the spec's chain, with what the learner's side did."""
    derivative = numerical_derivative(world, marks)
    if derivative:
        return Judgement("numerical_derivative", derivative)
    if marks.lookup:
        return Judgement("lookup", marks.lookup)
    same = mine.equals(world.right)
    if not same:
        ratio = mine.ratio(world.right)
        same = ratio is not None and ratio != 0 and abs(ratio - 1) <= Fraction(REL_TOL)
    if same and marks.branch:
        return Judgement("branch", marks.branch)
    if same and marks.rounded:
        return Judgement(
            "rounded_formula",
            f"`{marks.rounded}` rounds a formula: what it gives is a number near the chain, "
            "not the chain; write the arithmetic without round() or int()",
        )
    if same:
        return Judgement("chain")
    if mine.symbols() - world.givens - world.free - set(world.constants):
        return Judgement(
            "undecided",
            "it uses a function the chain does not (such as exp or sqrt), so it cannot be "
            "decided whether it is the chain",
        )
    return Judgement("differs")


def numerical_derivative(world: Expressions, marks: _Marks) -> str:
    """How the learner's side computed a difference quotient, or ""."""

    def named(index: int) -> str:
        gate = world.gates[index]
        symbols = sorted(gate.symbols())
        return (
            symbols[0]
            if len(symbols) == 1 and gate.equals(Rational.symbol(symbols[0]))
            else "a value of the chain"
        )

    def the_specs(index: int, step: Fraction) -> bool:
        for moved, by in world.spec_shifts:
            ratio = moved.ratio(world.gates[index])
            if ratio and by / ratio == step:
                return True
        return False

    by_base: dict[int, set[Fraction]] = {}
    for index, step in marks.shifts:
        if not the_specs(index, step):
            by_base.setdefault(index, {Fraction(0)}).add(step)
    for index, steps in by_base.items():
        sizes = {abs(a - b) for a in steps for b in steps if a != b}
        for divisor in marks.divisors:
            d = divisor.constant()
            if d is not None and abs(d) in sizes:
                shift = next(s for s in steps if s)
                return (
                    f"it computes at {named(index)} {'+' if shift > 0 else '-'} "
                    f"{format_value(float(abs(shift)))} and divides by the step "
                    f"{format_value(float(abs(d)))}: a numerical derivative (a difference "
                    "quotient), not the chain rule"
                )
    by_scale: dict[int, set[Fraction]] = {}
    for index, factor in marks.scales:
        by_scale.setdefault(index, {Fraction(1)}).add(factor)
    for index, factors in by_scale.items():
        sizes = {abs(a - b) for a in factors for b in factors if a != b}
        for divisor in marks.divisors:
            k = divisor.ratio(world.gates[index])
            if k and abs(k) in sizes:
                return (
                    f"it computes at {named(index)} times numbers near 1 and divides by the "
                    "difference: a numerical derivative (a difference quotient), not the chain rule"
                )
    return ""


def judge_formula(
    q: Quantity,
    recipe: Recipe,
    free: Sequence[str],
    named: Mapping[str, float],
    read_numbers: bool = True,
) -> Judgement:
    """What the learner's formula for `q` (its `recipe`) is against the chain. `free`: the
    earlier answers it uses upstream in the chain (symbols on both sides); `named`: the
    values a literal could stand for (the learner's givens and earlier answers), read as
    those names when `read_numbers` (pointless where the value is wrong: a reading keeps
    the value)."""
    spec = q.spec
    assert spec is not None and q.part is not None
    try:
        world = Expressions(spec, q.name, q.values, free)
    except Refused as refusal:
        return Judgement("undecided", refusal.detail)
    learner = Learner(world, recipe)
    try:
        mine, marks = learner.formula()
        judged = _verdict_of(world, mine, marks)
    except Refused as refusal:
        judged = Judgement(refusal.kind, refusal.detail)
    own = recipe.steps[recipe.length - 1].source
    if isinstance(own, ast.UnaryOp):
        own = own.operand
    if judged.kind in CHEATS or judged.is_chain or isinstance(own, ast.Constant):
        return judged  # a lone number has no arithmetic to read as names
    if not read_numbers:
        return judged
    nodes = literals(recipe, learner.order)
    readings, ambiguous, every = _readings(nodes, named)
    chains: list[dict[int, str]] = []
    for reading in itertools.islice(readings, MAX_READINGS):
        try:
            mine, marks = learner.formula(reading)
        except Refused as refusal:
            if refusal.kind in CHEATS:
                return Judgement(refusal.kind, refusal.detail)
            continue
        read = _verdict_of(world, mine, marks)
        if read.kind in CHEATS:
            return read
        if read.is_chain:
            chains.append(reading)
            if len(chains) == CHAIN_READINGS:
                break
    if chains:  # the plainest to show: fewest names with a minus sign, then fewest names
        best = min(chains, key=lambda r: (sum(n.startswith("-") for n in r.values()), len(r)))
        return Judgement("chain", reading=_as_read(recipe, learner.order, best))
    shown = tuple(
        f"{number} could be {' or '.join(f'`{n}`' for n in names)}"
        for number, names in ambiguous.items()
    )
    return Judgement(judged.kind, judged.detail, ambiguous=shown if every else ())


def readable_names(q: Quantity, answers: Mapping[str, object]) -> dict[str, float]:
    """What a literal in the answer to `q` may stand for: the learner's givens, and every
    earlier numeric part (the learner's own number where they wrote one, else PyTorch's)."""
    spec = q.spec
    assert spec is not None
    named = {n: float(q.values[n]) for n in spec.given_names}  # type: ignore[arg-type]
    order = [p.name for p in spec.parts]
    earlier = [p for p in spec.parts[: order.index(q.name)] if p.kind in NUMERIC]
    for p in reversed(earlier):
        mine = answers.get(p.name)
        held = mine if type(mine) in (int, float) else q.values.get(p.name)
        if type(held) in (int, float):
            named[p.name] = float(held)  # type: ignore[arg-type]
    return named
