"""07: a derivative by hand, then the neuron of 03 with a second weight after the ReLU."""

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
    """The polynomial warm-up, and h = w·x + b, a = ReLU(h), out = w2·a, L = (out − target)²."""
    import torch

    x_cubic, x, w, b, w2, target = t.given("x_cubic", "x", "w", "b", "w2", "target")
    t.node("cubic", x_cubic**3 - 2 * x_cubic)
    h = t.node("h", w * x + b)
    a = t.node("a", torch.relu(h))
    out = t.node("out", w2 * a)
    t.node("L", (out - target) ** 2)


SPEC = ExerciseSpec(
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
            "x³ − 2x at x_cubic",
            "forward",
            "x³ - 2x at x = x_cubic.",
            "x³ − 2x at x = x_cubic",
            of=("cubic",),
            solution="x_cubic**3 - 2 * x_cubic",
            title="the value",
        ),
        Part(
            "cubic_slope",
            "d(x³ − 2x)/dx at x_cubic",
            "gradient",
            "Differentiate term by term (x³ and -2x), then put in x = x_cubic.",
            "differentiate x³ and −2x term by term, then put in x_cubic",
            of=("cubic", "x_cubic"),
            solution="3 * x_cubic**2 - 2",
            mistakes=(
                (
                    "term_dropped",
                    "3 * x_cubic**2",
                    "The -2x term has slope -2: it is missing.",
                ),
                (
                    "term_kept_x",
                    "3 * x_cubic**2 - 2 * x_cubic",
                    "The slope of -2x is -2, not -2x: differentiate that term too.",
                ),
                ("term_sign", "3 * x_cubic**2 + 2", "The slope of -2x is -2, not +2."),
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
            "L = (out - target)².",
            "(out − target)²",
            of=("L",),
            solution="(out - target) ** 2",
            title="the loss",
        ),
        Part(
            "dL_dout",
            "dL/dout",
            "gradient",
            "The slope of (out - target)² is 2(out - target).",
            "2(out − target)",
            of=("L", "out"),
            factors=(
                slope("2", "the 2 of the square (d (out − target)²/dout = 2(out − target))"),
                value("out - target"),
            ),
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
)
