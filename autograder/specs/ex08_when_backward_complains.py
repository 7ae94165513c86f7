"""08: the errors everyone meets. Three backward passes by hand (retain_graph), then four
small functions to fix, each judged by behaviour on cases the grader draws.

The lesson's Part A is z = c·x² + 1; in a class each learner's (`Power`) has its own power
of x, so the one number by hand is their own. The four fixes are code, the same for all."""

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
    from autograder.core.tape import Tape

SUPERSCRIPT = {2: "²", 3: "³", 4: "⁴"}
PASSES = 3
"""Backward passes in Part A."""


@dataclass(frozen=True)
class Power(Structure):
    """Part A's z = c·x^power + 1: one power, one product, one sum in every structure."""

    power: int

    @property
    def tag(self) -> str:
        return f"p{self.power}"

    @property
    def words(self) -> str:
        return f"z = c·x{SUPERSCRIPT[self.power]} + 1"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (("z", f"c * x**{self.power} + 1"),)

    @property
    def slope_factors(self) -> tuple[Factor, ...]:
        """dz/dx = power · c · x^(power − 1), as the chain's factors."""
        if self.power == 2:
            return (slope("2", "the square (d x²/dx = 2x)"), given("c"), given("x"))
        label = f"the {self.power} of d x{SUPERSCRIPT[self.power]}/dx"
        return (slope(str(self.power), label), given("c"), value(f"x**{self.power - 1}"))


LESSON = Power(2)
VARIANTS = (Power(3), Power(4))
"""Never the lesson's power: a copied 3 × 2c·x is wrong for every learner."""


def _fix(task: FunctionTask, title: str) -> Part:
    return Part(task.name, task.label, "function", task.hint, "fix the function", points=1,
                task=task, title=title)  # fmt: skip


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for Part A's `structure`: its program and parts."""
    assert isinstance(structure, Power)
    power = structure

    def program(t: Tape) -> None:
        """z = c·x^power + 1, backward three times (the graph kept for the later passes)."""
        x, c = t.given("x", "c")
        t.node("z", c * x**power.power + 1)

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
                meaning="Part A's factor of the power of x",
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
