"""The single edits of a learner's lines that feedback tries, each with what it would mean:
a sign flipped, `+` for `*` (and back), a factor inserted or dropped, one name for another
or two exchanged, a term added, a square, a ReLU or the power rule applied, `/ 2` dropped,
a copied lesson number replaced; and whole formulas the learner may have written instead
(the spec's known mistakes, another part, the forward value).

Tiers (lower is tried first): 0 the spec's known mistakes; 1 one-token edits and "that is
the forward value"; 2 insertions, deletions and wrappings; 3 "that is another quantity".

Why over 400 lines: one catalogue, every edit next to the words that name it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple

from autograder.core.verdict import format_value
from autograder.diagnosis.formula_pair import (
    DERIVATIVES,
    MAX_EXPONENT,
    NUMERIC,
    Formulas,
    Unreadable,
    flat_factors,
    number_in,
    src,
    without,
)


@dataclass(frozen=True)
class Edit:
    """One edit of a learner line: which line, the edited expression, what it means."""

    line: str
    """The name the line assigns (the part itself or a helper)."""
    expr: ast.expr
    reason: str
    why: str
    tier: int
    identity: bool = False
    """True: the learner's formula *is* `expr` (another quantity, a known mistake); False:
    `expr` is the learner's line edited, and it is right."""


class _Try(NamedTuple):
    """An edit to try at one spot: the new subexpression and what it would mean."""

    expr: ast.expr
    reason: str
    why: str
    tier: int


# --- the edits -----------------------------------------------------------------------------

MOST_TIMES_A_LESSON_NUMBER = 4
"""A number read as the lesson's given times a whole factor (4 = 2 × the lesson's c = 2)
up to this factor: the factors a chain rule puts in front (2 of a square, 3 of a cube)."""


def _multiple_of(number: float, lesson: float) -> int | None:
    """`k` when `number` is `k` × `lesson`, for a whole 2 ≤ k ≤ MOST_TIMES_A_LESSON_NUMBER."""
    if lesson in (0.0, 1.0, -1.0):  # 0 and ±1 times anything: no certainty whose number
        return None
    times = number / lesson
    if times == round(times) and 2 <= times <= MOST_TIMES_A_LESSON_NUMBER:
        return int(times)
    return None


def _paths(
    node: ast.AST, path: tuple[tuple[str, int | None], ...] = ()
) -> Iterator[tuple[tuple[tuple[str, int | None], ...], ast.expr]]:
    """(path, subexpression) for every subexpression, the whole first."""
    if isinstance(node, ast.expr):
        yield path, node
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            yield from _paths(value, (*path, (field, None)))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.expr):
                    yield from _paths(item, (*path, (field, i)))


def _replace(node: ast.expr, path: tuple[tuple[str, int | None], ...], new: ast.expr) -> ast.expr:
    """A copy of `node` with the subexpression at `path` replaced (other subtrees shared)."""
    if not path:
        return new
    (field, index), rest = path[0], path[1:]
    clone = type(node)(**{f: getattr(node, f) for f in node._fields})
    child = getattr(node, field)
    if index is None:
        setattr(clone, field, _replace(child, rest, new))
    else:
        items = list(child)
        items[index] = _replace(items[index], rest, new)
        setattr(clone, field, items)
    return clone


def _same_name(a: ast.expr, b: ast.expr) -> bool:
    return isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id


def _is_one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1


def _one_and_name(left: ast.expr, right: ast.expr) -> bool:
    """`c + 1`: a slope and the 1 of a + node, added where they multiply."""
    return (_is_one(left) and isinstance(right, ast.Name)) or (
        _is_one(right) and isinstance(left, ast.Name)
    )


def _paren(node: ast.expr) -> str:
    text = src(node)
    return f"({text})" if isinstance(node, ast.BinOp | ast.UnaryOp) else text


def _num(value: float) -> ast.expr:
    return ast.Constant(int(value) if float(value).is_integer() else value)


_SIGN: Final = {ast.Add: "+", ast.Sub: "−"}


class Catalogue:
    """Every single edit of the learner's lines, each with its reason and explanation."""

    def __init__(self, world: Formulas) -> None:
        self.world = world
        spec, part = world.spec, world.part
        self.derivative = part.kind in DERIVATIVES
        before = spec.part_names[: spec.part_names.index(part.name)]
        self.earlier = [n for n in world.spec_order if n in before or n not in spec.part_names]
        self.fixed_slopes = [
            n
            for n in self.earlier
            if n in spec.part_names and spec.part(n).kind == "local_slope" and not self._varies(n)
        ]
        """Earlier local slopes the branches fix (dh/db = 1): no name to swap in for a given,
        but the slope a learner meant when they wrote another slope's name (dh_dw)."""
        self.earlier = [n for n in self.earlier if n != part.name and self._varies(n)]
        self.factors = self._factors()
        self.relu = any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "max"
            for d in world.spec_defs.values()
            for n in ast.walk(d)
        )

    def _given(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.world.spec.given_names

    def _exchanges(self, line: str, expr: ast.expr) -> Iterator[_Try]:
        """Two names of the line exchanged (`w * b + x` for `w * x + b`)."""
        spots = [(p, n) for p, n in _paths(expr) if isinstance(n, ast.Name)]
        for i, (p1, n1) in enumerate(spots):
            for p2, n2 in spots[i + 1 :]:
                assert isinstance(n1, ast.Name) and isinstance(n2, ast.Name)
                if n1.id == n2.id or p1[:-1] == p2[:-1]:
                    continue  # one operation's two sides: the sign, named elsewhere
                swapped = _replace(_replace(expr, p1, n2), p2, n1)
                reason = "given_swap" if self._given(n1) and self._given(n2) else "wrong_quantity"
                yield _Try(swapped, reason, f"`{n1.id}` and `{n2.id}` are in each other's place", 1)

    def _varies(self, name: str) -> bool:
        """A spec quantity that is not a fixed number (the 1.0 of dh/db is no name to swap in)."""
        try:
            return len({round(self.world.spec_value(name, k), 12) for k in range(3)}) > 1
        except Unreadable:
            return False

    def _factors(self) -> list[tuple[ast.expr, str, str]]:
        """(factor, reason, how to name it) that may be missing from a product."""
        spec, part = self.world.spec, self.world.part
        found: list[tuple[ast.expr, str, str]] = []
        for g in spec.given_names:
            reason = "given_missing"
            if part.kind == "forward" and any(w in g for w in ("step", "lr", "rate")):
                reason = "rate_forgotten"
            found.append((ast.Name(g, ast.Load()), reason, f"the factor {g}"))
        for f in flat_factors(spec, part):
            if f.role in ("slope", "calls", "value") and f.expr not in ("1", "1.0"):
                reason = {"slope": "slope_missing", "calls": "calls_missing"}.get(
                    f.role, "factor_missing"
                )
                what = {
                    "slope": f"the factor {f.expr}, {f.label},",
                    "calls": f"the factor {f.expr} ({f.label} add up in .grad)",
                }.get(f.role, f"the factor ({f.expr})")
                found.append((ast.parse(f.expr, mode="eval").body, reason, what))
        for n in self.earlier:
            found.append((ast.Name(n, ast.Load()), "factor_missing", f"the factor {n}"))
        for k in (2, 3):
            found.append((ast.Constant(k), "factor_missing", f"a factor {k}"))
        return found

    def lines(self) -> Iterator[tuple[str, ast.expr]]:
        yield self.world.part.name, self.world.expr
        yield from self.world.learner_defs.items()

    def edits(self) -> Iterator[Edit]:
        for line, expr in self.lines():
            used = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
            for path, node in _paths(expr):
                for new, reason, why, tier in self._at(line, node, path == (), used):
                    yield Edit(line, _replace(expr, path, new), reason, why, tier)

    def _at(self, line: str, node: ast.expr, whole: bool, used: set[str]) -> Iterator[_Try]:
        world, derivative = self.world, self.derivative
        here = f"`{src(node)}`"
        if isinstance(node, ast.BinOp):
            left, right, op = node.left, node.right, node.op
            if isinstance(op, ast.Add | ast.Sub) and not (
                self._number_only(left) and self._number_only(right)
            ):  # a sum of numbers is one number the learner counted: no term to blame
                flipped: ast.operator = ast.Sub() if isinstance(op, ast.Add) else ast.Add()
                sign = _SIGN[type(flipped)]
                why = f"`{src(right)}` enters {line} with {sign}, not {_SIGN[type(op)]}"
                yield _Try(ast.BinOp(left, flipped, right), "sign", why, 1)
                constant = not any(
                    isinstance(n, ast.Name) and n.id == (world.part.of[1:] or ("",))[0]
                    for n in ast.walk(right)
                ) and all(self._given(n) for n in ast.walk(right) if isinstance(n, ast.Name))
                reason = "constant_kept" if derivative and constant else "extra_term"
                why = (
                    f"`{src(right)}` is a constant term: its slope is 0, so it drops out of "
                    "the derivative"
                    if reason == "constant_kept"
                    else f"the term `{src(right)}` does not belong in {line}"
                )
                slopes_added = isinstance(op, ast.Add) and _one_and_name(left, right)
                if not slopes_added:
                    yield _Try(left, reason, why, 2)
                if isinstance(op, ast.Add) and not slopes_added:
                    yield _Try(
                        right, "extra_term", f"the term `{src(left)}` does not belong in {line}", 2
                    )
            if isinstance(op, ast.Add) and (
                _one_and_name(left, right) or not _is_one(left) and not _is_one(right)
            ):
                yield _Try(
                    ast.BinOp(left, ast.Mult(), right),
                    "sum_for_product",
                    (
                        f"{here} adds what multiplies: "
                        + ("local slopes on the way back multiply, " if derivative else "")
                        + f"`{src(left)} * {src(right)}`"
                    ),
                    1,
                )
            constants = isinstance(left, ast.Constant) or isinstance(right, ast.Constant)
            if isinstance(op, ast.Mult) and not constants:
                yield _Try(
                    ast.BinOp(left, ast.Add(), right),
                    "product_for_sum",
                    (
                        f"{here} multiplies what adds up: the shares of two paths add, "
                        f"`{src(left)} + {src(right)}`"
                    ),
                    1,
                )
            if isinstance(op, ast.Mult):
                for kept, given in ((left, right), (right, left)):
                    if self._given(given):
                        yield _Try(
                            ast.BinOp(kept, ast.Div(), given),
                            "times_for_divide",
                            f"{here} multiplies by `{src(given)}` where it divides",
                            1,
                        )
            if isinstance(op, ast.Mult):
                for base, two in ((left, right), (right, left)):
                    if isinstance(two, ast.Constant) and two.value == 2:
                        yield _Try(
                            ast.BinOp(base, ast.Pow(), two),
                            "doubled_not_squared",
                            (f"{here} doubles; the square is `{_paren(base)} ** 2`"),
                            1,
                        )
                for kept, dropped in ((left, right), (right, left)):
                    named = self._dropped(dropped)
                    if named is not None and not (
                        isinstance(dropped, ast.Constant) and dropped.value == 0
                    ):
                        yield _Try(kept, *named, 2)
            if isinstance(op, ast.Div):
                yield _Try(
                    ast.BinOp(left, ast.Mult(), right),
                    "divided",
                    (f"{here} divides by `{src(right)}` where it multiplies"),
                    1,
                )
                if isinstance(right, ast.Constant) and right.value == 2 and not derivative:
                    yield _Try(
                        left,
                        "half_mse",
                        (
                            f"`/ 2` is the habit of MSE/2; this loss is the square itself, "
                            f"`{src(left)}`"
                        ),
                        1,
                    )
                else:
                    yield _Try(left, "extra_factor", f"`/ {src(right)}` does not belong", 2)
            n = number_in(right) if isinstance(op, ast.Pow) else None
            if n is not None:
                if n.is_integer() and 1 < abs(n) <= MAX_EXPONENT:
                    rule = ast.BinOp(_num(n), ast.Mult(), ast.BinOp(left, ast.Pow(), _num(n - 1)))
                    lower = _paren(left) + ("" if n == 2 else f" ** {n - 1:g}")
                    yield _Try(
                        rule,
                        "power_rule",
                        (
                            f"the slope of {here} is {n:g} × {lower}: the exponent comes down as a "
                            "factor and drops by one"
                        ),
                        2,
                    )
                    for m in (n - 1, n + 1):
                        yield _Try(
                            ast.BinOp(left, ast.Pow(), _num(m)),
                            "wrong_power",
                            (f"{here} has the power {n:g}; it is {m:g} here"),
                            1,
                        )
                yield _Try(left, "extra_power", f"{here} squares what is not squared", 2)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            yield _Try(
                node.operand,
                "sign",
                f"the minus in {here} does not belong: right size, wrong sign",
                1,
            )
        if whole:
            yield _Try(
                ast.UnaryOp(ast.USub(), node),
                "sign",
                (
                    "right size, wrong sign: check the sign of each "
                    + ("factor on the way back" if derivative else "term")
                ),
                1,
            )
        if isinstance(node, ast.Name):
            yield from self._swaps(line, node)
        if whole:
            yield from self._exchanges(line, node)
        if whole or isinstance(node, ast.Name):
            for g in world.spec.given_names:
                if g in used:
                    continue
                term = ast.Name(g, ast.Load())
                where = "" if whole else f" next to {here}"
                for op in (ast.Add(), ast.Sub()):
                    yield _Try(
                        ast.BinOp(node, op, term),
                        "term_missing",
                        (f"the term {_SIGN[type(op)]} {g} is missing{where}"),
                        2,
                    )
                yield _Try(
                    ast.BinOp(term, ast.Sub(), node),
                    "term_missing",
                    (f"it starts from {g}: `{g} - {_paren(node)}`"),
                    2,
                )
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            for g in world.spec.given_names:
                yield _Try(
                    ast.BinOp(node, ast.Mult(), ast.Name(g, ast.Load())),
                    "given_missing",
                    (f"the factor {g} is missing from {here}"),
                    2,
                )
        if isinstance(node, ast.Constant) and isinstance(number := node.value, int | float):
            for g, lesson in world.spec.lesson_givens.items():
                if world.point[g] == lesson or isinstance(number, bool):
                    continue
                if lesson == node.value:
                    yield _Try(
                        ast.Name(g, ast.Load()),
                        "lesson_number",
                        (
                            f"the number {src(node)} in it is the lesson's {g}; your {g} is "
                            f"{format_value(world.point[g])}"
                        ),
                        1,
                    )
                elif (times := _multiple_of(float(number), lesson)) is not None:
                    yield _Try(
                        ast.BinOp(ast.Constant(times), ast.Mult(), ast.Name(g, ast.Load())),
                        "lesson_number",
                        (
                            f"the number {src(node)} in it is {times} × the lesson's {g} "
                            f"({format_value(lesson)}), the lesson's formula with its numbers; "
                            f"your {g} is {format_value(world.point[g])}"
                        ),
                        2,
                    )
        if whole or isinstance(node, ast.Name | ast.BinOp):
            for factor, reason, what in self.factors:
                if _same_name(factor, node):
                    continue  # x * x is the square, named below
                yield _Try(
                    ast.BinOp(node, ast.Mult(), factor),
                    reason,
                    (f"{what} is missing" + ("" if whole else f" from {here}")),
                    2,
                )
                if (
                    reason == "given_missing"
                    and isinstance(factor, ast.Name)
                    and factor.id not in used
                ):  # dividing out a factor the line holds is "one factor too many"
                    yield _Try(
                        ast.BinOp(node, ast.Div(), factor),
                        reason,
                        f"the division by {factor.id} is missing"
                        + ("" if whole else f" from {here}"),
                        2,
                    )
            yield _Try(
                ast.BinOp(node, ast.Pow(), ast.Constant(2)),
                "square_forgotten",
                (f"{here} is squared in {line}: the square is missing"),
                2,
            )
            if (
                self.relu
                and not self._given(node)
                and not self._gradient(node)
                and self._negative(line, node)
            ):
                yield _Try(
                    ast.Call(ast.Name("max", ast.Load()), [node, ast.Constant(0)], []),
                    ("relu_forgotten"),
                    f"the ReLU is missing: {here} is negative, and ReLU makes it 0",
                    2,
                )

    def _number_only(self, node: ast.expr) -> bool:
        """True for arithmetic on number literals alone (`1 + 2`)."""
        return not any(isinstance(n, ast.Name) for n in ast.walk(node))

    def _gradient(self, node: ast.expr) -> bool:
        """True when `node` uses a slope or gradient part (no ReLU applies to those)."""
        spec = self.world.spec
        derivatives = {p.name for p in spec.parts if p.kind in DERIVATIVES}
        return any(isinstance(n, ast.Name) and n.id in derivatives for n in ast.walk(node))

    def _negative(self, line: str, node: ast.expr) -> bool:
        """True when `node` (in the learner's line `line`) is negative for their numbers."""
        lines = without(self.world.learner_defs, line)
        try:
            return self.world.number(node, 0, lines) < 0
        except (Unreadable, OverflowError, ZeroDivisionError):
            return False

    def _dropped(self, factor: ast.expr) -> tuple[str, str] | None:
        """(reason, explanation) for a factor one too many; None when the factor is a slope
        of the chain in a part of repeated backward calls (the count, not the slope, is off
        there: no reading of it fits for sure)."""
        spec, part = self.world.spec, self.world.part
        text = f"`{src(factor)}`"
        if isinstance(factor, ast.Name) and factor.id in spec.given_names:
            return "given_extra", f"one factor {text} too many"
        slopes = {f.expr for f in flat_factors(spec, part) if f.role == "slope"}
        if (
            isinstance(factor, ast.Constant)
            and part.name in spec.repeated_backward
            and src(factor) not in slopes
        ):
            return "accumulation", (
                f"{text} × one call's gradient: .grad was zeroed, so only one call adds up"
            )
        if isinstance(factor, ast.Constant) and part.name in spec.repeated_backward:
            return None
        if isinstance(factor, ast.Constant) and factor.value == 2:
            return "slope_extra", "the 2 of the square is counted twice"
        return "extra_factor", f"{text} is one factor too many"

    def _swaps(self, line: str, node: ast.Name) -> Iterator[_Try]:
        spec = self.world.spec
        mine = node.id
        targets = [g for g in spec.given_names if g != mine] + [
            n for n in self.earlier if n != mine
        ]
        if mine in spec.part_names and spec.part(mine).kind == "local_slope":
            node_of = spec.part(mine).of[:1]  # a slope of the same node: dh/db for dh/dw
            targets += [
                n for n in self.fixed_slopes if n != mine and spec.part(n).of[:1] == node_of
            ]
        for other in targets:
            if other == line:
                continue
            reason = (
                "given_swap"
                if mine in spec.given_names and other in spec.given_names
                else ("wrong_quantity")
            )
            why = f"you used `{mine}` where `{other}`{self._label(other)} belongs"
            if other == f"leaky_{mine}":
                reason = "relu_for_leaky"
                why = f"`{mine}` belongs to the ReLU; with the LeakyReLU it is `{other}`"
            definition = self.world.spec_defs.get(other)
            if (
                isinstance(definition, ast.Call)
                and isinstance(definition.func, ast.Name)
                and definition.func.id == "max"
                and any(isinstance(a, ast.Name) and a.id == mine for a in definition.args)
            ):
                reason = "relu_forgotten"
                why = (
                    f"you used `{mine}` where the ReLU's output `{other}` = max({mine}, 0) belongs"
                )
            yield _Try(ast.Name(other, ast.Load()), reason, why, 1)

    def _label(self, name: str) -> str:
        spec = self.world.spec
        if name in spec.part_names and spec.part(name).label != name:
            return f", {spec.part(name).label},"
        return ""

    def identities(self) -> Iterator[_Try]:
        """Whole formulas the learner may have written instead: known mistakes, other parts."""
        spec, part = self.world.spec, self.world.part
        for reason, expression, why in part.mistakes:
            yield _Try(
                ast.parse(expression, mode="eval").body,
                reason,
                why[:1].lower() + why[1:].rstrip("."),
                0,
            )
        seen = set()
        for other in spec.parts:
            for f in flat_factors(spec, other) if other.kind in NUMERIC else []:
                if f.role == "slope" and f.expr not in seen and len(f.expr) > 1:
                    seen.add(f.expr)
                    why = f"that is {f.label} alone, not {part.label}"
                    yield _Try(ast.parse(f.expr, mode="eval").body, "other_quantity", why, 3)
        for name in spec.part_names:
            other = spec.part(name)
            if name == part.name or other.kind not in NUMERIC:
                continue
            if other.kind == "forward" and self.derivative:
                why = (
                    f"that is the forward value {other.label}, not its slope: the backward pass "
                    "multiplies local slopes"
                )
                yield _Try(ast.Name(name, ast.Load()), "forward_value", why, 1)
            else:
                why = f"that is {other.label}, not {part.label}"
                yield _Try(ast.Name(name, ast.Load()), "other_quantity", why, 3)
