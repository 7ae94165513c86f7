"""04: the neuron of 03 with its ReLU shut (h < 0), then the same numbers through a LeakyReLU.

The lesson's neuron is 03's; in a class each learner's (`neuron.Neuron`) has its own gain
on h (positive: h stays negative, the ReLU shut) and its own scale on the loss."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from autograder.core.spec import (
    ExerciseSpec,
    Given,
    Part,
    Structure,
    given,
    pairwise_different,
    upstream,
    value,
)
from autograder.specs.neuron import (
    LESSON,
    SHUT_VARIANTS,
    Neuron,
    backward_parts,
    forward_parts,
    neuron_program,
)

if TYPE_CHECKING:
    from autograder.core.tape import Tape

SHUT = "Everything behind a shut ReLU is multiplied by its slope, 0."


def program_for(neuron: Neuron) -> Callable[[Tape], None]:
    """The neuron with a ReLU, and the same pre-activation through a LeakyReLU."""
    relu_neuron = neuron_program(neuron)

    def program(t: Tape) -> None:
        """The neuron with a ReLU, and the same pre-activation through a LeakyReLU."""
        import torch

        relu_neuron(t)
        h, y, leaky_slope = t.nodes["h"], t.nodes["y"], t.nodes["leaky_slope"]
        leaky_a = t.node("leaky_a", torch.where(h > 0, h, leaky_slope * h))
        t.node("leaky_L", neuron.loss(leaky_a, y))

    return program


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the neuron `structure`: its program and parts."""
    assert isinstance(structure, Neuron)
    neuron = structure
    dh_dw, dh_db = neuron.dh_dw_words, neuron.dh_db_words
    return ExerciseSpec(
        name="04_the_dead_relu",
        title="The dead ReLU",
        lesson="04_the_dead_relu",
        givens=(
            Given(
                "x",
                (-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0),
                lesson=-1.0,
                meaning="input",
            ),
            Given(
                "w",
                (3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
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
                "y",
                (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
                lesson=2.0,
                meaning="target",
            ),
            Given(
                "leaky_slope",
                (0.01, 0.1, 0.2, 0.3, 0.02, 0.05, 0.15, 0.25, 0.4, 0.35),
                lesson=0.01,
                meaning="LeakyReLU's slope for negative inputs",
            ),
        ),
        constraints=(
            ("the ReLU is shut: h = w·x + b < 0", lambda g: g["w"] * g["x"] + g["b"] < 0),
            pairwise_different("x", "w", "b", "y", "leaky_slope"),
        ),
        program=program_for(neuron),
        parts=(
            *forward_parts(neuron, "ReLU turns a negative h into 0.", "Here a = 0."),
            *backward_parts(
                neuron,
                "shut",
                "With a = 0 the loss still pulls on a.",
                "ReLU's slope where h < 0 is 0.",
            ),
            Part(
                "dL_dw",
                "dL/dw",
                "gradient",
                f"{SHUT} dh/dw = {dh_dw}.",
                "dL/dh × dh/dw",
                of=("L", "w"),
                gate="shut",
                factors=(upstream("dL_dh"), *neuron.gain_factors, given("x")),
                title="the gradient of the weight",
            ),
            Part(
                "dL_db",
                "dL/db",
                "gradient",
                f"{SHUT} dh/db = {dh_db}.",
                "dL/dh × dh/db",
                of=("L", "b"),
                gate="shut",
                factors=(upstream("dL_dh"), *neuron.gain_factors),
                solution="dL_dh * 1" if neuron.gain == 1 else "",
                title="the gradient of the bias",
            ),
            Part(
                "leaky_a",
                "a (LeakyReLU)",
                "forward",
                "LeakyReLU multiplies a negative h by leaky_slope.",
                "leaky_slope × h, for h < 0",
                of=("leaky_a",),
                solution="leaky_slope * h",
                title="the leaky activation",
            ),
            Part(
                "leaky_L",
                "L (LeakyReLU)",
                "forward",
                f"Your L = {neuron.loss_words} with the leaky a; write the arithmetic, not a "
                "rounded number.",
                "your loss with the leaky a",
                of=("leaky_L",),
                solution=neuron.loss_of("leaky_a"),
                title="the leaky loss",
            ),
            Part(
                "leaky_dL_da",
                "dL/da (LeakyReLU)",
                "gradient",
                f"{neuron.dL_da_words} with the leaky a.",
                "the slope of your loss at the leaky a",
                of=("leaky_L", "leaky_a"),
                factors=(neuron.loss_slope, value("leaky_a - y")),
                title="the gradient at the leaky a",
            ),
            Part(
                "leaky_da_dh",
                "da/dh (LeakyReLU)",
                "local_slope",
                "LeakyReLU's slope for h < 0 is leaky_slope, not 0.",
                "LeakyReLU's slope for h < 0",
                of=("leaky_a", "h"),
                gate="open",
                factors=(given("leaky_slope"),),
                title="the local slope of the LeakyReLU",
            ),
            Part(
                "leaky_dL_dw",
                "dL/dw (LeakyReLU)",
                "gradient",
                f"dL/da × leaky_slope × dh/dw, and dh/dw = {dh_dw}.",
                "dL/da × da/dh × dh/dw",
                of=("leaky_L", "w"),
                gate="open",
                factors=(
                    upstream("leaky_dL_da"),
                    upstream("leaky_da_dh"),
                    *neuron.gain_factors,
                    given("x"),
                ),
                title="the weight's gradient gets through",
            ),
            Part(
                "leaky_dL_db",
                "dL/db (LeakyReLU)",
                "gradient",
                f"dL/da × leaky_slope × dh/db, and dh/db = {dh_db}.",
                "dL/da × da/dh × dh/db",
                of=("leaky_L", "b"),
                gate="open",
                factors=(upstream("leaky_dL_da"), upstream("leaky_da_dh"), *neuron.gain_factors),
                title="the bias's gradient gets through",
            ),
        ),
        written=(("why_both_are_zero", 1),),
        structure=neuron,
        variants=SHUT_VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
