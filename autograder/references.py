"""Every graded quantity of an exercise, for one learner's given values, computed by PyTorch.

Nothing here is typed in: the values come from each exercise's spec
(`autograder/exercises/`) run by the generic engine (`autograder.spec_engine`), which
checks every gradient against finite differences and every taught chain against PyTorch.
The per-exercise tables live in docs/exercises.md, generated from the specs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from autograder.exercises import SPECS
from autograder.quantities import Quantity
from autograder.spec import exercise_spec

EXERCISES: tuple[str, ...] = tuple(SPECS)


@functools.lru_cache(maxsize=1024)
def _values(exercise: str, givens: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    from autograder.spec_engine import compute

    (row,) = compute(exercise_spec(exercise), [dict(givens)])
    return row


def reference_values(exercise: str, givens: Mapping[str, float]) -> dict[str, Any]:
    """Every named value (givens, nodes, parts) of `exercise` for `givens` (cached)."""
    spec = exercise_spec(exercise)
    missing = [n for n in (*spec.given_names, *spec.constants) if n not in givens]
    if missing:
        raise KeyError(f"{exercise}: no value for the given(s) {', '.join(missing)}")
    key = tuple((n, float(givens[n])) for n in (*spec.given_names, *spec.constants))
    return dict(_values(exercise, key))


def reference_quantities(exercise: str, givens: Mapping[str, float]) -> dict[str, Quantity]:
    """The graded quantities of `exercise` for `givens`, by notebook variable."""
    spec = exercise_spec(exercise)
    full = {**spec.constants, **givens}
    values = reference_values(exercise, full)
    return {
        p.name: Quantity(
            p.name,
            p.label,
            values[p.name],
            p.kind,
            gate=p.gate,
            hint=p.hint,
            part=p,
            spec=spec,
            values=values,
        )
        for p in spec.parts
        if p.kind not in ("function", "class")
    }
