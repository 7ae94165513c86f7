"""02: the graph PyTorch records for y = x², z = c·y + d, and the chain through it.

The lesson's graph is y = x², z = c·y + d; in a class each learner's (`Graph`) has its own
power of x and its own form of z, so the same parts ask for their own local slopes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from autograder.core.spec import (
    ExerciseSpec,
    Factor,
    Given,
    Part,
    Structure,
    given,
    pairwise_different,
    slope,
    upstream,
    value,
)

if TYPE_CHECKING:
    import torch

    from autograder.core.tape import Tape

SUPERSCRIPT = {2: "²", 3: "³", 4: "⁴"}
Form = Literal["c*y + d", "d - c*y", "c*(d - y)"]


@dataclass(frozen=True)
class Graph(Structure):
    """y = x^power, then z from y, c and d in `form`: two operations after the power, so
    the graph has three operation nodes in every form."""

    power: int
    form: Form

    @property
    def tag(self) -> str:
        return (
            f"p{self.power}_"
            + {"c*y + d": "scale", "d - c*y": "minus", "c*(d - y)": "times"}[self.form]
        )

    def z_of(self, y: str) -> str:
        """z from `y`, as Python arithmetic."""
        return {
            "c*y + d": f"c * {y} + d",
            "d - c*y": f"d - c * {y}",
            "c*(d - y)": f"c * (d - {y})",
        }[self.form]

    def z(self, y: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """z from y (PyTorch)."""
        if self.form == "c*y + d":
            return c * y + d
        if self.form == "d - c*y":
            return d - c * y
        return c * (d - y)

    @property
    def z_words(self) -> str:
        return {"c*y + d": "c·y + d", "d - c*y": "d − c·y", "c*(d - y)": "c·(d − y)"}[self.form]

    @property
    def words(self) -> str:
        return f"y = x{SUPERSCRIPT[self.power]}, z = {self.z_words}"

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        return (("y", f"x**{self.power}"), ("z", self.z_of(f"x**{self.power}")))

    @property
    def dz_dy(self) -> tuple[tuple[Factor, ...], str]:
        """The local slope of z with respect to y: (its chain, the model answer)."""
        if self.form == "c*y + d":
            return (given("c"),), "1 * c"
        return (slope("-1", f"the − of {self.z_words}"), given("c")), "-1 * c"

    @property
    def dy_dx(self) -> tuple[Factor, ...]:
        """The local slope of the power node: power · x^(power − 1)."""
        label = f"the {self.power} of d x{SUPERSCRIPT[self.power]}/dx"
        if self.power == 2:
            return (slope("2", "the 2 of the square (d x²/dx = 2x)"), given("x"))
        return (slope(str(self.power), label), value(f"x**{self.power - 1}"))

    @property
    def slope_words(self) -> str:
        """d y/dx in math: 2x, 3x², 4x³."""
        return f"{self.power}x" + ("" if self.power == 2 else SUPERSCRIPT[self.power - 1])


LESSON = Graph(2, "c*y + d")
VARIANTS = (Graph(3, "d - c*y"), Graph(4, "d - c*y"), Graph(4, "c*(d - y)"))
"""Never the lesson's power nor its z: a copied y or dz/dy is wrong for every learner. No
value is ever 0 (|d| < 10 <= |c·x³|, x⁴): c·(d − x³) would be 0 at x = 2, d = 8, and a
formula could not be judged at fresh draws that keep every sign."""


def _tracks_by_default(t: Tape) -> bool:
    import torch

    return bool(torch.tensor(3.0).requires_grad)


def _x_is_leaf(t: Tape) -> bool:
    return bool(t.nodes["x"].is_leaf)


def _operation_nodes(t: Tape) -> float:
    from autograder.core.engine import count_operations

    return float(count_operations(t.nodes["z"]))


def spec_for(structure: Structure) -> ExerciseSpec:
    """The exercise for the graph `structure`: its program and parts."""
    assert isinstance(structure, Graph)
    graph = structure
    dz_dy_factors, dz_dy_answer = graph.dz_dy

    def program(t: Tape) -> None:
        """y = x^power, z from y."""
        x, c, d = t.given("x", "c", "d")
        y = t.node("y", x**graph.power)
        t.node("z", graph.z(y, c, d))

    return ExerciseSpec(
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
                meaning="the number that scales y in z",
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
                meaning="the constant term of z",
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
                f"Your y: {graph.words.split(', ')[0]}.",
                "y from x",
                of=("y",),
                solution=f"x**{graph.power}",
                title="the value of y",
            ),
            Part(
                "z_value",
                "z",
                "forward",
                f"Your z: {graph.words}.",
                "z from your y_value, c and d",
                of=("z",),
                solution=graph.z_of("y_value"),
                title="the value of z",
            ),
            Part(
                "operation_nodes",
                "operation nodes in the graph of z",
                "fact",
                f"Count the operations in z = {graph.z_of(f'x**{graph.power}')};"
                " x itself is a leaf, not an operation.",
                "count the operations",
                fact=_operation_nodes,
                solution="3",
                title="the nodes of the graph",
            ),
            Part(
                "dz_dy",
                "dz/dy",
                "local_slope",
                f"z = {graph.z_words}: multiply the local slopes of its two nodes.",
                "the local slopes of the nodes from y to z, multiplied",
                of=("z", "y"),
                factors=dz_dy_factors,
                solution=dz_dy_answer,
                title="the local slope of z with respect to y",
            ),
            Part(
                "dy_dx",
                "dy/dx",
                "local_slope",
                f"{graph.words.split(', ')[0]}: its local slope is {graph.slope_words}, with "
                "the x the node saved.",
                "the power node's local slope at x",
                of=("y", "x"),
                factors=graph.dy_dx,
                title="the local slope of the power node",
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
        structure=graph,
        variants=VARIANTS,
        vary=spec_for,
    )


SPEC = spec_for(LESSON)
