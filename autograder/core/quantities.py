"""A graded quantity: one part of an exercise, for one learner's numbers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autograder.core.spec import Gate, Kind

if TYPE_CHECKING:
    from autograder.core.spec import ExerciseSpec, Part


@dataclass(frozen=True)
class Quantity:
    """One graded answer of an exercise, with PyTorch's value for one learner.

    `value` is always produced by running PyTorch (see `core.engine`), never typed in.
    `values` holds every named value of the learner's exercise (givens, forward nodes,
    parts): the facts a diagnosis reads the chain from. `part` and `spec` are None for a
    quantity made by hand (tests).
    """

    name: str
    label: str
    value: float | bool
    kind: Kind
    gate: Gate | None = None
    hint: str = ""
    part: Part | None = field(default=None, compare=False, repr=False)
    spec: ExerciseSpec | None = field(default=None, compare=False, repr=False)
    values: Mapping[str, float | bool] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_bool(self) -> bool:
        """True for a yes/no fact, which must match exactly."""
        return isinstance(self.value, bool)
