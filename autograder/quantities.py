"""A graded quantity: a named number (or fact) of an exercise, and what helps diagnose it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["forward", "local_slope", "gradient", "fact"]
Gate = Literal["open", "shut"]


@dataclass(frozen=True)
class Quantity:
    """One graded answer of an exercise.

    `value` is always produced by running PyTorch (see `references`), never typed in.
    `gate` is the state of the ReLU on this quantity's backward path (None: no ReLU on it).
    `chain_factors` are local factors of the chain a learner typically forgets.
    """

    name: str
    label: str
    value: float | bool
    kind: Kind
    gate: Gate | None = None
    chain_factors: tuple[float, ...] = ()
    hint: str = ""

    @property
    def is_bool(self) -> bool:
        """True for a yes/no fact, which must match exactly."""
        return isinstance(self.value, bool)
