"""Every exercise's spec, one module each; `SPECS` maps the assignment name to its spec.

Adding an exercise: write `exNN_name.py` with a `SPEC`, add it to `_MODULES`, write the
hand-written prose of `solutions/NN_name/NN_name.ipynb` around the graded cells that
`python -m autograder.spec_notebooks --write` generates, and run `make exercises`.
"""

from __future__ import annotations

from autograder.exercises import (
    ex01_what_a_gradient_is,
    ex02_the_computation_graph,
    ex03_a_neuron_by_hand,
    ex04_the_dead_relu,
    ex05_three_mechanics,
    ex06_one_backward_every_parameter,
    ex07_try_it,
    ex08_when_backward_complains,
    ex09_autograd_by_hand,
)
from autograder.spec import ExerciseSpec

_MODULES = (
    ex01_what_a_gradient_is,
    ex02_the_computation_graph,
    ex03_a_neuron_by_hand,
    ex04_the_dead_relu,
    ex05_three_mechanics,
    ex06_one_backward_every_parameter,
    ex07_try_it,
    ex08_when_backward_complains,
    ex09_autograd_by_hand,
)

SPECS: dict[str, ExerciseSpec] = {m.SPEC.name: m.SPEC for m in _MODULES}
