"""The neuron of lessons 3 and 4, h = w·x + b, a = ReLU(h), L = (a − y)²: its program, the
givens of the open neuron (exercises 03 and 09) and the parts exercises 03 and 04 both ask
(forward pass, dL/da, the ReLU's slope, dL/dh).

In a class each learner's neuron (`Neuron`) has a gain of its own on the pre-activation,
h = k·(w·x + b), and a scale of its own on the loss, L = c·(a − y)²: a positive gain keeps
h's sign (an open ReLU stays open, a shut one shut, so 04's dead ReLU is dead in every
structure), and the ReLU is the lesson's in all of them."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from autograder.core.spec import (
    Factor,
    Gate,
    Given,
    Part,
    Structure,
    fraction_python,
    pairwise_different,
    scaled_math,
    scaled_python,
    slope,
    upstream,
    value,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import torch

    from autograder.core.tape import Tape

SQUARE = slope("2", "the 2 of the square (d (a − y)²/da = 2(a − y))")
OPEN = slope("1", "the open ReLU (da/dh = 1)")


@dataclass(frozen=True)
class Neuron(Structure):
    """h = gain·(w·x + b), a = ReLU(h), L = scale·(a − y)²."""

    gain: Fraction = Fraction(1)
    scale: Fraction = Fraction(1)

    @property
    def tag(self) -> str:
        def name(k: Fraction) -> str:
            return str(k.numerator) + ("" if k.denominator == 1 else f"_{k.denominator}")

        return f"k{name(self.gain)}_c{name(self.scale)}"

    def pre(self, w: torch.Tensor, x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """h (PyTorch)."""
        h = w * x + b
        return h if self.gain == 1 else h * self.gain.numerator / self.gain.denominator

    def loss(self, a: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """L (PyTorch)."""
        square = (a - y) ** 2
        return square if self.scale == 1 else square * self.scale.numerator / self.scale.denominator

    @property
    def h_of(self) -> str:
        """h as Python arithmetic over the givens: w * x + b, 2 * (w * x + b)."""
        return "w * x + b" if self.gain == 1 else scaled_python(self.gain, "(w * x + b)")

    def loss_of(self, a: str) -> str:
        """L from the activation `a`, as Python arithmetic: (a - y) ** 2 / 2."""
        return scaled_python(self.scale, f"({a} - y) ** 2")

    @property
    def h_words(self) -> str:
        """h in math: w·x + b, 2(w·x + b), (w·x + b)/2."""
        return "w·x + b" if self.gain == 1 else scaled_math(self.gain, "(w·x + b)")

    @property
    def loss_words(self) -> str:
        """L in math: (a − y)², (a − y)²/2, 3(a − y)²."""
        return scaled_math(self.scale, "(a − y)²")

    @property
    def words(self) -> str:
        return f"the neuron h = {self.h_words}, a = ReLU(h), L = {self.loss_words}"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (("h", self.h_of), ("L", self.loss_of(f"max({self.h_of}, 0)")))

    @property
    def loss_slope(self) -> Factor:
        """The loss's local slope's multiple of (a − y), 2c."""
        if self.scale == 1:
            return SQUARE
        twice = 2 * self.scale
        slope_words = scaled_math(twice, "(a − y)") if twice != 1 else "a − y"
        return slope(
            fraction_python(twice), f"the {twice} of d({self.loss_words})/da = {slope_words}"
        )

    @property
    def dL_da_words(self) -> str:
        """dL/da in math: 2(a − y), a − y, 3(a − y)."""
        twice = 2 * self.scale
        return "a − y" if twice == 1 else scaled_math(twice, "(a − y)")

    @property
    def gain_factors(self) -> tuple[Factor, ...]:
        """The gain's local slope, a factor of dh/dw and dh/db (none for the lesson's 1)."""
        if self.gain == 1:
            return ()
        return (slope(fraction_python(self.gain), f"the gain {self.gain} of h = {self.h_words}"),)

    @property
    def dh_dw_words(self) -> str:
        """dh/dw in math: x, 2x, x/2."""
        return scaled_math(self.gain, "x")

    @property
    def dh_db_words(self) -> str:
        """dh/db in math: 1, 2, 1/2."""
        return str(self.gain)


LESSON = Neuron()
OPEN_VARIANTS = (
    Neuron(Fraction(8), Fraction(1, 2)),
    Neuron(Fraction(10), Fraction(4)),
    Neuron(Fraction(1, 20), Fraction(5)),
)
"""The open neuron's structures (03 and 09). Never the lesson's gain nor its loss, so a
copied h, L or dL/da is wrong for every learner. A gain or a loss slope 2c of 8 or more
(or 1, or 1/20) is never one of the learner's numbers, their reciprocal or a ratio of two
(|x| ≤ 7, every given whole, |y| ≤ 13), and the gain never shares a number with 2c: a
dropped factor is named as the one it is even from the number alone."""

SHUT_VARIANTS = (
    Neuron(Fraction(2), Fraction(3, 2)),
    Neuron(Fraction(1, 2), Fraction(3)),
    Neuron(Fraction(3), Fraction(1, 2)),
)
"""The shut neuron's structures (04): small gains and loss slopes (2 and 3, 1/2 and 6, 3
and 1), never a leaky_slope nor its reciprocal (0.01 to 0.4), nor a ratio of one to x."""

OPEN_NEURON_GIVENS = (
    Given(
        "x",
        (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
        lesson=2.0,
        meaning="input",
    ),
    Given(
        "w",
        (
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            2.0,
            -2.0,
            -3.0,
            -4.0,
            -5.0,
            -6.0,
            -7.0,
            -8.0,
            -9.0,
        ),
        lesson=3.0,
        meaning="weight",
    ),
    Given(
        "b",
        (
            -1.0,
            1.0,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
            -2.0,
            -3.0,
            -4.0,
            -5.0,
            -6.0,
            -7.0,
            -8.0,
            -9.0,
        ),
        lesson=-1.0,
        meaning="bias",
    ),
    Given(
        "y",
        (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
        lesson=2.0,
        meaning="target",
    ),
)
"""x, w, b and y of the open neuron: the lesson's numbers and what learners' are drawn from."""


def open_neuron_constraints(
    neuron: Neuron,
) -> tuple[tuple[str, Callable[[Mapping[str, float]], bool]], ...]:
    """`neuron` is open (h > 0) and its loss is not zero (h ≠ y). A class learner's numbers
    are drawn for the lesson's neuron, apart from their structure: a structure whose loss
    their numbers make zero is not drawn for them (`specs.learner_problem`)."""
    gain = float(neuron.gain)
    nonzero = "the loss is not zero" + ("" if neuron.gain == 1 else f": h = {neuron.h_words} ≠ y")
    return (
        ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
        (nonzero, lambda g: gain * (g["w"] * g["x"] + g["b"]) != g["y"]),
        pairwise_different("x", "w", "b", "y"),
    )


def neuron_program(neuron: Neuron) -> Callable[[Tape], None]:
    """The program of `neuron`: h, a and L."""

    def program(t: Tape) -> None:
        """h, a and L."""
        import torch

        x, w, b, y = t.given("x", "w", "b", "y")
        h = t.node("h", neuron.pre(w, x, b))
        a = t.node("a", torch.relu(h))
        t.node("L", neuron.loss(a, y))

    return program


def forward_parts(neuron: Neuron, a_hint: str, loss_hint: str) -> tuple[Part, ...]:
    """Parts: h, a and L."""
    return (
        Part(
            "h",
            "h",
            "forward",
            f"Your h = {neuron.h_words}.",
            "h from w, x and b",
            of=("h",),
            solution=neuron.h_of,
            title="the pre-activation h",
        ),
        Part(
            "a",
            "a",
            "forward",
            a_hint,
            "ReLU(h) = max(h, 0)",
            of=("a",),
            solution="max(h, 0)",
            title="the activation a",
        ),
        Part(
            "L",
            "L",
            "forward",
            f"Yours is {neuron.words}. {loss_hint}",
            "the loss from a and y",
            of=("L",),
            solution=neuron.loss_of("a"),
            title="the loss L",
        ),
    )


def backward_parts(
    neuron: Neuron, gate: Gate, dL_da_hint: str, da_dh_hint: str
) -> tuple[Part, ...]:
    """Parts: dL/da, the ReLU's local slope (open: 1, shut: 0) and dL/dh."""
    return (
        Part(
            "dL_da",
            "dL/da",
            "gradient",
            f"The slope of your L = {neuron.loss_words} is {neuron.dL_da_words}."
            + (f" {dL_da_hint}" if dL_da_hint else ""),
            "the slope of the loss at a",
            of=("L", "a"),
            factors=(neuron.loss_slope, value("a - y")),
            title="the gradient at a",
        ),
        Part(
            "da_dh",
            "da/dh",
            "local_slope",
            da_dh_hint,
            "1 if h > 0, else 0",
            of=("a", "h"),
            gate=gate,
            solution="1.0" if gate == "open" else "0.0",
            title="the local slope of the ReLU",
        ),
        Part(
            "dL_dh",
            "dL/dh",
            "gradient",
            "dL/dh = dL/da × da/dh.",
            "dL/da × da/dh",
            of=("L", "h"),
            gate=gate,
            factors=(upstream("dL_da"), upstream("da_dh")),
            title="the gradient at h",
        ),
    )
