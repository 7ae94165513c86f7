"""06: one backward pass fills the gradient of every parameter of y = w·x + b; a value used
twice (f = u·u²) gets the sum of its paths' shares, and a detached path drops its share.

The lesson's problem is the loss (y − target)² and f = u·sq with sq = u²; in a class each
learner's (`Model`) has its own scale of the loss and of f, so the same parts ask for their
own gradients and their own paths' shares."""

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
    upstream,
    value,
)

if TYPE_CHECKING:
    from autograder.core.tape import Tape


@dataclass(frozen=True)
class Model(ScaledSquare, Structure):
    """The loss top/bottom·(y − target)² of y = w·x + b, and f = factor·u·sq with sq = u²
    (u reaches f along two paths in every structure). The model y = w·x + b is the lesson's
    in all: its loss is never 0 (y ≠ target is drawn for every learner), whatever the scale;
    another y, as b − w·x, could equal the target for numbers drawn for the lesson's."""

    top: int
    bottom: int = 1
    factor: int = 1

    @property
    def tag(self) -> str:
        return f"{self.scale_tag('l')}_f{self.factor}"

    def loss_of(self, y: str) -> str:
        """The loss at `y`, as Python arithmetic: (y - target) ** 2 / 2, 3 * (y - target) ** 2."""
        return scaled_python(self.scale, f"({y} - target) ** 2")

    @property
    def loss_words(self) -> str:
        return scaled_math(self.scale, "(y − target)²")

    @property
    def dL_dy(self) -> tuple[Factor, ...]:
        """dL/dy as the chain's factors: the scaled square's slope, then (y − target)."""
        return (self.square_slope("y − target", "y"), value("y_value - target"))

    @property
    def f_words(self) -> str:
        """f in math: u·sq, 3u·sq."""
        return "u·sq" if self.factor == 1 else f"{self.factor}u·sq"

    @property
    def other(self) -> tuple[str, str]:
        """df/dsq, the rest of f beside sq: (Python arithmetic, math): u, 3u."""
        if self.factor == 1:
            return "u", "u"
        return f"{self.factor} * u", f"{self.factor}u"

    @property
    def rest(self) -> tuple[str, str]:
        """The direct path's share, the rest of f beside the factor u: (Python arithmetic,
        math): u**2 and "sq = u²", 3 * u**2 and "3·sq = 3u²"."""
        if self.factor == 1:
            return "u**2", "sq = u²"
        return f"{self.factor} * u**2", f"{self.factor}·sq = {self.factor}u²"

    @property
    def words(self) -> str:
        return f"the loss {self.loss_words}, f = {self.f_words} with sq = u²"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (
            ("loss", self.loss_of("w * x + b")),
            ("sq", "u**2"),
            ("f", f"{self.other[0]} * u**2"),
        )


LESSON = Model(1)
VARIANTS = (Model(1, 2, 3), Model(3, 1, 2), Model(1, 2, 2))
"""Never the lesson's loss nor its f: a copied loss, gradient or share is wrong for every
learner. f is scaled, not sq: with sq = s·u² the direct share s·u² and dsq/du = 2s·u would be
the same number at u = 2 for every s."""


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the model `structure`: its program and parts."""
    assert isinstance(structure, Model)
    model = structure
    (direct, direct_words), (other, other_words) = model.rest, model.other
    through = f"{other} * 2 * u"
    total = f"{direct} + {through}"
    through_words = f"{other_words} × 2u"

    def program(t: Tape) -> None:
        """A linear model and its scaled squared error; f = factor·u·sq, sq = u²."""
        w, b, x, target = t.given("w", "b", "x", "target")
        y = t.node("y", w * x + b)
        t.node("loss", (y - target) ** 2 * model.top / model.bottom)
        (u,) = t.given("u")
        first = t.node("u_direct", u * 1.0)  # u as the first factor: the direct path
        via = t.node("u_via_sq", u * 1.0)  # u through sq
        sq = t.node("sq", via**2)
        t.node("f", first * sq if model.factor == 1 else model.factor * first * sq)
        held = t.leaves["u"].detach() ** 2 * model.factor  # the rest, detached: a constant
        t.node("f_detached", u * held)

    return ExerciseSpec(
        name="06_one_backward_every_parameter",
        title="One backward, every parameter",
        lesson="06_one_backward_every_parameter",
        givens=(
            Given(
                "w",
                (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -2.0, -3.0, -4.0, -5.0, -7.0),
                lesson=2.0,
                meaning="weight",
            ),
            Given(
                "b",
                (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
                lesson=1.0,
                meaning="bias",
            ),
            Given(
                "x",
                (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
                lesson=3.0,
                meaning="input",
            ),
            Given(
                "target",
                (5.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
                lesson=5.0,
                meaning="target",
            ),
            Given(
                "u",
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
                meaning="the value used twice in f",
            ),
        ),
        constraints=(
            ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["target"]),
            pairwise_different("w", "b", "x", "target"),
        ),
        program=program,
        parts=(
            Part(
                "y_value",
                "y",
                "forward",
                "y = w·x + b.",
                "w·x + b",
                of=("y",),
                solution="w * x + b",
                title="the prediction y",
            ),
            Part(
                "loss",
                "loss",
                "forward",
                f"Your problem: {model.words}.",
                "the loss from y_value and target",
                of=("loss",),
                solution=model.loss_of("y_value"),
                title="the loss",
            ),
            Part(
                "dL_dy",
                "dL/dy",
                "gradient",
                f"The slope of {model.loss_words} with respect to y.",
                "the slope of the loss at y",
                of=("loss", "y"),
                factors=model.dL_dy,
                title="the gradient at y",
            ),
            Part(
                "dy_dw",
                "dy/dw",
                "local_slope",
                "y = w·x + b: its slope with respect to w is x.",
                "how much y moves per unit of w",
                of=("y", "w"),
                factors=(given("x"),),
                title="the local slope of y with respect to w",
            ),
            Part(
                "dL_dw",
                "dL/dw",
                "gradient",
                "dL/dw = dL/dy × dy/dw.",
                "dL/dy × dy/dw",
                of=("loss", "w"),
                factors=(upstream("dL_dy"), upstream("dy_dw")),
                title="the weight's gradient",
            ),
            Part(
                "dL_db",
                "dL/db",
                "gradient",
                "dL/db = dL/dy × dy/db, and dy/db = 1.",
                "dL/dy × dy/db, and dy/db = 1",
                of=("loss", "b"),
                factors=(upstream("dL_dy"),),
                solution="dL_dy * 1",
                title="the bias's gradient",
            ),
            Part(
                "share_direct",
                "the share along the direct path",
                "gradient",
                f"Directly, u is the factor u of {model.f_words}: its slope is the rest of f, "
                f"{direct_words}.",
                "the slope of f towards its factor u: the rest of f",
                of=("f", "u_direct"),
                solution=direct,
                mistakes=(
                    (
                        "other_path",
                        through,
                        f"That is the share through sq, {through_words}; the direct "
                        f"path's share is the rest of f, {direct_words}.",
                    ),
                    (
                        "total",
                        total,
                        "That is the total over both paths; this part asks "
                        "for the direct path's share alone.",
                    ),
                ),
                title="paths add up: the direct path's share",
            ),
            Part(
                "share_sq",
                "the share through sq",
                "gradient",
                f"Through sq = u²: df/dsq = {other_words} (the rest of f), times dsq/du = 2u.",
                "df/dsq × dsq/du",
                of=("f", "u_via_sq"),
                solution=through,
                mistakes=(
                    (
                        "other_path",
                        direct,
                        "That is the direct path's share; through sq it is df/dsq × dsq/du = "
                        f"{through_words}.",
                    ),
                    (
                        "slope_alone",
                        "2 * u",
                        f"That is dsq/du alone: multiply it by df/dsq = {other_words}, the rest "
                        "of f.",
                    ),
                ),
                title="paths add up: the share through the square",
            ),
            Part(
                "df_du",
                "df/du (both paths)",
                "gradient",
                "u reaches f along two paths: add their shares.",
                "the direct share + the share through sq",
                of=("f", "u"),
                solution="share_direct + share_sq",
                mistakes=(
                    (
                        "one_path",
                        direct,
                        "You followed one path only (the direct one): add the "
                        f"share through sq, {through_words}.",
                    ),
                    (
                        "one_path",
                        through,
                        "You followed one path only (through sq): add the "
                        f"direct path's share, {direct_words}.",
                    ),
                    (
                        "multiplied",
                        f"({direct}) * ({through})",
                        "The shares of two paths add up; they do not multiply.",
                    ),
                ),
                title="paths add up: the total",
            ),
            Part(
                "grad_detached",
                f"u.grad for f = {model.other[0]} * sq.detach()",
                "gradient",
                "Detaching sq cuts the path through it: only the direct path's share arrives.",
                "what arrives in u.grad when the path through sq is cut",
                of=("f_detached", "u"),
                solution="share_direct",
                mistakes=(
                    (
                        "both_paths",
                        total,
                        "The detached path sends nothing back: only the "
                        f"direct path's share, {direct_words}, reaches u.grad.",
                    ),
                    (
                        "wrong_path",
                        through,
                        "It is the path through sq that is cut: what is "
                        f"left is the direct path's share, {direct_words}.",
                    ),
                ),
                title="a detached path drops its share",
            ),
        ),
        written=(("one_call_at_scale", 1),),
        structure=model,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
