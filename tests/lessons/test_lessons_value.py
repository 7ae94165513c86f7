"""autograd_lessons.value.Value, the lesson's engine, agrees with PyTorch (as micrograd tests)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd_lessons.value import Value, show_source


def test_the_course_neuron() -> None:
    x, w, b = Value(2.0), Value(3.0), Value(-1.0)
    loss = ((w * x + b).relu() - 2.0) ** 2
    loss.backward()
    assert (loss.data, w.grad, b.grad, x.grad) == (9.0, 12.0, 6.0, 18.0)


def test_paths_add_up() -> None:
    x = Value(3.0)
    (x * x**2).backward()
    assert x.grad == 27.0


def test_numbers_on_either_side_and_unary_minus() -> None:
    a = Value(2.0)
    out = 3 - a * 2 + 1 - (-a) + 2 * a - a * 0.5
    out.backward()
    t = torch.tensor(2.0, requires_grad=True)
    (3 - t * 2 + 1 - (-t) + 2 * t - t * 0.5).backward()
    assert out.data == pytest.approx(3 - 4 + 1 + 2 + 4 - 1)
    assert t.grad is not None and a.grad == pytest.approx(t.grad.item())


def test_the_closed_gate_and_a_fresh_grad() -> None:
    h = Value(-4.0)
    assert h.grad == 0.0
    a = h.relu()
    ((a - 2.0) ** 2).backward()
    assert (a.data, a.grad, h.grad) == (0.0, -4.0, 0.0)


numbers = st.floats(min_value=-3, max_value=3, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


@settings(max_examples=50, deadline=None)
@given(numbers, numbers, numbers)
def test_agrees_with_pytorch(p: float, q: float, r: float) -> None:
    a, b, c = Value(p), Value(q), Value(r)
    ta, tb, tc = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (p, q, r))
    out = ((a * b + c) ** 2 - a).relu() * (b - c * 3) + a**3
    t_out = (torch.relu((ta * tb + tc) ** 2 - ta)) * (tb - tc * 3) + ta**3
    out.backward()
    t_out.backward()
    assert out.data == pytest.approx(t_out.item(), rel=1e-9, abs=1e-9)
    for mine, theirs in ((a, ta), (b, tb), (c, tc)):
        assert theirs.grad is not None
        assert mine.grad == pytest.approx(theirs.grad.item(), rel=1e-9, abs=1e-9)


def test_show_source_displays_dedented_code() -> None:
    bundle = show_source(Value.__neg__, Value.__rmul__)._repr_mimebundle_()
    assert bundle["text/plain"].startswith("def __neg__(self) -> Value:")
    assert "\n\ndef __rmul__" in bundle["text/plain"]
    assert bundle["text/markdown"].startswith("```python\ndef __neg__")


def _micrograd_readme_example(a: Any, b: Any) -> Any:
    """The expression of micrograd's README, written once for any number type with autograd."""
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    return g + 10.0 / f


def test_micrograd_readme_example_runs_and_agrees_with_pytorch() -> None:
    a, b = Value(-4.0), Value(2.0)
    g = _micrograd_readme_example(a, b)
    g.backward()
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (-4.0, 2.0))
    tg = _micrograd_readme_example(ta, tb)
    tg.backward()
    assert ta.grad is not None and tb.grad is not None
    assert g.data == pytest.approx(tg.item(), rel=1e-12)
    assert (a.grad, b.grad) == (pytest.approx(ta.grad.item()), pytest.approx(tb.grad.item()))
    assert f"{g.data:.4f} {a.grad:.4f} {b.grad:.4f}" == "24.7041 138.8338 645.5773"  # README


def test_in_place_operators_and_division_on_both_sides() -> None:
    x = Value(-4.0)
    z = 2 * x + 2 + x
    z += z * x / 3 - 1 / (x - 1)  # as micrograd's README writes it: += makes a new Value
    z.backward()
    x_t = torch.tensor(-4.0, dtype=torch.float64, requires_grad=True)
    z_t = 2 * x_t + 2 + x_t
    z_t = z_t + z_t * x_t / 3 - 1 / (x_t - 1)
    z_t.backward()
    assert x_t.grad is not None
    assert z.data == pytest.approx(z_t.item())
    assert x.grad == pytest.approx(x_t.grad.item())
