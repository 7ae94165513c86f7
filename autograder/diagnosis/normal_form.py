"""A learner's formula in the given names, the same text for every learner who wrote it.

Each learner has their own numbers, so a class report cannot count wrong *values*; it
counts wrong *formulas*. `normal_form` takes the line a learner wrote for one answer (read
statically, `autograder.diagnosis.byhand`), inlines their helper lines (`diff = a - y`),
writes a number that equals one of their givens as that given's name, and orders the
operands of a sum or a product, so `x*2`, `2 * x` and `2 * 3.7` (with x = 3.7) all read
`2 * x`. A bare number, or a line that cannot be read, has no normal form (None).

Cost is bounded: each line is capped in size (`formulas.parse_line`) and at most `MAX_HELPERS`
helper lines are inlined.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Final

from autograder.core.verdict import matches
from autograder.diagnosis.byhand import GIVEN_DETAIL
from autograder.diagnosis.formula_pair import STRUCTURAL, Unreadable, parse_line, src

if TYPE_CHECKING:
    from autograder.diagnosis.byhand import HandAnswer

MAX_HELPERS: Final = 8


class _Normaliser(ast.NodeTransformer):
    def __init__(
        self, answers: Mapping[str, HandAnswer], givens: Mapping[str, float], keep: Collection[str]
    ) -> None:
        self.answers, self.givens, self.keep = answers, givens, keep
        self.inlined = 0

    def visit_Name(self, node: ast.Name) -> ast.expr:
        held = self.answers.get(node.id)
        if node.id in self.keep or held is None or held.status != "number":
            return node
        if held.detail.startswith(GIVEN_DETAIL):  # `xx = exercise.given("x")`
            return ast.Name(held.detail.removeprefix(GIVEN_DETAIL), ast.Load())
        self.inlined += 1
        if self.inlined > MAX_HELPERS:
            raise Unreadable("too many helper lines")
        return self.visit(parse_line(held.detail))  # type: ignore[no-any-return]

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        number = node.value
        if isinstance(number, bool) or not isinstance(number, int | float):
            return node
        if abs(number) in STRUCTURAL:
            return node
        equal = [g for g, v in self.givens.items() if v != 0 and matches(v, float(number))]
        return ast.Name(equal[0], ast.Load()) if len(equal) == 1 else node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Add | ast.Mult):
            return node
        op = type(node.op)
        operands: list[ast.expr] = []
        stack: list[ast.expr] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.BinOp) and isinstance(current.op, op):
                stack += [current.right, current.left]
            else:
                operands.append(current)
        ordered = sorted(operands, key=lambda n: (isinstance(n, ast.Constant) is False, src(n)))
        result = ordered[0]
        for operand in ordered[1:]:
            result = ast.BinOp(result, op(), operand)
        return result


def normal_form(
    name: str,
    answers: Mapping[str, HandAnswer],
    givens: Mapping[str, float],
    keep: Collection[str] = (),
) -> str | None:
    """The formula `answers[name]` holds, in the given names (see the module); `keep`:
    names never inlined (the exercise's givens and parts). None for a bare number or a
    line that cannot be read."""
    held = answers.get(name)
    if held is None or held.status != "number" or held.detail.startswith(GIVEN_DETAIL):
        return None
    keep = {*keep, *givens, name}
    try:
        node = _Normaliser(answers, givens, keep).visit(parse_line(held.detail))
    except (Unreadable, RecursionError):
        return None
    if not any(isinstance(n, ast.Name) for n in ast.walk(node)):
        return None  # a bare number: the learner's own, not comparable
    return src(node)
