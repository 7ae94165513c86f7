"""02: the graph PyTorch records for y = x², z = c·y + d, and the chain through it."""

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
)

if TYPE_CHECKING:
    from autograder.core.tape import Tape


def program(t: Tape) -> None:
    """y = x², z = c·y + d."""
    x, c, d = t.given("x", "c", "d")
    y = t.node("y", x**2)
    t.node("z", c * y + d)


def _tracks_by_default(t: Tape) -> bool:
    import torch

    return bool(torch.tensor(3.0).requires_grad)


def _x_is_leaf(t: Tape) -> bool:
    return bool(t.nodes["x"].is_leaf)


def _operation_nodes(t: Tape) -> float:
    from autograder.core.engine import count_operations

    return float(count_operations(t.nodes["z"]))


SPEC = ExerciseSpec(
    name="02_the_computation_graph",
    title="The computation graph",
    lesson="02_the_computation_graph",
    givens=(
        Given(
            "x",
            (
                3.0,
                4.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                2.0,
                -2.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
                -10.0,
                -11.0,
                -12.0,
            ),
            lesson=3.0,
            meaning="the input (a tensor with requires_grad=True in the graph)",
        ),
        Given(
            "c",
            (
                2.0,
                3.0,
                4.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                10.0,
                11.0,
                12.0,
                -2.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
            ),
            lesson=2.0,
            meaning="the multiplier in z = c·y + d",
        ),
        Given(
            "d",
            (
                1.0,
                2.0,
                3.0,
                4.0,
                5.0,
                6.0,
                7.0,
                8.0,
                9.0,
                -1.0,
                -2.0,
                -3.0,
                -4.0,
                -5.0,
                -6.0,
                -7.0,
                -8.0,
                -9.0,
            ),
            lesson=1.0,
            meaning="the offset in z = c·y + d",
        ),
    ),
    constraints=(pairwise_different("x", "c", "d"),),
    program=program,
    parts=(
        Part(
            "requires_grad_by_default",
            "requires_grad (new tensor)",
            "fact",
            "Data is never adjusted: does PyTorch track a tensor unless asked?",
            "True or False",
            fact=_tracks_by_default,
            solution="False",
            title="tracking is opt-in",
        ),
        Part(
            "x_is_leaf",
            "x.is_leaf",
            "fact",
            "A leaf is a tensor you created, not the result of an operation.",
            "True or False",
            fact=_x_is_leaf,
            solution="True",
            title="leaves",
        ),
        Part(
            "y_value",
            "y",
            "forward",
            "y = x².",
            "x²",
            of=("y",),
            solution="x**2",
            title="the value of y",
        ),
        Part(
            "z_value",
            "z",
            "forward",
            "z = c·y + d with y = x².",
            "c·y + d",
            of=("z",),
            solution="c * y_value + d",
            title="the value of z",
        ),
        Part(
            "operation_nodes",
            "operation nodes in the graph of z",
            "fact",
            "Count the operations in z = c*x**2 + d; x itself is a leaf, not an operation.",
            "count the operations",
            fact=_operation_nodes,
            solution="3",
            title="the nodes of the graph",
        ),
        Part(
            "dz_dy",
            "dz/dy",
            "local_slope",
            "z = c·y + d: the + d node has slope 1 and the ×c node slope c.",
            "slope of + d × slope of ×c",
            of=("z", "y"),
            factors=(given("c"),),
            solution="1 * c",
            title="the local slope of z with respect to y",
        ),
        Part(
            "dy_dx",
            "dy/dx",
            "local_slope",
            "y = x²: its local slope is 2x, with the x the node saved.",
            "2x",
            of=("y", "x"),
            factors=(slope("2", "the 2 of the square (d x²/dx = 2x)"), given("x")),
            title="the local slope of the x² node",
        ),
        Part(
            "dz_dx",
            "dz/dx",
            "gradient",
            "Multiply the local slopes on the way back: dz/dy × dy/dx.",
            "dz/dy × dy/dx",
            of=("z", "x"),
            factors=(upstream("dz_dy"), upstream("dy_dx")),
            title="the chain rule",
        ),
    ),
    written=(("what_the_node_remembers", 1),),
)
