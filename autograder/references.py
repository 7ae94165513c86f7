"""Every graded quantity of every exercise, its value computed by running PyTorch.

Nothing here is typed in: each value comes from `.backward()`, `retain_grad()`,
`torch.autograd.grad` (for local slopes) or a tensor attribute, in float32 like the lessons.
The hand-written numbers below are the syllabus (COURSE.md); tests check that PyTorch agrees.

Exercises: 01_what_a_gradient_is (y = x²; one step of 0.1 × slope from x=3),
02_the_computation_graph (x=3, y = x**2, z = 2*y + 1), 03_a_neuron_by_hand
(x=2, w=3, b=-1, target 2), 04_the_dead_relu (x=-1; LeakyReLU slope 0.01),
05_three_mechanics, 06_one_backward_every_parameter (w=2, b=1, x=3), 07_try_it
(x=4; then lesson 3's neuron with a second weight w2=0.5 after the ReLU).
Values are shown rounded; `gate` is the ReLU on the quantity's backward path.

| ex. | variable | label | value | kind |
| --- | --- | --- | --- | --- |
| 01 | `y_at_3` | y (x=3) | 9.0 | forward |
|  | `slope_at_3` | dy/dx (x=3) | 6.0 | gradient |
|  | `slope_at_minus_2` | dy/dx (x=-2) | -4.0 | gradient |
|  | `slope_at_0` | dy/dx (x=0) | 0.0 | gradient |
|  | `x_after_step` | x after one step | 2.4 | forward |
|  | `y_after_step` | y after one step | 5.76 | forward |
| 02 | `requires_grad_by_default` | requires_grad (new tensor) | False | fact |
|  | `x_is_leaf` | x.is_leaf | True | fact |
|  | `y_value` | y | 9.0 | forward |
|  | `z_value` | z | 19.0 | forward |
|  | `operation_nodes` | operation nodes in the graph of z | 3.0 | fact |
|  | `dz_dy` | dz/dy | 2.0 | local_slope |
|  | `dy_dx` | dy/dx | 6.0 | local_slope |
|  | `dz_dx` | dz/dx | 12.0 | gradient |
| 03 | `h` | h | 5.0 | forward |
|  | `a` | a | 5.0 | forward |
|  | `L` | L | 9.0 | forward |
|  | `dL_da` | dL/da | 6.0 | gradient |
|  | `da_dh` | da/dh | 1.0 | local_slope (gate open) |
|  | `dL_dh` | dL/dh | 6.0 | gradient (gate open) |
|  | `dh_dw` | dh/dw | 2.0 | local_slope |
|  | `dh_db` | dh/db | 1.0 | local_slope |
|  | `dL_dw` | dL/dw | 12.0 | gradient (gate open) |
|  | `dL_db` | dL/db | 6.0 | gradient (gate open) |
| 04 | `h` | h | -4.0 | forward |
|  | `a` | a | 0.0 | forward |
|  | `L` | L | 4.0 | forward |
|  | `dL_da` | dL/da | -4.0 | gradient |
|  | `da_dh` | da/dh | 0.0 | local_slope (gate shut) |
|  | `dL_dh` | dL/dh | 0.0 | gradient (gate shut) |
|  | `dL_dw` | dL/dw | 0.0 | gradient (gate shut) |
|  | `dL_db` | dL/db | 0.0 | gradient (gate shut) |
|  | `leaky_a` | a (LeakyReLU) | -0.04 | forward |
|  | `leaky_L` | L (LeakyReLU) | 4.1616 | forward |
|  | `leaky_dL_da` | dL/da (LeakyReLU) | -4.08 | gradient |
|  | `leaky_da_dh` | da/dh (LeakyReLU) | 0.01 | local_slope (gate open) |
|  | `leaky_dL_dw` | dL/dw (LeakyReLU) | 0.0408 | gradient (gate open) |
|  | `leaky_dL_db` | dL/db (LeakyReLU) | -0.0408 | gradient (gate open) |
| 05 | `x_grad` | x.grad | 60.0 | gradient |
|  | `y_grad` | y.grad | 5.0 | gradient |
|  | `y_grad_is_none_without_retain` | y.grad is None without retain_grad() | True | fact |
|  | `grad_after_three_calls` | x.grad after three backward calls | 18.0 | gradient |
|  | `grad_after_zero_and_backward` | x.grad after zero_() and one backward | 6.0 | gradient |
|  | `requires_grad_inside_no_grad` | y.requires_grad inside no_grad | False | fact |
|  | `detached_value` | y.detach() | 9.0 | forward |
|  | `detached_requires_grad` | y.detach().requires_grad | False | fact |
| 06 | `y_value` | y | 7.0 | forward |
|  | `loss` | loss | 4.0 | forward |
|  | `dL_dy` | dL/dy | 4.0 | gradient |
|  | `dy_dw` | dy/dw | 3.0 | local_slope |
|  | `dL_dw` | dL/dw | 12.0 | gradient |
|  | `dL_db` | dL/db | 4.0 | gradient |
| 07 | `y_at_4` | y (x=4) | 56.0 | forward |
|  | `dy_dx_at_4` | dy/dx (x=4) | 46.0 | gradient |
|  | `out` | out | 2.5 | forward |
|  | `L` | L | 0.25 | forward |
|  | `dL_dout` | dL/dout | 1.0 | gradient |
|  | `dL_dw2` | dL/dw2 | 5.0 | gradient |
|  | `dL_da` | dL/da | 0.5 | gradient |
|  | `dL_dh` | dL/dh | 0.5 | gradient (gate open) |
|  | `dL_dw` | dL/dw | 1.0 | gradient (gate open) |
|  | `dL_db` | dL/db | 0.5 | gradient (gate open) |

05_three_mechanics also has two code exercises, `train` and `grad_of_intermediate`
(see `autograder.functions`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from autograder.quantities import Quantity

if TYPE_CHECKING:
    import torch

EXERCISES: tuple[str, ...] = (
    "01_what_a_gradient_is",
    "02_the_computation_graph",
    "03_a_neuron_by_hand",
    "04_the_dead_relu",
    "05_three_mechanics",
    "06_one_backward_every_parameter",
    "07_try_it",
)

STEP_SIZE = 0.1
"""Learning rate of the single step in 01_what_a_gradient_is."""
LEAKY_SLOPE = 0.01
"""Negative slope of the LeakyReLU in 04_the_dead_relu."""
SQUARE = 2.0
"""The 2 of d/dx x² = 2x: the chain factor learners forget most."""


def reference_quantities(exercise: str) -> dict[str, Quantity]:
    """The graded quantities of `exercise` by notebook variable, computed by PyTorch (cached)."""
    if exercise not in EXERCISES:
        raise KeyError(f"unknown exercise {exercise!r}; valid names: {', '.join(EXERCISES)}")
    return {q.name: q for q in _computed(exercise)}


@functools.cache
def _computed(exercise: str) -> tuple[Quantity, ...]:
    return tuple(_BUILDERS[exercise]())


def _leaf(value: float) -> torch.Tensor:
    import torch

    return torch.tensor(value, requires_grad=True)


def _num(t: torch.Tensor) -> float:
    return float(t.item()) + 0.0  # + 0.0 turns -0.0 into 0.0


def _grad(t: torch.Tensor) -> float:
    """`t.grad` as a float; fails loudly if PyTorch left it empty."""
    grad = t.grad
    if grad is None:
        raise RuntimeError("expected a gradient in .grad, found None")
    return float(grad.item()) + 0.0


def backward(t: torch.Tensor) -> None:
    """`t.backward()`, in one place (torch leaves it untyped)."""
    t.backward()  # type: ignore[no-untyped-call]


def _slope(output: torch.Tensor, node: torch.Tensor) -> float:
    """Local slope d output / d node, keeping the graph for a later backward."""
    import torch

    (g,) = torch.autograd.grad(output, node, retain_graph=True)
    return float(g.item()) + 0.0


def _ex01() -> list[Quantity]:
    import torch

    slopes: dict[float, float] = {}
    for x0 in (3.0, -2.0, 0.0):
        x = _leaf(x0)
        y = x**2
        backward(y)
        slopes[x0] = _grad(x)
    x = _leaf(3.0)
    y = x**2
    y_at_3 = _num(y)
    backward(y)
    with torch.no_grad():
        x -= STEP_SIZE * _grad(x)
        y_after = _num(x**2)
    square = "The slope of x² is 2x"
    return [
        Quantity("y_at_3", "y (x=3)", y_at_3, "forward", hint="Forward pass: y = x² at x = 3."),
        Quantity(
            "slope_at_3",
            "dy/dx (x=3)",
            slopes[3.0],
            "gradient",
            chain_factors=(SQUARE,),
            hint=f"{square}; evaluate it at x = 3.",
        ),
        Quantity(
            "slope_at_minus_2",
            "dy/dx (x=-2)",
            slopes[-2.0],
            "gradient",
            chain_factors=(SQUARE,),
            hint=f"{square}; at a negative x it is negative.",
        ),
        Quantity(
            "slope_at_0",
            "dy/dx (x=0)",
            slopes[0.0],
            "gradient",
            hint=f"{square}; at the bottom of the bowl it is flat.",
        ),
        Quantity(
            "x_after_step",
            "x after one step",
            _num(x),
            "forward",
            hint=f"Step against the slope: x - {STEP_SIZE} × slope.",
        ),
        Quantity(
            "y_after_step",
            "y after one step",
            y_after,
            "forward",
            hint="Square the new x: the loss should be lower than 9.",
        ),
    ]


def _count_operations(root: torch.Tensor) -> int:
    """Backward nodes reachable from `root`, leaves' AccumulateGrad excluded."""
    seen: set[int] = set()
    stack = [root.grad_fn]
    count = 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ != "AccumulateGrad":
            count += 1
        stack.extend(fn for fn, _ in node.next_functions)
    return count


def _ex02() -> list[Quantity]:
    import torch

    x = _leaf(3.0)
    y = x**2
    z = 2 * y + 1
    dz_dy = _slope(z, y)
    dy_dx = _slope(y, x)
    nodes = _count_operations(z)
    backward(z)
    return [
        Quantity(
            "requires_grad_by_default",
            "requires_grad (new tensor)",
            bool(torch.tensor(3.0).requires_grad),
            "fact",
            hint="Data is never adjusted: does PyTorch track a tensor unless asked?",
        ),
        Quantity(
            "x_is_leaf",
            "x.is_leaf",
            bool(x.is_leaf),
            "fact",
            hint="A leaf is a tensor you created, not the result of an operation.",
        ),
        Quantity("y_value", "y", _num(y), "forward", hint="y = x² at x = 3."),
        Quantity("z_value", "z", _num(z), "forward", hint="z = 2y + 1 with y = x²."),
        Quantity(
            "operation_nodes",
            "operation nodes in the graph of z",
            float(nodes),
            "fact",
            hint="Count the operations in z = 2*x**2 + 1; x itself is a leaf, not an operation.",
        ),
        Quantity(
            "dz_dy",
            "dz/dy",
            dz_dy,
            "local_slope",
            hint="z = 2y + 1: how much does z move per unit of y?",
        ),
        Quantity(
            "dy_dx",
            "dy/dx",
            dy_dx,
            "local_slope",
            chain_factors=(SQUARE,),
            hint="y = x²: its local slope is 2x, at x = 3.",
        ),
        Quantity(
            "dz_dx",
            "dz/dx",
            _grad(x),
            "gradient",
            chain_factors=(dz_dy, SQUARE),
            hint="Multiply the local slopes on the way back: dz/dy × dy/dx.",
        ),
    ]


def _neuron(
    x0: float, activation: Callable[[torch.Tensor], torch.Tensor], w2: float | None = None
) -> dict[str, float]:
    """Lesson 3's neuron (w=3, b=-1, target 2) at input x0, optionally with out = w2·a."""
    import torch

    x = torch.tensor(x0)
    w = _leaf(3.0)
    b = _leaf(-1.0)
    target = torch.tensor(2.0)
    h = w * x + b
    a = activation(h)
    values = {"da_dh": _slope(a, h), "dh_dw": _slope(h, w), "dh_db": _slope(h, b)}
    # retain_grad() only after the local slopes: autograd.grad also feeds retained .grad
    h.retain_grad()
    a.retain_grad()
    out = a
    if w2 is not None:
        weight2 = _leaf(w2)
        out = weight2 * a
        out.retain_grad()
    loss = (out - target) ** 2
    backward(loss)
    values.update(h=_num(h), a=_num(a), L=_num(loss), dL_da=_grad(a), dL_dh=_grad(h))
    values.update(dL_dw=_grad(w), dL_db=_grad(b))
    if w2 is not None:
        values.update(out=_num(out), dL_dout=_grad(out), dL_dw2=_grad(weight2))
    return values


def _relu(h: torch.Tensor) -> torch.Tensor:
    import torch

    return torch.relu(h)


def _leaky(h: torch.Tensor) -> torch.Tensor:
    import torch.nn.functional as F

    return F.leaky_relu(h, LEAKY_SLOPE)


def _ex03() -> list[Quantity]:
    n = _neuron(2.0, _relu)
    x = n["dh_dw"]
    return [
        Quantity("h", "h", n["h"], "forward", hint="h = w·x + b."),
        Quantity("a", "a", n["a"], "forward", hint="ReLU keeps a positive h unchanged."),
        Quantity("L", "L", n["L"], "forward", hint="L = (a - y)² with target y = 2."),
        Quantity(
            "dL_da",
            "dL/da",
            n["dL_da"],
            "gradient",
            chain_factors=(SQUARE,),
            hint="The slope of (a - y)² is 2(a - y).",
        ),
        Quantity(
            "da_dh",
            "da/dh",
            n["da_dh"],
            "local_slope",
            gate="open",
            hint="ReLU's slope is 1 where h > 0 and 0 where h < 0.",
        ),
        Quantity(
            "dL_dh",
            "dL/dh",
            n["dL_dh"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE,),
            hint="dL/dh = dL/da × da/dh.",
        ),
        Quantity(
            "dh_dw",
            "dh/dw",
            n["dh_dw"],
            "local_slope",
            hint="h = w·x + b: its slope with respect to w is x.",
        ),
        Quantity(
            "dh_db",
            "dh/db",
            n["dh_db"],
            "local_slope",
            hint="h = w·x + b: its slope with respect to b is 1.",
        ),
        Quantity(
            "dL_dw",
            "dL/dw",
            n["dL_dw"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, x),
            hint="dL/dw = dL/dh × dh/dw, and dh/dw = x.",
        ),
        Quantity(
            "dL_db",
            "dL/db",
            n["dL_db"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE,),
            hint="dL/db = dL/dh × dh/db, and dh/db = 1.",
        ),
    ]


def _ex04() -> list[Quantity]:
    n = _neuron(-1.0, _relu)
    k = _neuron(-1.0, _leaky)
    closed = "Everything behind a closed ReLU is multiplied by its slope, 0."
    return [
        Quantity("h", "h", n["h"], "forward", hint="h = w·x + b with x = -1."),
        Quantity("a", "a", n["a"], "forward", hint="ReLU turns a negative h into 0."),
        Quantity("L", "L", n["L"], "forward", hint="L = (a - y)² with a = 0 and y = 2."),
        Quantity(
            "dL_da",
            "dL/da",
            n["dL_da"],
            "gradient",
            chain_factors=(SQUARE,),
            hint="2(a - y) with a = 0: the loss still pulls on a.",
        ),
        Quantity(
            "da_dh",
            "da/dh",
            n["da_dh"],
            "local_slope",
            gate="shut",
            hint="ReLU's slope where h < 0 is 0.",
        ),
        Quantity("dL_dh", "dL/dh", n["dL_dh"], "gradient", gate="shut", hint="dL/da × da/dh."),
        Quantity("dL_dw", "dL/dw", n["dL_dw"], "gradient", gate="shut", hint=closed),
        Quantity("dL_db", "dL/db", n["dL_db"], "gradient", gate="shut", hint=closed),
        Quantity(
            "leaky_a",
            "a (LeakyReLU)",
            k["a"],
            "forward",
            hint=f"LeakyReLU multiplies a negative h by {LEAKY_SLOPE}.",
        ),
        Quantity(
            "leaky_L",
            "L (LeakyReLU)",
            k["L"],
            "forward",
            hint="L = (a - y)² with the leaky a.",
        ),
        Quantity(
            "leaky_dL_da",
            "dL/da (LeakyReLU)",
            k["dL_da"],
            "gradient",
            chain_factors=(SQUARE,),
            hint="2(a - y) with the leaky a.",
        ),
        Quantity(
            "leaky_da_dh",
            "da/dh (LeakyReLU)",
            k["da_dh"],
            "local_slope",
            gate="open",
            hint=f"LeakyReLU's slope for h < 0 is {LEAKY_SLOPE}, not 0.",
        ),
        Quantity(
            "leaky_dL_dw",
            "dL/dw (LeakyReLU)",
            k["dL_dw"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, k["da_dh"]),
            hint=f"dL/da × {LEAKY_SLOPE} × x, with x = -1.",
        ),
        Quantity(
            "leaky_dL_db",
            "dL/db (LeakyReLU)",
            k["dL_db"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, k["da_dh"]),
            hint=f"dL/da × {LEAKY_SLOPE} × 1.",
        ),
    ]


def _ex05() -> list[Quantity]:
    import torch

    x = _leaf(2.0)
    y = x**3
    z = y * 5
    dz_dy = _slope(z, y)
    y.retain_grad()  # after the slope: autograd.grad also feeds a retained .grad
    backward(z)
    x_grad, y_grad = _grad(x), _grad(y)

    x = _leaf(2.0)
    y = x**3
    backward(y * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        y_grad_is_none = y.grad is None

    x = _leaf(3.0)
    for _ in range(3):
        backward(x**2)
    after_three = _grad(x)
    if x.grad is not None:
        x.grad.zero_()
    backward(x**2)
    after_zero = _grad(x)

    with torch.no_grad():
        inside = x**2
    detached = (x**2).detach()
    accumulates = "`.grad` is added to on every backward(), not replaced."
    return [
        Quantity(
            "x_grad",
            "x.grad",
            x_grad,
            "gradient",
            chain_factors=(dz_dy, 3.0),
            hint="Chain rule: dz/dy × dy/dx, with y = x³ and z = 5y.",
        ),
        Quantity(
            "y_grad",
            "y.grad",
            y_grad,
            "gradient",
            hint="y.grad is dz/dy: only the ×5 node lies between z and y.",
        ),
        Quantity(
            "y_grad_is_none_without_retain",
            "y.grad is None without retain_grad()",
            y_grad_is_none,
            "fact",
            hint="Only leaves keep .grad unless you call retain_grad().",
        ),
        Quantity(
            "grad_after_three_calls",
            "x.grad after three backward calls",
            after_three,
            "gradient",
            hint=accumulates,
        ),
        Quantity(
            "grad_after_zero_and_backward",
            "x.grad after zero_() and one backward",
            after_zero,
            "gradient",
            hint="zero_() empties .grad; one backward adds one gradient.",
        ),
        Quantity(
            "requires_grad_inside_no_grad",
            "y.requires_grad inside no_grad",
            bool(inside.requires_grad),
            "fact",
            hint="Inside torch.no_grad() nothing is recorded.",
        ),
        Quantity(
            "detached_value",
            "y.detach()",
            _num(detached),
            "forward",
            hint=".detach() keeps the data of y = x² at x = 3.",
        ),
        Quantity(
            "detached_requires_grad",
            "y.detach().requires_grad",
            bool(detached.requires_grad),
            "fact",
            hint=".detach() gives a tensor with no history.",
        ),
    ]


def _ex06() -> list[Quantity]:
    w = _leaf(2.0)
    b = _leaf(1.0)
    x = 3.0
    y = w * x + b
    loss = (y - 5.0) ** 2
    dy_dw = _slope(y, w)
    y.retain_grad()  # after the slope: autograd.grad also feeds a retained .grad
    backward(loss)
    return [
        Quantity("y_value", "y", _num(y), "forward", hint="y = w·x + b."),
        Quantity("loss", "loss", _num(loss), "forward", hint="loss = (y - 5)²."),
        Quantity(
            "dL_dy",
            "dL/dy",
            _grad(y),
            "gradient",
            chain_factors=(SQUARE,),
            hint="The slope of (y - 5)² is 2(y - 5).",
        ),
        Quantity(
            "dy_dw",
            "dy/dw",
            dy_dw,
            "local_slope",
            hint="y = w·x + b: its slope with respect to w is x.",
        ),
        Quantity(
            "dL_dw",
            "dL/dw",
            _grad(w),
            "gradient",
            chain_factors=(SQUARE, dy_dw),
            hint="dL/dw = dL/dy × dy/dw.",
        ),
        Quantity(
            "dL_db",
            "dL/db",
            _grad(b),
            "gradient",
            chain_factors=(SQUARE,),
            hint="dL/db = dL/dy × dy/db, and dy/db = 1.",
        ),
    ]


def _ex07() -> list[Quantity]:
    x = _leaf(4.0)
    y = x**3 - 2 * x
    backward(y)
    n = _neuron(2.0, _relu, w2=0.5)
    w2, a, x_in = 0.5, n["a"], n["dh_dw"]
    return [
        Quantity("y_at_4", "y (x=4)", _num(y), "forward", hint="y = x³ - 2x at x = 4."),
        Quantity(
            "dy_dx_at_4",
            "dy/dx (x=4)",
            _grad(x),
            "gradient",
            hint="Differentiate term by term (x³ and -2x), then put in x = 4.",
        ),
        Quantity("out", "out", n["out"], "forward", hint="out = w2·a, with a from lesson 3."),
        Quantity("L", "L", n["L"], "forward", hint="L = (out - y)² with target y = 2."),
        Quantity(
            "dL_dout",
            "dL/dout",
            n["dL_dout"],
            "gradient",
            chain_factors=(SQUARE,),
            hint="The slope of (out - y)² is 2(out - y).",
        ),
        Quantity(
            "dL_dw2",
            "dL/dw2",
            n["dL_dw2"],
            "gradient",
            chain_factors=(SQUARE, a),
            hint="out = w2·a, so dout/dw2 = a.",
        ),
        Quantity(
            "dL_da",
            "dL/da",
            n["dL_da"],
            "gradient",
            chain_factors=(SQUARE, w2),
            hint="out = w2·a, so dout/da = w2.",
        ),
        Quantity(
            "dL_dh",
            "dL/dh",
            n["dL_dh"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, w2),
            hint="The ReLU is open (h > 0): da/dh = 1.",
        ),
        Quantity(
            "dL_dw",
            "dL/dw",
            n["dL_dw"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, w2, x_in),
            hint="dL/dw = dL/dh × x.",
        ),
        Quantity(
            "dL_db",
            "dL/db",
            n["dL_db"],
            "gradient",
            gate="open",
            chain_factors=(SQUARE, w2),
            hint="dL/db = dL/dh × 1.",
        ),
    ]


_BUILDERS: dict[str, Callable[[], list[Quantity]]] = {
    "01_what_a_gradient_is": _ex01,
    "02_the_computation_graph": _ex02,
    "03_a_neuron_by_hand": _ex03,
    "04_the_dead_relu": _ex04,
    "05_three_mechanics": _ex05,
    "06_one_backward_every_parameter": _ex06,
    "07_try_it": _ex07,
}
