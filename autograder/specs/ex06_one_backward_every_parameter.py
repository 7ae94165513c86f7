"""06: one backward pass fills the gradient of every parameter of y = w·x + b; a value used
twice (f = u·u²) gets the sum of its paths' shares, and a detached path drops its share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import (
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
    from autograder.core.tape import Tape


def program(t: Tape) -> None:
    """A linear model and its squared error."""
    w, b, x, target = t.given("w", "b", "x", "target")
    y = t.node("y", w * x + b)
    t.node("loss", (y - target) ** 2)
    (u,) = t.given("u")
    first = t.node("u_direct", u * 1.0)  # u as the first factor: the direct path
    sq = t.node("sq", t.node("u_via_sq", u * 1.0) ** 2)  # u through its square
    t.node("f", first * sq)
    held = t.leaves["u"].detach() ** 2  # the square, detached: a constant to backward
    t.node("f_detached", u * held)


SPEC = ExerciseSpec(
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
            meaning="f = u·u²",
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
            "loss = (y - target)².",
            "(y − target)²",
            of=("loss",),
            solution="(y_value - target) ** 2",
            title="the loss",
        ),
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
        Part(
            "share_direct",
            "the share along the direct path",
            "gradient",
            "Directly, u is the first factor of u·sq: its slope is the other factor, sq = u².",
            "the slope of u·sq towards its first factor: the other factor",
            of=("f", "u_direct"),
            solution="u**2",
            mistakes=(
                (
                    "other_path",
                    "2 * u ** 2",
                    "That is the share through sq, u × 2u; the direct "
                    "path's share is the other factor, sq = u².",
                ),
                (
                    "total",
                    "3 * u ** 2",
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
            "Through sq: df/dsq = u (the other factor), times dsq/du = 2u.",
            "df/dsq × dsq/du",
            of=("f", "u_via_sq"),
            solution="u * 2 * u",
            mistakes=(
                (
                    "other_path",
                    "u ** 2",
                    "That is the direct path's share; through sq it is df/dsq × dsq/du = u × 2u.",
                ),
                (
                    "slope_alone",
                    "2 * u",
                    "That is dsq/du alone: multiply it by df/dsq = u, the other factor of f.",
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
                    "u ** 2",
                    "You followed one path only (the direct one): add the "
                    "share through sq, u × 2u.",
                ),
                (
                    "one_path",
                    "2 * u ** 2",
                    "You followed one path only (through sq): add the "
                    "direct path's share, sq = u².",
                ),
                (
                    "multiplied",
                    "2 * u ** 4",
                    "The shares of two paths add up; they do not multiply.",
                ),
            ),
            title="paths add up: the total",
        ),
        Part(
            "grad_detached",
            "u.grad for f = u * sq.detach()",
            "gradient",
            "Detaching sq cuts the path through it: only the direct path's share arrives.",
            "what arrives in u.grad when the path through sq is cut",
            of=("f_detached", "u"),
            solution="share_direct",
            mistakes=(
                (
                    "both_paths",
                    "3 * u ** 2",
                    "The detached path sends nothing back: only the "
                    "direct path's share, sq = u², reaches u.grad.",
                ),
                (
                    "wrong_path",
                    "2 * u ** 2",
                    "It is the path through sq that is cut: what is "
                    "left is the direct path's share, sq = u².",
                ),
            ),
            title="a detached path drops its share",
        ),
    ),
    written=(("one_call_at_scale", 1),),
)
