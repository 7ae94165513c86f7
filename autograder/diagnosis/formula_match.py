"""Read a wrong hand answer's formula: which single edit of what the learner wrote gives
the spec's formula, named in the learner's own terms.

A hand answer is arithmetic over the given names, earlier answers and the learner's own
helper lines (`h = w * x + b`), read statically (`autograder.diagnosis.byhand`); the right
formula is the part's model answer with every earlier part expanded
(`autograder.diagnosis.formula_pair`). The single edits of the learner's lines in
`autograder.diagnosis.formula_edits` are tried, tier by tier; the first tier with a match
names the mistake. Identity is decided on the learner's numbers and three nearby sets
(fast, pure Python), then confirmed by SymPy. Two matches of different kinds in one tier
are both offered, never one as if certain.

Cost is bounded for hostile cells: the learner's lines are capped in size
(`autograder.diagnosis.formula_pair`), the edits tried in count (`MAX_CANDIDATES`) and the
search in time (`BUDGET_SECONDS`); past either, nothing is named from the formula.
"""

from __future__ import annotations

import ast
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from autograder.core.verdict import format_value, matches
from autograder.diagnosis.formula_edits import Catalogue, Edit
from autograder.diagnosis.formula_pair import (
    IDENTITY_RTOL,
    STRUCTURAL,
    Formulas,
    Unreadable,
    gap_to_spec,
    number_in,
    src,
    sympy_expr,
)

if TYPE_CHECKING:
    from autograder.core.quantities import Quantity
    from autograder.diagnosis.byhand import HandAnswer

MAX_CANDIDATES: Final = 3000
"""Most edits tried for one answer (deterministic: the same in the notebook and the grader)."""
MAX_CONFIRMED: Final = 8
"""Most matches SymPy confirms for one answer."""
BUDGET_SECONDS: Final = 5.0
"""A safety net far above the usual cost (milliseconds, see `mistakes --corpus`): past it,
nothing is named from the formula. Counted in this thread's CPU time, not on the wall
clock, so a busy machine (others' work) never changes what a learner is told."""
_RELATED: Final = {
    # one family: two matches of these kinds explain the same thing in other words
    "missing": {"given_missing", "slope_missing", "factor_missing", "calls_missing"}
    | {"square_forgotten"},
    "extra": {"given_extra", "slope_extra", "extra_factor", "accumulation"},
    "swap": {"given_swap", "wrong_quantity"},
}


def _family(reason: str) -> str:
    return next((f for f, kinds in _RELATED.items() if reason in kinds), reason)


def _confirmed(world: Formulas, edit: Edit) -> bool:
    """SymPy: the edited formula equals the spec's, where the learner's numbers are."""
    import sympy

    lines = {**world.learner_defs}
    if edit.identity:
        mine = sympy_expr(world, world.expr, lines, False)
        other = sympy_expr(world, edit.expr, {}, True)
        return bool(sympy.cancel(sympy.together(mine - other)) == 0)
    top = world.expr
    if edit.line == world.part.name:
        top = edit.expr
    else:
        lines[edit.line] = edit.expr
    return bool(gap_to_spec(world, top, lines)[0] == 0)


def _same(
    world: Formulas, at_points: list[float], top: ast.expr, lines: Mapping[str, ast.expr]
) -> bool:
    for k, want in enumerate(at_points):
        try:
            got = world.number(top, k, lines)
        except (Unreadable, OverflowError, ZeroDivisionError):
            return False
        if not math.isclose(got, want, rel_tol=IDENTITY_RTOL, abs_tol=1e-12):
            return False
    return True


@dataclass(frozen=True)
class Reading:
    """What the formula says: the finding (or None), and whether the formula was read."""

    finding: tuple[str, str] | None
    read: bool
    """True when the whole formula was read with names (a numeric coincidence can be told
    from a mistake); False for bare numbers or a formula that could not be read."""


def read_formula(
    q: Quantity, value: float, written: Mapping[str, HandAnswer], answers: Mapping[str, object]
) -> Reading:
    """The single edit that makes the learner's formula for `q` (worth `value`) right,
    named; see the module."""
    import sympy  # noqa: F401  (loaded once, before the clock starts: its import is slow)

    deadline = time.thread_time() + BUDGET_SECONDS
    try:
        world = Formulas(q, written, answers)
        return _search(world, value, deadline)
    except Exception:  # noqa: BLE001
        # Unreadable, or anything a hostile cell makes SymPy or the arithmetic raise: the
        # formula is an aid, and without it the numbers are judged as before.
        return Reading(None, False)


def _has_names(world: Formulas) -> bool:
    return any(isinstance(n, ast.Name) for n in ast.walk(world.expr))


def _copied_numbers(world: Formulas) -> bool:
    """True when a number in the learner's lines may stand for one of their values."""
    values = {abs(float(v)) for v in world.q.values.values() if type(v) in (int, float)}
    for _, expr in [(world.part.name, world.expr), *world.learner_defs.items()]:
        for n in ast.walk(expr):
            number = number_in(n)
            if number is not None and abs(number) not in STRUCTURAL and abs(number) in values:
                return True
    return False


def _search(world: Formulas, value: float, deadline: float) -> Reading:
    lines = world.learner_defs
    mine = world.number(world.expr, 0, {**lines, **_answers_as_lines(world)})
    if not math.isclose(mine, value, rel_tol=1e-9, abs_tol=1e-12):
        raise Unreadable("the formula read is not the number written")
    right = [world.right(k) for k in range(len(world.points))]
    read = _has_names(world) and not _copied_numbers(world)
    if _same(world, right, world.expr, lines):
        return Reading(None, read)  # the step is right: an earlier answer is not (follow-on)
    if world.part.gate == "shut" and all(r == 0 for r in right):
        return Reading(None, read)  # a shut ReLU: the numbers say it best
    catalogue = Catalogue(world)
    constant = len({round(r, 12) for r in right}) == 1
    found: list[Edit] = []
    edits: list[Edit] = []
    tried = 0
    candidates: list[Edit] = [
        Edit(world.part.name, e, r, w, t, identity=True) for e, r, w, t in catalogue.identities()
    ]
    with world.consistent():
        theirs = [world.number(world.expr, k, lines) for k in range(len(world.points))]
        right_whole = [world.right(k) for k in range(len(world.points))]
    for tier in range(4):
        pool = [c for c in candidates if c.tier == tier]
        if tier == 1:
            edits = list(catalogue.edits())
        if tier in (1, 2):
            pool += [e for e in edits if e.tier == tier]
        for edit in pool:
            tried += 1
            if tried > MAX_CANDIDATES or time.thread_time() > deadline:
                return Reading(None, False)
            if constant and edit.tier == 2 and edit.reason not in ("relu_forgotten",):
                continue
            if edit.identity:  # a whole formula: compared as a function of the givens
                with world.consistent():
                    same = _same(world, theirs, edit.expr, {})
                    if same and not _same(world, right_whole, edit.expr, {}):
                        found.append(edit)
                continue
            top = edit.expr if edit.line == world.part.name else world.expr
            edited = lines if edit.line == world.part.name else {**lines, edit.line: edit.expr}
            if _same(world, right, top, edited):
                found.append(edit)
        found = [e for e in found[:MAX_CONFIRMED] if _confirmed(world, e)]
        if time.thread_time() > deadline:
            return Reading(None, False)
        if found:
            return Reading(_finding(world, found), True)
    return Reading(None, read)


def _answers_as_lines(world: Formulas) -> dict[str, ast.expr]:
    """Earlier parts as the learner's own numbers (to check the formula read is theirs)."""
    result: dict[str, ast.expr] = {}
    for name in world.spec.part_names:
        theirs = world.answers.get(name)
        if name != world.part.name and type(theirs) in (int, float):
            result[name] = ast.Constant(float(theirs))  # type: ignore[arg-type]
    return result


def _finding(world: Formulas, found: list[Edit]) -> tuple[str, str]:
    first = found[0]
    others = [e for e in found[1:] if _family(e.reason) != _family(first.reason)]
    wrote = _wrote(world, first.line)
    tail = _earlier_note(world)
    if others:
        second = others[0]
        return "ambiguous", (
            f"You wrote {wrote}. Two readings fit: {first.why}; or {second.why}"
            + (f" (in `{second.line} = ...`)" if second.line != first.line else "")
            + f".{tail} {world.q.hint}"
        )
    return first.reason, f"You wrote {wrote}: {first.why}.{tail}"


def _wrote(world: Formulas, line: str) -> str:
    expr = world.expr if line == world.part.name else world.learner_defs[line]
    return f"`{line} = {src(expr)}`"


def _earlier_note(world: Formulas) -> str:
    """A note on earlier answers the formula uses that are wrong too (the root cause)."""
    spec = world.spec
    for name in spec.part_names:
        used = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(world.expr))
        theirs = world.answers.get(name)
        if not used or name == world.part.name or type(theirs) not in (int, float):
            continue
        right = world.q.values.get(name)
        if type(right) in (int, float) and not matches(float(right), float(theirs)):  # type: ignore[arg-type]
            return (
                f" Your {spec.part(name).label} = {format_value(theirs)} is off too: fix Part "
                f"{spec.letter(name)} first."
            )
    return ""
