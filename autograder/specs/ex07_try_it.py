"""07: a derivative by hand, then the neuron of 03 with a second weight after the ReLU.

The lesson's warm-up is y = x³ − 2x and its loss L = (out − target)²; in a class each
learner's (`Closing`) has its own polynomial and its own scale of the loss, so the same parts
ask for their own derivative and their own chain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    upstream,
    value,
)

if TYPE_CHECKING:
    from autograder.core.tape import Tape

CUBE = "³"


@dataclass(frozen=True)
class Closing(ScaledSquare, Structure):
    """The warm-up y = cube·x³ + linear·x (two terms: a power and a multiple of x), and the
    loss top/bottom·(out − target)² after out = w2·ReLU(w·x + b)."""

    cube: int
    linear: int
    top: int = 1
    bottom: int = 1

    @property
    def tag(self) -> str:
        sign = "m" if self.linear < 0 else "p"
        return f"c{self.cube}_{sign}{abs(self.linear)}_{self.scale_tag('l')}"

    @property
    def poly_of(self) -> str:
        """The polynomial at x_cubic, as Python arithmetic: x_cubic**3 - 2 * x_cubic."""
        cube = "x_cubic**3" if self.cube == 1 else f"{self.cube} * x_cubic**3"
        sign = "-" if self.linear < 0 else "+"
        return f"{cube} {sign} {abs(self.linear)} * x_cubic"

    @property
    def poly_words(self) -> str:
        """The polynomial in math: x³ − 2x, 2x³ − x."""
        cube = f"x{CUBE}" if self.cube == 1 else f"{self.cube}x{CUBE}"
        sign = "−" if self.linear < 0 else "+"
        linear = "x" if abs(self.linear) == 1 else f"{abs(self.linear)}x"
        return f"{cube} {sign} {linear}"

    def slope_of(self, linear: str = "") -> str:
        """The derivative at x_cubic, `linear` (e.g. " - 2") in place of the linear term's."""
        return f"{3 * self.cube} * x_cubic**2{linear}"

    @property
    def slope_answer(self) -> str:
        sign = "-" if self.linear < 0 else "+"
        return self.slope_of(f" {sign} {abs(self.linear)}")

    @property
    def term(self) -> str:
        """The linear term as the known mistakes' explanations write it: -2x, +3x."""
        return f"{self.linear:+d}x" if abs(self.linear) != 1 else f"{self.linear:+d}"[:-1] + "x"

    def loss_of(self, out: str) -> str:
        """The loss at `out`, as Python arithmetic: (out - target) ** 2 / 2."""
        return scaled_python(self.scale, f"({out} - target) ** 2")

    @property
    def loss_words(self) -> str:
        return scaled_math(self.scale, "(out − target)²")

    @property
    def dL_dout(self) -> tuple[Factor, ...]:
        """dL/dout as the chain's factors: the scaled square's slope, then (out − target)."""
        return (self.square_slope("out − target", "out"), value("out - target"))

    @property
    def words(self) -> str:
        return f"the warm-up y = {self.poly_words}, the loss L = {self.loss_words}"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        out = "w2 * max(w * x + b, 0)"
        return (("cubic", self.poly_of), ("L", self.loss_of(out)))


LESSON = Closing(1, -2)
VARIANTS = (Closing(1, -3, 1, 2), Closing(2, -1, 3), Closing(1, 3, 1, 2))
"""Never the lesson's polynomial nor its loss: a copied value, derivative or gradient is wrong
for every learner (the polynomials are not 0 at any x_cubic drawn)."""


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the closing `structure`: its program and parts."""
    assert isinstance(structure, Closing)
    closing = structure
    term = closing.term

    def program(t: Tape) -> None:
        """The polynomial warm-up, and h = w·x + b, a = ReLU(h), out = w2·a, and the loss."""
        import torch

        x_cubic, x, w, b, w2, target = t.given("x_cubic", "x", "w", "b", "w2", "target")
        t.node("cubic", closing.cube * x_cubic**3 + closing.linear * x_cubic)
        h = t.node("h", w * x + b)
        a = t.node("a", torch.relu(h))
        out = t.node("out", w2 * a)
        t.node("L", (out - target) ** 2 * closing.top / closing.bottom)

    return ExerciseSpec(
        name="07_try_it",
        title="Try it",
        lesson="07_try_it",
        givens=(
            Given(
                "x_cubic",
                (4.0, 2.0, 3.0, 5.0, 6.0, -2.0, -3.0, -4.0, -5.0),
                lesson=4.0,
                meaning="warm-up point",
            ),
            Given(
                "x",
                (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0),
                lesson=2.0,
                meaning="input",
            ),
            Given(
                "w",
                (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 2.0, -2.0, -3.0, -4.0, -5.0, -6.0),
                lesson=3.0,
                meaning="weight",
            ),
            Given(
                "b",
                (-1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
                lesson=-1.0,
                meaning="bias",
            ),
            Given(
                "w2",
                (0.5, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 1.5, 2.5, 1.2),
                lesson=0.5,
                meaning="second weight",
            ),
            Given(
                "target",
                (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
                lesson=2.0,
                meaning="target",
            ),
        ),
        constraints=(
            ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
            (
                "the loss is not zero",
                lambda g: g["w2"] * (g["w"] * g["x"] + g["b"]) != g["target"],
            ),
            pairwise_different("x", "w", "b", "w2", "target"),
        ),
        program=program,
        parts=(
            Part(
                "cubic_value",
                f"{closing.poly_words} at x_cubic",
                "forward",
                f"Your problem: {closing.words}; y at x = x_cubic.",
                "your polynomial at x = x_cubic",
                of=("cubic",),
                solution=closing.poly_of,
                title="the value",
            ),
            Part(
                "cubic_slope",
                f"d({closing.poly_words})/dx at x_cubic",
                "gradient",
                f"Differentiate {closing.poly_words} term by term, then put in x = x_cubic.",
                "differentiate term by term, then put in x_cubic",
                of=("cubic", "x_cubic"),
                solution=closing.slope_answer,
                mistakes=(
                    (
                        "term_dropped",
                        closing.slope_of(),
                        f"The {term} term has slope {closing.linear}: it is missing.",
                    ),
                    (
                        "term_kept_x",
                        closing.slope_of(f" + ({closing.linear}) * x_cubic"),
                        f"The slope of {term} is {closing.linear}, not {term}: "
                        "differentiate that term too.",
                    ),
                    (
                        "term_sign",
                        closing.slope_of(f" - ({closing.linear})"),
                        f"The slope of {term} is {closing.linear}, not {-closing.linear:+d}.",
                    ),
                ),
                title="the derivative",
            ),
            Part(
                "out",
                "out",
                "forward",
                "out = w2·a, with a = ReLU(w·x + b).",
                "w2·a, with a = max(w·x + b, 0)",
                of=("out",),
                solution="a = max(w * x + b, 0)\nw2 * a",
                title="the output",
            ),
            Part(
                "L",
                "L",
                "forward",
                f"L = {closing.loss_words}.",
                "the loss from out and target",
                of=("L",),
                solution=closing.loss_of("out"),
                title="the loss",
            ),
            Part(
                "dL_dout",
                "dL/dout",
                "gradient",
                f"The slope of {closing.loss_words} with respect to out.",
                "the slope of the loss at out",
                of=("L", "out"),
                factors=closing.dL_dout,
                title="the gradient at out",
            ),
            Part(
                "dL_dw2",
                "dL/dw2",
                "gradient",
                "out = w2·a, so dout/dw2 = a.",
                "dL/dout × a",
                of=("L", "w2"),
                factors=(upstream("dL_dout"), value("a")),
                solution="dL_dout * a",
                title="the second weight's gradient",
            ),
            Part(
                "dL_da",
                "dL/da",
                "gradient",
                "out = w2·a, so dout/da = w2.",
                "dL/dout × w2",
                of=("L", "a"),
                factors=(upstream("dL_dout"), given("w2")),
                title="the gradient at a",
            ),
            Part(
                "dL_dh",
                "dL/dh",
                "gradient",
                "The ReLU is open (h > 0): da/dh = 1.",
                "dL/da × da/dh",
                of=("L", "h"),
                gate="open",
                factors=(upstream("dL_da"), slope("1", "the open ReLU's slope")),
                title="the gradient at h",
            ),
            Part(
                "dL_dw",
                "dL/dw",
                "gradient",
                "dL/dw = dL/dh × x.",
                "dL/dh × dh/dw, and dh/dw = x",
                of=("L", "w"),
                gate="open",
                factors=(upstream("dL_dh"), given("x")),
                title="the first weight's gradient",
            ),
            Part(
                "dL_db",
                "dL/db",
                "gradient",
                "dL/db = dL/dh × 1.",
                "dL/dh × dh/db, and dh/db = 1",
                of=("L", "b"),
                gate="open",
                factors=(upstream("dL_dh"),),
                solution="dL_dh * 1",
                title="the bias's gradient",
            ),
        ),
        written=(("what_w2_changed", 1),),
        structure=closing,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
