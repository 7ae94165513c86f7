"""03: one neuron, h = w·x + b, a = ReLU(h), L = (a − y)², with the ReLU open.

The lesson's neuron is that one; in a class each learner's (`neuron.Neuron`) has its own
gain on h and its own scale on the loss, so the same parts ask for their own slopes."""

from __future__ import annotations

from autograder.core.spec import ExerciseSpec, Part, Structure, given, upstream
from autograder.specs.neuron import (
    LESSON,
    OPEN_NEURON_GIVENS,
    OPEN_VARIANTS,
    Neuron,
    backward_parts,
    forward_parts,
    neuron_program,
    open_neuron_constraints,
)


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the neuron `structure`: its program and parts."""
    assert isinstance(structure, Neuron)
    neuron = structure
    return ExerciseSpec(
        name="03_a_neuron_by_hand",
        title="A neuron by hand",
        lesson="03_a_neuron_by_hand",
        givens=OPEN_NEURON_GIVENS,
        constraints=open_neuron_constraints(neuron),
        program=neuron_program(neuron),
        parts=(
            *forward_parts(neuron, "ReLU keeps a positive h unchanged.", "y is the target."),
            *backward_parts(
                neuron,
                "open",
                "",
                "ReLU's slope is 1 where h > 0 and 0 where h < 0.",
            ),
            Part(
                "dh_dw",
                "dh/dw",
                "local_slope",
                f"h = {neuron.h_words}: its slope with respect to w is {neuron.dh_dw_words}.",
                "how much h moves per unit of w",
                of=("h", "w"),
                factors=(*neuron.gain_factors, given("x")),
                title="the local slope of h with respect to w",
            ),
            Part(
                "dh_db",
                "dh/db",
                "local_slope",
                f"h = {neuron.h_words}: its slope with respect to b is {neuron.dh_db_words}.",
                "how much h moves per unit of b",
                of=("h", "b"),
                solution="1.0" if neuron.gain == 1 else neuron.gain_factors[0].expr,
                title="the local slope of h with respect to b",
            ),
            Part(
                "dL_dw",
                "dL/dw",
                "gradient",
                f"dL/dw = dL/dh × dh/dw, and dh/dw = {neuron.dh_dw_words}.",
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
                f"dL/db = dL/dh × dh/db, and dh/db = {neuron.dh_db_words}.",
                "dL/dh × dh/db",
                of=("L", "b"),
                gate="open",
                factors=(upstream("dL_dh"), upstream("dh_db")),
                title="the gradient of the bias",
            ),
        ),
        written=(("why_dw_and_db_differ", 1),),
        structure=neuron,
        variants=OPEN_VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
