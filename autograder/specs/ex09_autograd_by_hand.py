"""09: the capstone. The learner's own `Value` class, judged on random graphs against
PyTorch (parts of kind "class"), then the course's neuron by hand with the learner's numbers
(the open neuron of exercise 03: `specs.neuron`, in a class each learner's own `Neuron`)."""

from __future__ import annotations

from autograder.core.spec import ExerciseSpec, Part, Structure, given, value
from autograder.core.tasks import ClassTask
from autograder.specs.neuron import (
    LESSON,
    OPEN,
    OPEN_NEURON_GIVENS,
    OPEN_VARIANTS,
    Neuron,
    neuron_program,
    open_neuron_constraints,
)


def _class_part(name: str, title: str, task: ClassTask) -> Part:
    """A class part: a point for each operation it credits."""
    return Part(
        name, task.label, "class", task.hint, f"your Value: {title}",
        points=len(task.units), build=task, title=title,
    )  # fmt: skip


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the neuron `structure`: the class parts and its neuron's parts."""
    assert isinstance(structure, Neuron)
    neuron = structure
    loss_slope, gain = neuron.loss_slope, neuron.gain_factors
    return ExerciseSpec(
        name="09_autograd_by_hand",
        title="Autograd by hand",
        lesson="09_autograd_by_hand",
        givens=OPEN_NEURON_GIVENS,
        constraints=open_neuron_constraints(neuron),
        program=neuron_program(neuron),
        parts=(
            _class_part(
                "value_add",
                "addition, with Values and numbers, and backward()",
                ClassTask(
                    "Value",
                    "Value with + and backward()",
                    ("add", "backward"),
                    "+ passes its gradient to both sides unchanged (+=, for a value used twice); "
                    "backward() sets the output's grad to 1 and runs every _backward in reverse "
                    "topological order, each node once.",
                ),
            ),
            _class_part(
                "value_mul",
                "multiplication, unary minus and subtraction",
                ClassTask(
                    "Value",
                    "Value with *, unary - and - (both sides)",
                    ("mul", "neg", "sub"),
                    "Each side of a * b gets the other side's value times out.grad; -a sends "
                    "-out.grad to a; a - b sends +out.grad to a and -out.grad to b. With a number "
                    "on the left, Python calls __rmul__ / __rsub__.",
                ),
            ),
            _class_part(
                "value_pow",
                "powers with a number exponent, and division",
                ClassTask(
                    "Value",
                    "Value with ** (a number exponent) and / (both sides)",
                    ("pow", "div"),
                    "The slope of x**n is n * x**(n - 1). a / b sends out.grad / b to a and "
                    "-a/b² × out.grad to b (lesson 9's a * b**-1 gets both from * and **); with a "
                    "number on the left, Python calls __rtruediv__.",
                ),
            ),
            _class_part(
                "value_relu",
                "ReLU",
                ClassTask(
                    "Value",
                    "Value with .relu()",
                    ("relu",),
                    "ReLU's slope is 1 where its input was positive, 0 elsewhere (0 at exactly 0, "
                    "as PyTorch).",
                ),
            ),
            Part(
                "L",
                "L",
                "forward",
                f"Your neuron: {neuron.words}.",
                "your loss, where a = ReLU(h): compute a first",
                of=("L",),
                solution=f"a = max({neuron.h_of}, 0)\n{neuron.loss_of('a')}",
                title="the neuron's loss",
            ),
            Part(
                "dL_dw",
                "dL/dw",
                "gradient",
                f"dL/da × da/dh × dh/dw: dL/da = {neuron.dL_da_words}, da/dh = 1 (open ReLU), "
                f"dh/dw = {neuron.dh_dw_words}.",
                "dL/da × da/dh × dh/dw, with a = ReLU(h)",
                of=("L", "w"),
                gate="open",
                factors=(loss_slope, value("a - y"), OPEN, *gain, given("x")),
                title="the weight's gradient, w.grad",
            ),
            Part(
                "dL_db",
                "dL/db",
                "gradient",
                f"dL/db = dL/da × da/dh × dh/db, and dh/db = {neuron.dh_db_words}.",
                "dL/da × da/dh × dh/db, with a = ReLU(h)",
                of=("L", "b"),
                gate="open",
                factors=(loss_slope, value("a - y"), OPEN, *gain),
                title="the bias's gradient, b.grad",
            ),
        ),
        written=(("what_pytorch_adds", 1),),
        structure=neuron,
        variants=OPEN_VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
