"""08's code exercises: small functions that hit one of backward()'s errors, to be fixed.

Each is judged by behaviour (`functions.judge_function_results`): the grader calls the
learner's fixed function on cases it draws and compares the numbers with PyTorch's.
- `cut_grad(w0, target)`: dL/dw for L = (2w - target)², once `.item()` no longer cuts
  the graph ("element 0 of tensors does not require grad");
- `first_grad(x0, x1)`: x.grad[0] for y = x² on a vector, once the output is summed
  ("grad can be implicitly created only for scalar outputs");
- `saved_grad(x0)`: d/dx of 3·exp(x), the ×3 applied without changing the output that
  exp saved for its backward ("modified by an inplace operation");
- `sgd_step(w0, lr)`: one gradient-descent step on (2w - 4)², the update out of the
  graph ("a leaf Variable that requires grad is being used in an in-place operation").
"""

from __future__ import annotations

import random
from collections.abc import Callable

from autograder.core.tasks import FunctionTask


def cut_grad_reference(w0: float, target: float) -> float:
    """dL/dw for L = (2w - target)² at w0."""
    import torch

    w = torch.tensor(float(w0), requires_grad=True, dtype=torch.float64)
    ((2 * w - target) ** 2).backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    return float(w.grad.item())


def first_grad_reference(x0: float, x1: float) -> float:
    """x.grad[0] after (x**2).sum().backward() for x = [x0, x1]."""
    import torch

    x = torch.tensor([float(x0), float(x1)], requires_grad=True, dtype=torch.float64)
    (x**2).sum().backward()  # type: ignore[no-untyped-call]
    assert x.grad is not None
    return float(x.grad[0].item())


def _mean_instead(x0: float, x1: float) -> float:
    return first_grad_reference(x0, x1) / 2


def saved_grad_reference(x0: float) -> float:
    """d/dx of 3·exp(x) at x0 (exp saves its output; the ×3 makes a new tensor)."""
    import torch

    x = torch.tensor(float(x0), requires_grad=True, dtype=torch.float64)
    (torch.exp(x) * 3).backward()  # type: ignore[no-untyped-call]
    assert x.grad is not None
    return float(x.grad.item())


def _times_three_deleted(x0: float) -> float:
    return saved_grad_reference(x0) / 3


def sgd_step_reference(w0: float, lr: float) -> float:
    """w after one step of gradient descent on (2w - 4)² from w0."""
    import torch

    w = torch.tensor(float(w0), requires_grad=True, dtype=torch.float64)
    ((2 * w - 4.0) ** 2).backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    with torch.no_grad():
        w -= lr * w.grad
    return float(w.item())


def _stepped_up(w0: float, lr: float) -> float:
    return 2 * w0 - sgd_step_reference(w0, lr)


def _not_moved(w0: float, lr: float) -> float:
    return float(w0)


Case = tuple[float, ...]


def _cases(
    fixed: list[Case], draw: Callable[[random.Random], Case]
) -> Callable[[random.Random], list[Case]]:
    """Two fixed cases, then distinct drawn ones: six in all."""

    def make(rng: random.Random) -> list[Case]:
        cases = list(fixed)
        while len(cases) < 6:
            case = draw(rng)
            if case not in cases:
                cases.append(case)
        return cases

    return make


def _value(rng: random.Random, low: float = -4.0, high: float = 4.0) -> float:
    return round(rng.uniform(low, high), 1) or 0.5


CUT_GRAD = FunctionTask(
    name="cut_grad",
    label="cut_grad(w0, target)",
    make_cases=_cases([(3.0, 4.0), (-1.5, 2.0)], lambda r: (_value(r), _value(r, 0, 8))),
    reference=cut_grad_reference,
    hint="Keep the prediction a tensor: .item() (or NumPy) hands back a plain number that "
    "remembers nothing, so backward() cannot reach w.",
)
FIRST_GRAD = FunctionTask(
    name="first_grad",
    label="first_grad(x0, x1)",
    make_cases=_cases([(1.0, 2.0), (-2.5, 0.5)], lambda r: (_value(r), _value(r))),
    reference=first_grad_reference,
    hint="backward() needs one number to start from: sum the outputs (y.sum().backward()).",
    mistakes=(
        (
            _mean_instead,
            "That is the gradient of the mean: .mean() divides by the number of entries; "
            "the question sums them (y.sum().backward()).",
        ),
    ),
)
SAVED_GRAD = FunctionTask(
    name="saved_grad",
    label="saved_grad(x0)",
    make_cases=_cases([(3.0,), (-1.5,)], lambda r: (_value(r),)),
    reference=saved_grad_reference,
    hint="exp saved its output y for its backward: make a new tensor (y = y * 3) instead "
    "of changing y in place (y *= 3).",
    mistakes=(
        (
            _times_three_deleted,
            "That is the slope of exp(x) alone: the ×3 is missing. Keep it, as a new tensor "
            "(y = y * 3), instead of changing y in place.",
        ),
    ),
)
SGD_STEP = FunctionTask(
    name="sgd_step",
    label="sgd_step(w0, lr)",
    make_cases=_cases(
        [(3.0, 0.1), (-1.0, 0.05)],
        lambda r: (_value(r), r.choice((0.01, 0.05, 0.1, 0.2))),
    ),
    reference=sgd_step_reference,
    hint="Update w inside `with torch.no_grad():`, so the step itself is not recorded.",
    mistakes=(
        (
            _stepped_up,
            "w moved up the slope: gradient descent subtracts lr × w.grad.",
        ),
        (_not_moved, "w did not move: the update w -= lr * w.grad is missing."),
    ),
)
