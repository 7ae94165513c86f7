"""03: one neuron, h = w·x + b, a = ReLU(h), L = (a − y)², with the ReLU open."""

from __future__ import annotations

from autograder.exercises.neuron import backward_parts, forward_parts, neuron
from autograder.core.spec import ExerciseSpec, Given, Part, given, pairwise_different, upstream


SPEC = ExerciseSpec(
    name="03_a_neuron_by_hand",
    title="A neuron by hand",
    lesson="03_a_neuron_by_hand",
    givens=(
        Given("x", (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0), lesson=2.0, meaning="input"),
        Given("w", (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 2.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0,
             -8.0, -9.0), lesson=3.0, meaning="weight"),
        Given("b", (-1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -2.0, -3.0, -4.0, -5.0,
             -6.0, -7.0, -8.0, -9.0), lesson=-1.0, meaning="bias"),
        Given("y", (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0), lesson=2.0, meaning="target"),
    ),
    constraints=(
        ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
        ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["y"]),
        pairwise_different("x", "w", "b", "y"),
    ),
    program=neuron,
    parts=(
        *forward_parts("ReLU keeps a positive h unchanged.", "L = (a - y)² with the target y."),
        *backward_parts(
            "open",
            "The slope of (a - y)² is 2(a - y).",
            "ReLU's slope is 1 where h > 0 and 0 where h < 0.",
        ),
        Part(
            "dh_dw",
            "dh/dw",
            "local_slope",
            "h = w·x + b: its slope with respect to w is x.",
            "how much h moves per unit of w",
            of=("h", "w"),
            factors=(given("x"),),
            title="the local slope of h with respect to w",
        ),
        Part(
            "dh_db",
            "dh/db",
            "local_slope",
            "h = w·x + b: its slope with respect to b is 1.",
            "how much h moves per unit of b",
            of=("h", "b"),
            solution="1.0",
            title="the local slope of h with respect to b",
        ),
        Part(
            "dL_dw",
            "dL/dw",
            "gradient",
            "dL/dw = dL/dh × dh/dw, and dh/dw = x.",
            "dL/dh × dh/dw",
            of=("L", "w"),
            gate="open",
            factors=(upstream("dL_dh"), upstream("dh_dw")),
            title="the gradient of the weight",
        ),
        Part(
            "dL_db",
            "dL/db",
            "gradient",
            "dL/db = dL/dh × dh/db, and dh/db = 1.",
            "dL/dh × dh/db",
            of=("L", "b"),
            gate="open",
            factors=(upstream("dL_dh"), upstream("dh_db")),
            title="the gradient of the bias",
        ),
    ),
    written=(("why_dw_and_db_differ", 1),),
)
