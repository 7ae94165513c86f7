"""08: the errors everyone meets. Three backward passes by hand (retain_graph), then four
small functions to fix, each judged by behaviour on cases the grader draws.

The lesson's Part A is z = c·x² + 1; in a class each learner's (`Power`) has its own power
of x, times or over c, so the one number by hand is their own. The four fixes are code, the same for all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autograder.core.spec import (
    ExerciseSpec,
    Factor,
    Given,
    Part,
    Structure,
    given,
    pairwise_different,
    slope,
    value,
)
from autograder.core.tasks import FunctionTask
from autograder.specs.error_fixes import CUT_GRAD, FIRST_GRAD, SAVED_GRAD, SGD_STEP

if TYPE_CHECKING:
    import torch

    from autograder.core.tape import Tape

SUPERSCRIPT = {2: "²", 3: "³", 4: "⁴"}
PASSES = 3
"""Backward passes in Part A."""


@dataclass(frozen=True)
class Power(Structure):
    """Part A's z = c·x^power + 1, or x^power/c + 1 (`over`): one power, one product or
    quotient by c, one sum in every structure."""

    power: int
    over: bool = False

    @property
    def tag(self) -> str:
        return f"p{self.power}" + ("_over" if self.over else "")

    @property
    def z_of(self) -> str:
        """z, as Python arithmetic."""
        return f"x**{self.power} / c + 1" if self.over else f"c * x**{self.power} + 1"

    def z(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """z (PyTorch)."""
        return x**self.power / c + 1 if self.over else c * x**self.power + 1

    @property
    def words(self) -> str:
        power = f"x{SUPERSCRIPT[self.power]}"
        return f"z = {power}/c + 1" if self.over else f"z = c·{power} + 1"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (("z", self.z_of),)

    @property
    def slope_factors(self) -> tuple[Factor, ...]:
        """dz/dx = power · c · x^(power − 1) (or power · x^(power − 1) / c), as factors."""
        if self.power == 2:
            power = slope("2", "the square (d x²/dx = 2x)")
        else:
            power = slope(str(self.power), f"the {self.power} of d x{SUPERSCRIPT[self.power]}/dx")
        rest = "x" if self.power == 2 else f"x**{self.power - 1}"
        if self.over:
            return (power, value(f"{rest} / c"))
        return (power, given("c"), given("x") if self.power == 2 else value(rest))


LESSON = Power(2)
VARIANTS = (Power(4), Power(2, over=True), Power(4, over=True))
"""Never the lesson's z: a copied 3 × 2c·x is wrong for every learner. Never the power 3, the
number of passes: a missing 3 of x³ would read as one pass's gradient."""


def _fix(task: FunctionTask, title: str) -> Part:
    return Part(task.name, task.label, "function", task.hint, "fix the function", points=1,
                task=task, title=title)  # fmt: skip


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for Part A's `structure`: its program and parts."""
    assert isinstance(structure, Power)
    power = structure

    def program(t: Tape) -> None:
        """z from x and c, backward three times (the graph kept for the later passes)."""
        x, c = t.given("x", "c")
        t.node("z", power.z(x, c))

    return ExerciseSpec(
        name="08_when_backward_complains",
        title="When backward() complains",
        lesson="08_when_backward_complains",
        givens=(
            Given(
                "x",
                (
                    3.0,
                    5.0,
                    6.0,
                    7.0,
                    8.0,
                    9.0,
                    10.0,
                    11.0,
                    12.0,
                    13.0,
                    14.0,
                    15.0,
                    16.0,
                    17.0,
                    18.0,
                    19.0,
                    20.0,
                    -2.0,
                    -3.0,
                    -5.0,
                    -6.0,
                    -7.0,
                    -8.0,
                    -9.0,
                    -10.0,
                    -11.0,
                    -12.0,
                    -13.0,
                    -14.0,
                    -15.0,
                    -16.0,
                    -17.0,
                    -18.0,
                    -19.0,
                    -20.0,
                ),
                lesson=3.0,
                meaning="Part A's x",
            ),
            Given(
                "c",
                (
                    2.0,
                    5.0,
                    6.0,
                    7.0,
                    8.0,
                    9.0,
                    10.0,
                    11.0,
                    12.0,
                    13.0,
                    14.0,
                    15.0,
                    1.5,
                    2.5,
                    3.5,
                    4.5,
                    5.5,
                    6.5,
                    7.5,
                    8.5,
                    -2.0,
                    -5.0,
                    -6.0,
                    -7.0,
                    -8.0,
                    -9.0,
                    -10.0,
                    -11.0,
                    -12.0,
                    -13.0,
                    -1.5,
                    -2.5,
                    -3.5,
                    -4.5,
                    -5.5,
                    -6.5,
                ),
                lesson=2.0,
                meaning="Part A's number c",
            ),
        ),
        constraints=(pairwise_different("x", "c"),),
        program=program,
        repeated_backward=("grad_after_three_passes",),
        parts=(
            Part(
                "grad_after_three_passes",
                "x.grad after three backward passes",
                "gradient",
                f"Each pass adds dz/dx of {power.words} to x.grad.",
                "x.grad after 3 passes = 3 × dz/dx",
                of=("z", "x"),
                calls=PASSES,
                factors=(
                    Factor(str(PASSES), "calls", "three backward passes"),
                    *power.slope_factors,
                ),
                title="three backward passes, the graph kept",
            ),
            _fix(CUT_GRAD, "a graph cut by .item()"),
            _fix(FIRST_GRAD, "a vector output"),
            _fix(SAVED_GRAD, "a saved tensor changed in place"),
            _fix(SGD_STEP, "an update on a leaf"),
        ),
        written=(("why_the_graph_is_freed", 1),),
        structure=power,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
