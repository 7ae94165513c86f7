"""Fresh draws of a learner's givens that keep every branch of the chain, and a hand
answer's formula and the chain computed there (`autograder.diagnosis.derivation` judges
with them; `formula_pair` checks a formula's edits at the same points).

Each draw multiplies every given by a factor from `SPREAD`, and is kept only when every
named value of the spec's PyTorch program keeps its sign (the same ReLU side, the same
signs). Numbers near a branch's edge (a ReLU's input or a residual close to zero) keep
their branches only close by: when too few draws were kept, more are drawn from each
narrower range of `CLOSER` in turn, so every learner's formulas are checked at other
numbers, not left unverified.

An earlier answer the learner's formula uses, upstream in the chain, takes a free value at
each draw; every other part takes the spec's model answer there. All is seeded by the
exercise and the learner's numbers, so the notebook's check and the grader agree.
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from autograder.core.verdict import matches

if TYPE_CHECKING:
    from autograder.core.quantities import Quantity
    from autograder.core.spec import ExerciseSpec
    from autograder.diagnosis.byhand import HandAnswer, Recipe

NUMERIC: Final = ("forward", "local_slope", "gradient")
FRESH_DRAWS: Final = 3
"""Fresh sets of givens each formula is judged at, besides the learner's own."""
CANDIDATES: Final = 16
"""Sets drawn to find `FRESH_DRAWS` that keep every branch (computed in one batch)."""
SPREAD: Final = (0.6, 1.6)
"""Each given is multiplied by a factor drawn from this range (so its sign is kept)."""
CLOSER: Final = ((0.85, 1.2), (0.95, 1.05), (0.99, 1.01), (0.998, 1.002))
"""Narrower ranges, drawn from in turn while fewer than `FRESH_DRAWS` were kept."""
FREE_SPREAD: Final = (1.3, 2.1)
"""An earlier answer the formula uses is multiplied by a factor from this range."""
EXACT_RTOL: Final = 1e-9
"""Agreement no tolerance hides; short of it, SymPy decides (`derivation`)."""


@dataclass(frozen=True)
class Draw:
    """One fresh set of givens (constants included), PyTorch's values there, and every
    part's model answer computed from them (`recompute` with nothing pinned: the same for
    every part a learner answered, so computed once with the draw)."""

    givens: Mapping[str, float]
    values: Mapping[str, Any]
    chain: Mapping[str, Any]


def _sign(value: Any) -> object:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return (value > 0) - (value < 0)


def same_branches(base: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """True when every named value has the same sign (and every fact the same value)."""
    return all(name in other and _sign(other[name]) == _sign(v) for name, v in base.items())


@functools.lru_cache(maxsize=512)
def _fresh(exercise: str, key: tuple[tuple[str, float], ...]) -> tuple[Draw, ...]:
    from autograder.diagnosis.references import reference_rows, reference_values
    from autograder.specs import exercise_spec

    spec = exercise_spec(exercise)
    givens = dict(key)
    base = reference_values(exercise, {**spec.constants, **givens})
    rng = random.Random(f"{exercise}|{key!r}")
    kept: list[tuple[dict[str, float], Mapping[str, Any]]] = []
    for spread in (SPREAD, *CLOSER):
        candidates: list[dict[str, float]] = []
        for _ in range(CANDIDATES):
            moved = dict(spec.constants)
            for name in spec.given_names:
                old = givens[name]
                new = round(old * rng.uniform(*spread), 4)
                # a draw that rounds back to the number (or to 0) moves by a set factor
                nudged = old * (1.25 if spread == SPREAD else spread[1])
                moved[name] = new if new != 0 and new != old else nudged
            candidates.append(moved)
        rows = reference_rows(exercise, list(candidates))
        kept += [
            (moved, row)
            for moved, row in zip(candidates, rows, strict=True)
            if row is not None and same_branches(base, row)
        ]
        if len(kept) >= FRESH_DRAWS:
            break
    return tuple(Draw(moved, row, recompute(spec, row, {})) for moved, row in kept[:FRESH_DRAWS])


def fresh_draws(exercise: str, givens: Mapping[str, float]) -> tuple[Draw, ...]:
    """Up to `FRESH_DRAWS` fresh sets of givens near `givens` that keep every branch."""
    from autograder.specs import exercise_spec

    names = exercise_spec(exercise).given_names
    return _fresh(exercise, tuple((n, float(givens[n])) for n in names))


def fixed_by_branches(exercise: str, givens: Mapping[str, float]) -> set[str]:
    """The numeric parts whose value is the same at every fresh draw (the slope 1 of an
    open ReLU): there a number written out is the answer."""
    from autograder.diagnosis.references import reference_values
    from autograder.specs import exercise_spec

    spec = exercise_spec(exercise)
    base = reference_values(exercise, {**spec.constants, **givens})
    draws = fresh_draws(exercise, givens)
    return {
        p.name
        for p in spec.parts
        if p.kind in NUMERIC
        and draws
        and all(matches(float(base[p.name]), float(d.values[p.name])) for d in draws)
    }


def upstream_parts(spec: ExerciseSpec, name: str) -> set[str]:
    """The numeric parts the part `name`'s model answer reaches through earlier parts."""
    numeric = {p.name for p in spec.parts if p.kind in NUMERIC}
    found: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        for other in {used for used, _ in spec.part(current).code_names} & numeric:
            if other != name and other not in found:
                found.add(other)
                stack.append(other)
    return found


def free_parts(spec: ExerciseSpec, name: str, recipe: Recipe) -> list[str]:
    """The earlier answers the formula for part `name` uses upstream in the chain: each is
    free (a value of its own at each draw; a symbol when judged exactly)."""
    from autograder.diagnosis.byhand import used_names

    numeric = [p.name for p in spec.parts if p.kind in NUMERIC and p.name != name]
    return sorted(used_names(recipe, numeric) & set(numeric) & upstream_parts(spec, name))


def recompute(
    spec: ExerciseSpec, values: Mapping[str, Any], overrides: Mapping[str, float]
) -> dict[str, Any]:
    """Every part's model answer again, in order, with `overrides` in place of some parts."""
    from autograder.diagnosis.byhand import evaluate_expression

    names: dict[str, Any] = {**values, **overrides}
    for part in spec.parts:
        if part.kind in NUMERIC and part.name not in overrides:
            with contextlib.suppress(ValueError, ZeroDivisionError, OverflowError):
                names[part.name] = float(evaluate_expression(part.answer, names))
    return names


@dataclass(frozen=True)
class Point:
    """The learner's formula and the chain at one fresh draw."""

    draw: Draw
    pinned: Mapping[str, float]
    """The earlier answers the formula uses, at their free values."""
    mine: float | None
    """None: the formula cannot be computed there (a division by zero)."""
    right: float

    @property
    def agrees(self) -> bool:
        return self.mine is not None and matches(self.right, self.mine)

    @property
    def exact(self) -> bool:
        """Equal up to float rounding (both sides are float64 arithmetic): nothing a
        tolerance could hide, such as a `+ 3` beside 12·c·x³ with x = 20."""
        return self.mine is not None and math.isclose(
            self.mine, self.right, rel_tol=EXACT_RTOL, abs_tol=1e-12
        )


def points(q: Quantity, answer: HandAnswer) -> list[Point] | None:
    """The learner's formula for `q` and the chain at each fresh draw; None when the part
    is not a numeric formula or the answer has no recipe."""
    from autograder.diagnosis.byhand import ReplayError, replay

    spec, part, recipe = q.spec, q.part, answer.recipe
    if spec is None or part is None or recipe is None or q.kind not in NUMERIC:
        return None
    givens = {n: float(q.values[n]) for n in spec.given_names}  # type: ignore[arg-type]
    numeric = [p.name for p in spec.parts if p.kind in NUMERIC and p.name != part.name]
    free = free_parts(spec, part.name, recipe)
    found = []
    for index, draw in enumerate(fresh_draws(spec.name, givens)):
        consistent = draw.chain
        rng = random.Random(f"{spec.name}|{sorted(givens.items())!r}|{index}")
        pinned = {
            name: float(consistent[name]) * rng.uniform(*FREE_SPREAD)
            if consistent[name] != 0
            else rng.uniform(0.5, 2.0)
            for name in free
        }
        names = recompute(spec, draw.values, pinned) if pinned else consistent
        others = {n: float(names[n]) for n in numeric}
        try:
            mine: float | None = float(replay(recipe, draw.givens, others))
        except (ReplayError, ZeroDivisionError, OverflowError, ValueError, TypeError):
            mine = None
        if mine is not None and not math.isfinite(mine):
            mine = None
        found.append(Point(draw, pinned, mine, float(names[part.name])))
    return found
