"""08: the errors everyone meets. Three backward passes by hand (retain_graph), then four
small functions to fix, each judged by behaviour on cases the grader draws."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.core.spec import ExerciseSpec, Factor, Given, Part, given, pairwise_different, slope
from autograder.core.tasks import FunctionTask
from autograder.specs.error_fixes import CUT_GRAD, FIRST_GRAD, SAVED_GRAD, SGD_STEP

if TYPE_CHECKING:
    from autograder.core.tape import Tape


def program(t: Tape) -> None:
    """z = c·x² + 1, backward three times (the graph kept for the later passes)."""
    x, c = t.given("x", "c")
    t.node("z", c * x**2 + 1)


def _fix(task: FunctionTask, title: str) -> Part:
    return Part(task.name, task.label, "function", task.hint, "fix the function", points=1,
                task=task, title=title)  # fmt: skip


SPEC = ExerciseSpec(
    name="08_when_backward_complains",
    title="When backward() complains",
    lesson="08_when_backward_complains",
    givens=(
        Given(
            "x",
            (
                3.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                13.0,
                14.0,
                15.0,
                16.0,
                17.0,
                18.0,
                19.0,
                20.0,
                -2.0,
                -3.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
                -10.0,
                -11.0,
                -12.0,
                -13.0,
                -14.0,
                -15.0,
                -16.0,
                -17.0,
                -18.0,
                -19.0,
                -20.0,
            ),
            lesson=3.0,
            meaning="z = c·x² + 1",
        ),
        Given(
            "c",
            (
                2.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                13.0,
                14.0,
                15.0,
                1.5,
                2.5,
                3.5,
                4.5,
                5.5,
                6.5,
                7.5,
                8.5,
                -2.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
                -10.0,
                -11.0,
                -12.0,
                -13.0,
                -1.5,
                -2.5,
                -3.5,
                -4.5,
                -5.5,
                -6.5,
            ),
            lesson=2.0,
            meaning="the factor of x²",
        ),
    ),
    constraints=(pairwise_different("x", "c"),),
    program=program,
    repeated_backward=("grad_after_three_passes",),
    parts=(
        Part(
            "grad_after_three_passes",
            "x.grad after three backward passes",
            "gradient",
            "Each pass adds dz/dx = 2c·x to x.grad.",
            "x.grad after 3 passes = 3 × dz/dx",
            of=("z", "x"),
            calls=3,
            factors=(
                Factor("3", "calls", "three backward passes"),
                slope("2", "the square (d x²/dx = 2x)"),
                given("c"),
                given("x"),
            ),
            title="three backward passes, the graph kept",
        ),
        _fix(CUT_GRAD, "a graph cut by .item()"),
        _fix(FIRST_GRAD, "a vector output"),
        _fix(SAVED_GRAD, "a saved tensor changed in place"),
        _fix(SGD_STEP, "an update on a leaf"),
    ),
    written=(("why_the_graph_is_freed", 1),),
)
