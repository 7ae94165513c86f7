"""03: one neuron, h = w·x + b, a = ReLU(h), L = (a − y)², with the ReLU open."""

from __future__ import annotations

from autograder.core.spec import ExerciseSpec, Part, given, upstream
from autograder.specs.neuron import (
    OPEN_NEURON_CONSTRAINTS,
    OPEN_NEURON_GIVENS,
    backward_parts,
    forward_parts,
    neuron,
)

SPEC = ExerciseSpec(
    name="03_a_neuron_by_hand",
    title="A neuron by hand",
    lesson="03_a_neuron_by_hand",
    givens=OPEN_NEURON_GIVENS,
    constraints=OPEN_NEURON_CONSTRAINTS,
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
