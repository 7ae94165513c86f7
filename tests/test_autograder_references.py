"""Every graded value is what PyTorch computes, and equals the number in the syllabus."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from autograder import references
from autograder.diagnose import format_value
from autograder.references import EXERCISES, reference_quantities

# The numbers of COURSE.md, written by hand: PyTorch must agree with every one.
SYLLABUS: dict[str, dict[str, float | bool]] = {
    "01_what_a_gradient_is": {  # y = x², slope 2x; one step of 0.1 × slope from x = 3
        "y_at_3": 9.0,
        "slope_at_3": 6.0,
        "slope_at_minus_2": -4.0,
        "slope_at_0": 0.0,
        "x_after_step": 2.4,
        "y_after_step": 5.76,
    },
    "02_the_computation_graph": {  # x = 3, y = x**2, z = 2*y + 1
        "requires_grad_by_default": False,
        "x_is_leaf": True,
        "y_value": 9.0,
        "z_value": 19.0,
        "operation_nodes": 3.0,  # power, multiply, add
        "dz_dy": 2.0,
        "dy_dx": 6.0,
        "dz_dx": 12.0,  # 1 × 2 × 6
    },
    "03_a_neuron_by_hand": {  # x = 2, w = 3, b = -1, target 2
        "h": 5.0,
        "a": 5.0,
        "L": 9.0,
        "dL_da": 6.0,
        "da_dh": 1.0,
        "dL_dh": 6.0,
        "dh_dw": 2.0,
        "dh_db": 1.0,
        "dL_dw": 12.0,
        "dL_db": 6.0,
    },
    "04_the_dead_relu": {  # x = -1; LeakyReLU with negative slope 0.01
        "h": -4.0,
        "a": 0.0,
        "L": 4.0,
        "dL_da": -4.0,
        "da_dh": 0.0,
        "dL_dh": 0.0,
        "dL_dw": 0.0,
        "dL_db": 0.0,
        "leaky_a": -0.04,
        "leaky_L": 4.1616,
        "leaky_dL_da": -4.08,
        "leaky_da_dh": 0.01,
        "leaky_dL_dw": 0.0408,
        "leaky_dL_db": -0.0408,
    },
    "05_three_mechanics": {
        "x_grad": 60.0,  # x = 2, y = x**3, z = 5y: 15x²
        "y_grad": 5.0,
        "y_grad_is_none_without_retain": True,
        "grad_after_three_calls": 18.0,  # 6, 12, 18
        "grad_after_zero_and_backward": 6.0,
        "requires_grad_inside_no_grad": False,
        "detached_value": 9.0,
        "detached_requires_grad": False,
    },
    "06_one_backward_every_parameter": {  # w = 2, b = 1, x = 3, target 5
        "y_value": 7.0,
        "loss": 4.0,
        "dL_dy": 4.0,
        "dy_dw": 3.0,
        "dL_dw": 12.0,
        "dL_db": 4.0,
    },
    "07_try_it": {  # x = 4: y = x³ - 2x; then w2 = 0.5 after lesson 3's ReLU
        "y_at_4": 56.0,
        "dy_dx_at_4": 46.0,
        "out": 2.5,
        "L": 0.25,
        "dL_dout": 1.0,
        "dL_dw2": 5.0,
        "dL_da": 0.5,
        "dL_dh": 0.5,
        "dL_dw": 1.0,
        "dL_db": 0.5,
    },
}


def test_the_exercises_are_the_seven_lessons() -> None:
    assert tuple(SYLLABUS) == EXERCISES


@pytest.mark.parametrize("exercise", EXERCISES)
def test_pytorch_agrees_with_the_syllabus(exercise: str) -> None:
    computed = reference_quantities(exercise)
    assert list(computed) == list(SYLLABUS[exercise])
    for name, number in SYLLABUS[exercise].items():
        value = computed[name].value
        if isinstance(number, bool):
            assert value is number, name
        else:
            assert type(value) is float, name
            assert value == pytest.approx(number, rel=1e-6, abs=1e-7), name


@pytest.mark.parametrize("exercise", EXERCISES)
def test_quantities_are_consistent(exercise: str) -> None:
    for name, q in reference_quantities(exercise).items():
        assert q.name == name and name.isidentifier()
        assert q.kind in ("forward", "local_slope", "gradient", "fact")
        if q.gate == "shut":
            assert q.value == 0, name
        if q.gate == "open":
            assert q.value != 0, name
        assert all(f != 0 for f in q.chain_factors), name
        if q.is_bool:
            assert q.kind == "fact" and q.gate is None and not q.chain_factors


def test_unknown_exercise_lists_the_valid_names() -> None:
    with pytest.raises(KeyError, match="01_what_a_gradient_is.*07_try_it"):
        reference_quantities("08_nope")


def test_results_are_cached_and_callers_cannot_change_them() -> None:
    first = reference_quantities("03_a_neuron_by_hand")
    first.pop("dL_dw")
    second = reference_quantities("03_a_neuron_by_hand")
    assert "dL_dw" in second
    assert second["h"] is reference_quantities("03_a_neuron_by_hand")["h"]


def test_docstring_table_matches_the_quantities() -> None:
    """The table in references' docstring is the list the notebooks are written from."""
    doc = references.__doc__ or ""
    rows = re.findall(r"^\| (\d\d)? *\| `(\w+)` \| (.+?) \| (\S+) \| (\w+)", doc, re.MULTILINE)
    expected = []
    for exercise in EXERCISES:
        for q in reference_quantities(exercise).values():
            shown = repr(q.value) if q.is_bool else format_value(q.value)
            expected.append((q.name, q.label, shown, q.kind))
    assert [row[1:] for row in rows] == expected


def test_importing_autograder_does_not_import_torch() -> None:
    code = "import autograder, autograder.check, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
