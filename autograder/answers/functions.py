"""Code exercises: learner functions judged by their results against PyTorch's.

05_three_mechanics has two (its spec names them as parts of kind "function"):
- `train(x0, lr, steps)`: gradient descent on (x - 5)**2 from x0; the version the
  learner is given never zeroes `x.grad`, so the gradients pile up.
- `grad_of_intermediate(x0)`: for y = x**3 and z = y*y, dz/dy read from `y.grad`
  after `z.backward()` (needs `y.retain_grad()`), which is 2*x0**3.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from autograder.core.tasks import FunctionTask
from autograder.core.verdict import Verdict, format_value, is_tensor, matches

if TYPE_CHECKING:
    import torch


def backward(t: torch.Tensor) -> None:
    """`t.backward()`, in one place (torch leaves it untyped)."""
    t.backward()  # type: ignore[no-untyped-call]


def _descend(x0: float, lr: float, steps: int, zero_grad: bool) -> float:
    import torch

    x = torch.tensor(float(x0), requires_grad=True)
    for _ in range(int(steps)):
        loss = (x - 5.0) ** 2
        backward(loss)
        grad = x.grad
        if grad is None:
            raise RuntimeError("x.grad is None after backward()")
        with torch.no_grad():
            x -= lr * grad
        if zero_grad:
            grad.zero_()
    return float(x.item())


def train_reference(x0: float, lr: float, steps: int) -> float:
    """Gradient descent on (x - 5)**2, zeroing x.grad after every update."""
    return _descend(x0, lr, steps, zero_grad=True)


def train_without_zeroing(x0: float, lr: float, steps: int) -> float:
    """The version learners are given: x.grad is never zeroed, so it accumulates."""
    return _descend(x0, lr, steps, zero_grad=False)


def _cubed_then_squared(x0: float) -> tuple[float, float, float]:
    """(y.grad, x.grad, y) for y = x**3, z = y*y, after z.backward() with y.retain_grad()."""
    import torch

    x = torch.tensor(float(x0), requires_grad=True)
    y = x**3
    y.retain_grad()
    z = y * y
    backward(z)
    if y.grad is None or x.grad is None:
        raise RuntimeError("missing gradient after backward()")
    return float(y.grad.item()), float(x.grad.item()), float(y.item())


def grad_of_intermediate_reference(x0: float) -> float:
    """dz/dy for y = x**3, z = y*y, read from y.grad."""
    return _cubed_then_squared(x0)[0]


def _x_grad_instead(x0: float) -> float:
    return _cubed_then_squared(x0)[1]


def _y_instead(x0: float) -> float:
    return _cubed_then_squared(x0)[2]


def _train_cases(rng: random.Random) -> list[tuple[float, ...]]:
    cases: list[tuple[float, ...]] = [(0.0, 0.1, 10), (10.0, 0.05, 20), (-3.0, 0.2, 5)]
    while len(cases) < 6:
        x0 = round(rng.uniform(-10.0, 15.0), 1)
        if abs(x0 - 5.0) >= 1.0:
            cases.append((x0, rng.choice((0.01, 0.05, 0.1, 0.2)), rng.randint(2, 25)))
    return cases


def _intermediate_cases(rng: random.Random) -> list[tuple[float, ...]]:
    cases: list[tuple[float, ...]] = [(2.0,), (-1.5,), (1.2,)]
    while len(cases) < 6:
        x0 = round(rng.uniform(-3.0, 3.0), 2)
        if abs(x0) >= 0.5:
            cases.append((x0,))
    return cases


TRAIN = FunctionTask(
    name="train",
    label="train(x0, lr, steps)",
    make_cases=_train_cases,
    reference=train_reference,
    hint="Each step needs the gradient of this step only: .grad adds up otherwise.",
    mistakes=(
        (
            train_without_zeroing,
            "Gradients accumulate: x.grad adds up over the steps. "
            "Zero it (x.grad.zero_()) after each update.",
        ),
    ),
)
GRAD_OF_INTERMEDIATE = FunctionTask(
    name="grad_of_intermediate",
    label="grad_of_intermediate(x0)",
    make_cases=_intermediate_cases,
    reference=grad_of_intermediate_reference,
    hint="y is not a leaf: call y.retain_grad() before z.backward(), then read y.grad.",
    mistakes=(
        (_x_grad_instead, "That is x.grad (dz/dx); the question asks for dz/dy: y.grad."),
        (_y_instead, "That is the value of y, not its gradient: read y.grad."),
    ),
)


def call_text(task: FunctionTask, case: Sequence[float]) -> str:
    """How a call reads in messages: train(0.0, 0.1, 10)."""
    return f"{task.name}({', '.join(format_value(arg) for arg in case)})"


def raised_message(task: FunctionTask, case: Sequence[float], error: str) -> str:
    """What a learner's function raising `error` ("ValueError: ...") on `case` is told."""
    return f"{f'✗ {call_text(task, case)} raised {error}'[:160]}\n  {task.hint}"


def _result_problem(call: str, result: object) -> str | None:
    if type(result) in (int, float):
        return None
    if result is None:
        return f"✗ {call} returned None: end the function with `return` and the number."
    kind = type(result)
    if is_tensor(result):
        return f"✗ {call} returned a tensor: return a plain float, e.g. with `.item()`."
    return f"✗ {call} returned a {kind.__name__}: return a plain float."


def judge_function_results(
    task: FunctionTask, cases: Sequence[tuple[float, ...]], results: Sequence[object]
) -> Verdict:
    """Compare what the learner's function returned on `cases` with PyTorch's answers."""
    if len(cases) != len(results):
        raise ValueError(f"{len(cases)} cases but {len(results)} results")
    for case, result in zip(cases, results, strict=True):
        call = call_text(task, case)
        problem = _result_problem(call, result)
        if problem is not None or not isinstance(result, int | float):
            return Verdict(False, problem or f"✗ {call} did not return a number.", "not_a_number")
        value = float(result)
        expected = task.reference(*case)
        if not math.isfinite(value):
            return Verdict(False, f"✗ {call} returned {value}, not a finite number.", "not_finite")
        if matches(expected, value):
            continue
        head = (
            f"✗ {call} returned {format_value(value)}, but PyTorch gives {format_value(expected)}."
        )
        for wrong, why in task.mistakes:
            if matches(wrong(*case), value):
                return Verdict(False, f"{head}\n  {why}", "known_mistake")
        return Verdict(False, f"{head}\n  {task.hint}", "mismatch")
    return Verdict(True, f"✓ {task.label} matches PyTorch on {len(cases)} cases", "match")
