"""06: one backward pass fills the gradient of every parameter of y = w·x + b."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.spec import (
    ExerciseSpec,
    Given,
    Part,
    given,
    pairwise_different,
    slope,
    upstream,
    value,
)

if TYPE_CHECKING:
    from autograder.spec_engine import Tape


def program(t: Tape) -> None:
    """A linear model and its squared error."""
    w, b, x, target = t.given("w", "b", "x", "target")
    y = t.node("y", w * x + b)
    t.node("loss", (y - target) ** 2)


SPEC = ExerciseSpec(
    name="06_one_backward_every_parameter",
    title="One backward, every parameter",
    lesson="06_one_backward_every_parameter",
    givens=(
        Given("w", (2.0, 3.0, 4.0, 5.0, 7.0, -3.0, -5.0), lesson=2.0, meaning="weight"),
        Given("b", (1.0, 2.0, 3.0, 5.0, -2.0, -3.0, -5.0), lesson=1.0, meaning="bias"),
        Given("x", (3.0, 4.0, 5.0, 6.0, 7.0, -3.0, -4.0, -5.0), lesson=3.0, meaning="input"),
        Given("target", (5.0, 2.0, 6.0, 7.0, 8.0, 9.0, 11.0), lesson=5.0, meaning="target"),
    ),
    constraints=(
        ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["target"]),
        pairwise_different("w", "b", "x", "target"),
    ),
    program=program,
    parts=(
        Part("y_value", "y", "forward", "y = w·x + b.", "w·x + b", of=("y",),
             solution="w * x + b", title="the prediction y"),
        Part("loss", "loss", "forward", "loss = (y - target)².", "(y − target)²",
             of=("loss",), solution="(y_value - target) ** 2", title="the loss"),
        Part(
            "dL_dy",
            "dL/dy",
            "gradient",
            "The slope of (y - target)² is 2(y - target).",
            "2(y − target)",
            of=("loss", "y"),
            factors=(
                slope("2", "the 2 of the square (d (y − target)²/dy = 2(y − target))"),
                value("y_value - target"),
            ),
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
    ),
    written=(("one_call_at_scale", 1),),
)
