"""05: only leaves keep .grad, gradients accumulate, no_grad()/detach(); two pieces of code.

The lesson's program is z = k·y with y = x³ (mechanic 1) and y = x² (mechanics 2 and 3); in
a class each learner's (`Mechanics`) has its own form of z and its own scale of the square,
so the same parts ask for their own dz/dy and their own gradient that accumulates."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from autograder.answers.functions import GRAD_OF_INTERMEDIATE, TRAIN
from autograder.core.spec import (
    ExerciseSpec,
    Factor,
    Given,
    Part,
    ScaledSquare,
    Structure,
    given,
    pairwise_different,
    scaled_math,
    scaled_python,
    slope,
)

if TYPE_CHECKING:
    import torch

    from autograder.core.tape import Tape

CALLS = 3
"""Backward calls in mechanic 2."""

ZForm = Literal["k*y", "-k*y", "k*y/2"]


@dataclass(frozen=True)
class Mechanics(ScaledSquare, Structure):
    """Mechanic 1's z from y = x³ and k (`form`), and mechanics 2 and 3's y = c·x² with
    c = top/bottom: a multiplication by k in z (halved in
    one form), and one scaled square."""

    form: ZForm
    top: int
    bottom: int = 1

    @property
    def tag(self) -> str:
        form = {"k*y": "times", "-k*y": "minus", "k*y/2": "half"}[self.form]
        return f"{form}_{self.scale_tag('c')}"

    def z_of(self, y: str) -> str:
        """z from `y`, as Python arithmetic."""
        return {"k*y": f"{y} * k", "-k*y": f"-k * {y}", "k*y/2": f"k * {y} / 2"}[self.form]

    def z(self, y: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """z from y (PyTorch)."""
        if self.form == "k*y":
            return y * k
        if self.form == "-k*y":
            return -k * y
        return k * y / 2

    def square_of(self, x: str) -> str:
        """Mechanics 2 and 3's y at `x`, as Python arithmetic: x**2, 3 * x**2, 3 * x**2 / 2."""
        return scaled_python(self.scale, f"{x}**2")

    def square(self, x: torch.Tensor) -> torch.Tensor:
        """Mechanics 2 and 3's y (PyTorch)."""
        return x**2 * self.top / self.bottom

    @property
    def dz_dy(self) -> tuple[tuple[Factor, ...], str]:
        """dz/dy: (its chain, the model answer)."""
        if self.form == "k*y":
            return (given("k"),), "k"
        if self.form == "-k*y":
            return (slope("-1", "the − of z = −k·y"), given("k")), "-1 * k"
        return (slope("1 / 2", "the 1/2 of z = k·y/2"), given("k")), "1 / 2 * k"

    @property
    def z_words(self) -> str:
        return {"k*y": "k·y", "-k*y": "−k·y", "k*y/2": "k·y/2"}[self.form]

    @property
    def square_words(self) -> str:
        return scaled_math(self.scale, "x²")

    @property
    def slope_words(self) -> str:
        """The one call's gradient in math: 2x, 6x, 3x."""
        top, _, bottom = self.twice.partition(" / ")
        scaled = "x" if top == "1" else f"{top}x"
        return f"{scaled}/{bottom}" if bottom else scaled

    @property
    def words(self) -> str:
        return f"mechanic 1: y = x³, z = {self.z_words}; mechanics 2 and 3: y = {self.square_words}"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (
            ("z", self.z_of("x_cube**3")),
            ("square", self.square_of("x_square")),
            ("detached", self.square_of("x_square")),
        )


LESSON = Mechanics("k*y", 1)
VARIANTS = (Mechanics("-k*y", 3), Mechanics("k*y/2", 2), Mechanics("k*y/2", 3))
"""Never the lesson's z nor its square: a copied y.grad, x.grad or accumulated gradient is
wrong for every learner. Never 2c = 3, the number of calls (c = 3/2): a missing slope would
read as one call's gradient."""


def _grad_is_none_without_retain(t: Tape) -> bool:
    from autograder.answers.functions import backward

    y = t.nodes["x_cube"] ** 3
    backward((y * t.nodes["k"]).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return y.grad is None


def _requires_grad_inside_no_grad(t: Tape) -> bool:
    import torch

    with torch.no_grad():
        inside = t.nodes["x_square"] ** 2
    return bool(inside.requires_grad)


def _detached_requires_grad(t: Tape) -> bool:
    return bool(t.nodes["detached"].requires_grad)


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the program `structure`: its program and parts."""
    assert isinstance(structure, Mechanics)
    mechanics = structure
    dz_dy_factors, dz_dy_answer = mechanics.dz_dy
    one_call = (
        slope("2", "the 2 of the square (d x²/dx = 2x)")
        if mechanics == LESSON
        else slope(
            mechanics.twice,
            f"the {mechanics.twice} of d({mechanics.square_words})/dx = {mechanics.slope_words}",
        )
    )
    between = {
        "k*y": "the ×k node lies",
        "-k*y": "the ×(−k) node lies",
        "k*y/2": "the ×k and ÷2 nodes lie",
    }[mechanics.form]

    def program(t: Tape) -> None:
        """Mechanic 1: y = x³, z from y and k. Mechanics 2 and 3: y = c·x²."""
        x_cube, k, x_square = t.given("x_cube", "k", "x_square")
        y = t.node("y", x_cube**3)
        t.node("z", mechanics.z(y, k))
        square = t.node("square", mechanics.square(x_square))
        t.node("detached", square.detach())

    return ExerciseSpec(
        name="05_three_mechanics",
        title="Three mechanics that catch nearly everyone",
        lesson="05_three_mechanics",
        givens=(
            Given(
                "x_cube",
                (2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 5.0, -5.0, 1.5, -1.5, 0.5, -0.5),
                lesson=2.0,
                meaning="mechanic 1: y = x**3",
            ),
            Given(
                "k",
                (
                    5.0,
                    3.0,
                    4.0,
                    6.0,
                    7.0,
                    8.0,
                    9.0,
                    10.0,
                    11.0,
                    12.0,
                    13.0,
                    -2.0,
                    -3.0,
                    -4.0,
                    -5.0,
                    -6.0,
                    -7.0,
                    -8.0,
                    -9.0,
                ),
                lesson=5.0,
                meaning="mechanic 1: the number in z",
            ),
            Given(
                "x_square",
                (
                    3.0,
                    4.0,
                    5.0,
                    6.0,
                    7.0,
                    8.0,
                    9.0,
                    10.0,
                    11.0,
                    12.0,
                    13.0,
                    -3.0,
                    -4.0,
                    -5.0,
                    -6.0,
                    -7.0,
                    -8.0,
                    -9.0,
                    -10.0,
                    -11.0,
                    -12.0,
                    -13.0,
                ),
                lesson=3.0,
                meaning="mechanics 2, 3",
            ),
        ),
        constraints=(
            pairwise_different("x_cube", "k", "x_square"),
            (
                "one call's gradient is not another given's multiple",
                lambda g: abs(g["x_square"]) != CALLS * abs(g["x_cube"]),
            ),
        ),
        repeated_backward=("grad_after_three_calls", "grad_after_zero_and_backward"),
        program=program,
        parts=(
            Part(
                "x_grad",
                "x.grad",
                "gradient",
                f"dz/dy × dy/dx, in your {mechanics.words}.",
                "dz/dy × dy/dx",
                of=("z", "x_cube"),
                factors=(*dz_dy_factors, slope("3 * x_cube**2", "the cube's slope 3x²")),
                title="x.grad",
            ),
            Part(
                "y_grad",
                "y.grad",
                "gradient",
                f"y.grad is dz/dy: in z = {mechanics.z_words} only {between} between z and y.",
                "dz/dy",
                of=("z", "y"),
                factors=dz_dy_factors,
                solution=dz_dy_answer,
                title="y.grad, kept by retain_grad()",
            ),
            Part(
                "y_grad_is_none_without_retain",
                "y.grad is None without retain_grad()",
                "fact",
                "Only leaves keep .grad unless you call retain_grad().",
                "True or False",
                fact=_grad_is_none_without_retain,
                solution="True",
                title="without retain_grad()",
            ),
            Part(
                "grad_after_three_calls",
                "x.grad after three backward calls",
                "gradient",
                f"`.grad` is added to on every backward() of y = {mechanics.square_words}, "
                "not replaced.",
                "x.grad after n calls = n × (gradient of one call)",
                of=("square", "x_square"),
                calls=CALLS,
                factors=(
                    Factor(str(CALLS), "calls", "three backward calls"),
                    one_call,
                    given("x_square"),
                ),
                title="x.grad after three backward calls",
            ),
            Part(
                "grad_after_zero_and_backward",
                "x.grad after zero_() and one backward",
                "gradient",
                "zero_() empties .grad; one backward adds one gradient.",
                "0 + (gradient of one call)",
                of=("square", "x_square"),
                factors=(one_call, given("x_square")),
                solution=f"0 + {mechanics.twice} * x_square",
                title="after zeroing",
            ),
            Part(
                "requires_grad_inside_no_grad",
                "y.requires_grad inside no_grad",
                "fact",
                "Inside torch.no_grad() nothing is recorded.",
                "True or False",
                fact=_requires_grad_inside_no_grad,
                solution="False",
                title="inside no_grad()",
            ),
            Part(
                "detached_value",
                "y.detach()",
                "forward",
                f".detach() keeps the data of y = {mechanics.square_words}.",
                "the data of y",
                of=("detached",),
                solution=mechanics.square_of("x_square"),
                title="the value of a detached tensor",
            ),
            Part(
                "detached_requires_grad",
                "y.detach().requires_grad",
                "fact",
                ".detach() gives a tensor with no history.",
                "True or False",
                fact=_detached_requires_grad,
                solution="False",
                title="the history of a detached tensor",
            ),
            Part(
                "train",
                TRAIN.label,
                "function",
                TRAIN.hint,
                "the one missing line",
                points=2,
                task=TRAIN,
                title="a training loop that forgets to zero",
            ),
            Part(
                "grad_of_intermediate",
                GRAD_OF_INTERMEDIATE.label,
                "function",
                GRAD_OF_INTERMEDIATE.hint,
                "the one missing line",
                points=2,
                task=GRAD_OF_INTERMEDIATE,
                title="keep an intermediate's gradient",
            ),
        ),
        written=(("why_gradients_accumulate", 1),),
        structure=mechanics,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
