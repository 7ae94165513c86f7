"""09: the capstone. The learner's own `Value` class, judged on random graphs against
PyTorch (parts of kind "class"), then the course's neuron by hand with the learner's numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.answers.classes import ClassTask
from autograder.core.spec import ExerciseSpec, Given, Part, given, pairwise_different, slope, value

if TYPE_CHECKING:
    from autograder.core.engine import Tape


def program(t: Tape) -> None:
    """The neuron of lesson 3, now with the learner's numbers: h = w·x + b, a = ReLU(h)."""
    import torch

    x, w, b, y = t.given("x", "w", "b", "y")
    h = t.node("h", w * x + b)
    a = t.node("a", torch.relu(h))
    t.node("L", (a - y) ** 2)


def _class_part(name: str, title: str, task: ClassTask) -> Part:
    """A class part: a point for each operation it credits."""
    return Part(
        name, task.label, "class", task.hint, f"your Value: {title}",
        points=len(task.units), build=task, title=title,
    )  # fmt: skip


SQUARE = slope("2", "the 2 of the square (d (a − y)²/da = 2(a − y))")
OPEN = slope("1", "the open ReLU (da/dh = 1)")

SPEC = ExerciseSpec(
    name="09_autograd_by_hand",
    title="Autograd by hand",
    lesson="09_autograd_by_hand",
    givens=(
        Given(
            "x",
            (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0),
            lesson=2.0,
            meaning="input",
        ),
        Given(
            "w",
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
            meaning="weight",
        ),
        Given(
            "b",
            (
                -1.0,
                1.0,
                2.0,
                3.0,
                4.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                -2.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
            ),
            lesson=-1.0,
            meaning="bias",
        ),
        Given(
            "y",
            (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0),
            lesson=2.0,
            meaning="target",
        ),
    ),
    constraints=(
        ("the ReLU is open: h = w·x + b > 0", lambda g: g["w"] * g["x"] + g["b"] > 0),
        ("the loss is not zero", lambda g: g["w"] * g["x"] + g["b"] != g["y"]),
        pairwise_different("x", "w", "b", "y"),
    ),
    program=program,
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
            "powers with a number exponent",
            ClassTask(
                "Value",
                "Value with ** (a number exponent)",
                ("pow",),
                "The slope of x**n is n * x**(n - 1).",
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
