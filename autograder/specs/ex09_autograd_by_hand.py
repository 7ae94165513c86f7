"""09: the capstone. The learner's own `Value` class, judged on random graphs against
PyTorch (parts of kind "class"), then the course's neuron by hand with the learner's numbers
(the open neuron of exercise 03: `specs.neuron`)."""

from __future__ import annotations

from autograder.answers.value_graphs import ALL_OPS
from autograder.core.spec import ExerciseSpec, Part, given, value
from autograder.core.tasks import ClassTask
from autograder.specs.neuron import (
    OPEN,
    OPEN_NEURON_CONSTRAINTS,
    OPEN_NEURON_GIVENS,
    SQUARE,
    neuron,
)

ADD = ("add", "add_const", "radd_const", "neg")
MUL = ("add", "mul", "mul_const", "rmul_const", "sub", "sub_const", "rsub_const")
POW = ("add", "mul", "mul_const", "pow")


def _class_part(name: str, points: int, title: str, task: ClassTask) -> Part:
    return Part(
        name, task.label, "class", task.hint, f"your Value: {title}",
        points=points, build=task, title=title,
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
            2,
            "addition, with Values and numbers, and unary minus",
            ClassTask(
                "Value",
                "Value with +, unary - and backward()",
                ADD,
                "+ passes its gradient to both sides unchanged; unary - multiplies it by -1; "
                "backward() sets the output's grad to 1 and runs every _backward in reverse "
                "topological order.",
            ),
        ),
        _class_part(
            "value_mul",
            2,
            "multiplication and subtraction",
            ClassTask(
                "Value",
                "Value with *, - (both sides)",
                MUL,
                "Each side of a * b gets the other side's value times out.grad; a - b sends "
                "+out.grad to a and -out.grad to b. With a number on the left, Python calls "
                "__rmul__ / __rsub__.",
            ),
        ),
        _class_part(
            "value_pow",
            1,
            "powers with a number exponent",
            ClassTask(
                "Value",
                "Value with ** (a number exponent)",
                POW,
                "The slope of x**n is n * x**(n - 1).",
            ),
        ),
        _class_part(
            "value_relu",
            2,
            "ReLU, and everything together",
            ClassTask(
                "Value",
                "Value with .relu(), on graphs of every operation",
                ALL_OPS,
                "ReLU's slope is 1 where its input was positive, 0 elsewhere.",
            ),
        ),
        Part(
            "L",
            "L",
            "forward",
            "h = w·x + b, a = ReLU(h), L = (a - y)².",
            "(a − y)²",
            of=("L",),
            solution="a = max(w * x + b, 0)\n(a - y) ** 2",
            title="the neuron's loss",
        ),
        Part(
            "dL_dw",
            "dL/dw",
            "gradient",
            "dL/dw = 2(a - y) × da/dh × dh/dw, with da/dh = 1 (the ReLU is open) and dh/dw = x.",
            "2(a − y) × 1 × x",
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
            "2(a − y) × 1 × 1",
            of=("L", "b"),
            gate="open",
            factors=(SQUARE, value("a - y"), OPEN),
            title="the bias's gradient, b.grad",
        ),
    ),
    written=(("what_pytorch_adds", 1),),
)
