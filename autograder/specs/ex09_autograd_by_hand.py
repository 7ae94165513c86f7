"""09: the capstone. The learner's own `Value` class, judged on random graphs against
PyTorch (parts of kind "class"), then the course's neuron by hand with the learner's numbers
(the open neuron of exercise 03: `specs.neuron`)."""

from __future__ import annotations

from autograder.core.spec import ExerciseSpec, Part, given, value
from autograder.core.tasks import ClassTask
from autograder.specs.neuron import (
    OPEN,
    OPEN_NEURON_CONSTRAINTS,
    OPEN_NEURON_GIVENS,
    SQUARE,
    neuron,
)


def _class_part(name: str, title: str, task: ClassTask) -> Part:
    """A class part: a point for each operation it credits."""
    return Part(
        name, task.label, "class", task.hint, f"your Value: {title}",
        points=len(task.units), build=task, title=title,
    )  # fmt: skip


SPEC = ExerciseSpec(
    name="09_autograd_by_hand",
    title="Autograd by hand",
    lesson="09_autograd_by_hand",
    givens=OPEN_NEURON_GIVENS,
    constraints=OPEN_NEURON_CONSTRAINTS,
    program=neuron,
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
            "h = w·x + b, a = ReLU(h), L = (a - y)².",
            "(a − y)², where a = max(w·x + b, 0): compute a first",
            of=("L",),
            solution="a = max(w * x + b, 0)\n(a - y) ** 2",
            title="the neuron's loss",
        ),
        Part(
            "dL_dw",
            "dL/dw",
            "gradient",
            "dL/dw = 2(a - y) × da/dh × dh/dw, with da/dh = 1 (the ReLU is open) and dh/dw = x.",
            "2(a − y) × 1 × x, with a = max(w·x + b, 0)",
            of=("L", "w"),
            gate="open",
            factors=(SQUARE, value("a - y"), OPEN, given("x")),
            title="the weight's gradient, w.grad",
        ),
        Part(
            "dL_db",
            "dL/db",
            "gradient",
            "dL/db = 2(a - y) × da/dh × dh/db, and dh/db = 1.",
            "2(a − y) × 1 × 1, with a = max(w·x + b, 0)",
            of=("L", "b"),
            gate="open",
            factors=(SQUARE, value("a - y"), OPEN),
            title="the bias's gradient, b.grad",
        ),
    ),
    written=(("what_pytorch_adds", 1),),
)
