"""The specs and their engine: PyTorch computes every value, finite differences agree,
every taught chain and model answer gives PyTorch's number; each learner's numbers are
their own, drawn by the rules, and never the lesson's."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from autograder.core.engine import compute
from autograder.core.spec import ExerciseSpec, Part, upstream
from autograder.core.tape import SpecError, Tape
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.specs import SPECS, exercise_spec, learner_givens, practice

LEARNERS = [f"learner-{i}" for i in range(200)]
REPO = Path(__file__).resolve().parents[2]


def test_the_exercises_are_the_lessons() -> None:
    """One exercise per lesson in course/, with the lesson's name, in the same order."""
    lessons = tuple(sorted(p.stem for p in (REPO / "course").glob("[0-9][0-9]_*.ipynb")))
    assert len(lessons) == 9
    assert lessons == EXERCISES


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_learner_gets_checked_values(exercise: str) -> None:
    """The engine's own checks (finite differences, chains, model answers) pass for all."""
    spec = exercise_spec(exercise)
    rows = compute(spec, [learner_givens(exercise, n) for n in LEARNERS])
    assert len(rows) == len(LEARNERS)
    for row in rows:
        for part in spec.parts:
            if part.gate == "shut":
                assert row[part.name] == 0, part.name
            if part.gate == "open" and part.kind != "forward":
                assert row[part.name] != 0, part.name


# The lessons' worked numbers, as docs/syllabus.md states them: the engine on the lesson's
# givens must reproduce them (an independent, hand-written check of the engine).
WORKED = {
    "01_what_a_gradient_is": {"slope_start": 6.0, "slope_other": -4.0, "x_after_step": 2.4},
    "02_the_computation_graph": {"z_value": 19.0, "operation_nodes": 3.0, "dz_dx": 12.0},
    "03_a_neuron_by_hand": {"L": 9.0, "dL_da": 6.0, "dL_dw": 12.0, "dL_db": 6.0},
    "04_the_dead_relu": {"L": 4.0, "dL_dw": 0.0, "leaky_L": 4.1616, "leaky_dL_dw": 0.0408},
    "05_three_mechanics": {"x_grad": 60.0, "y_grad": 5.0, "grad_after_three_calls": 18.0},
    "06_one_backward_every_parameter": {
        "loss": 4.0,
        "dL_dw": 12.0,
        "dL_db": 4.0,
        "share_direct": 9.0,
        "share_sq": 18.0,
        "df_du": 27.0,
        "grad_detached": 9.0,
    },
    "07_try_it": {"cubic_slope": 46.0, "out": 2.5, "dL_dw2": 5.0, "dL_dw": 1.0},
    "08_when_backward_complains": {"grad_after_three_passes": 12.0 * 3},  # lesson: 12 a pass
    "09_autograd_by_hand": {"L": 9.0, "dL_dw": 12.0, "dL_db": 6.0},
}


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_lessons_numbers_reproduce_the_worked_examples(exercise: str) -> None:
    spec = exercise_spec(exercise)
    q = reference_quantities(exercise, {**spec.lesson_givens, **spec.constants})
    for name, number in WORKED[exercise].items():
        assert q[name].value == pytest.approx(number, rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("exercise", EXERCISES)
def test_givens_follow_the_rules(exercise: str) -> None:
    spec = exercise_spec(exercise)
    for learner in LEARNERS:
        g = learner_givens(exercise, learner)
        for given in spec.givens:
            value = g[given.name]
            assert value in given.choices and value != given.lesson, (learner, given.name)
            assert value not in (0.0, 1.0, -1.0) or given.lesson in (0.0, 1.0, -1.0)
            assert round(value, 1) == value or round(value, 2) == value
        for what, test in spec.constraints:
            assert test(g), (learner, what)


@pytest.mark.parametrize("exercise", EXERCISES)
@pytest.mark.processes
def test_learners_get_different_numbers_and_the_same_ones_every_time(exercise: str) -> None:
    a, b = learner_givens(exercise, "alice"), learner_givens(exercise, "bob")
    assert a != b
    assert learner_givens(exercise, "alice") == a
    code = (
        "from autograder.specs import learner_givens; "
        f"print(sorted(learner_givens({exercise!r}, 'alice').items()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(sorted(a.items()))
    drawn = {tuple(sorted(learner_givens(exercise, n).items())) for n in LEARNERS}
    assert len(drawn) >= 5, "too few different sets of numbers"


def test_practice_numbers_follow_the_rules_too() -> None:
    for exercise, spec in SPECS.items():
        g = practice(exercise, exercise)[1]
        assert all(test(g) for _, test in spec.constraints)


def test_stubs_name_what_to_assign_and_clash_with_no_given() -> None:
    for spec in SPECS.values():
        for part in spec.parts:
            assert part.name not in spec.given_names, (spec.name, part.name)
            if part.kind != "function":
                assert part.stub.startswith(f"# {part.name} = ...  ("), part.stub


# --- the engine catches a wrong spec --------------------------------------------------------

NEURON = exercise_spec("03_a_neuron_by_hand")
ROW = learner_givens(NEURON.name, "engine-test")


def replace_part(spec: ExerciseSpec, name: str, **changes: object) -> ExerciseSpec:
    parts = tuple(dataclasses.replace(p, **changes) if p.name == name else p for p in spec.parts)
    return dataclasses.replace(spec, parts=parts)


def test_a_wrong_chain_is_refused() -> None:
    wrong = replace_part(NEURON, "dL_dw", factors=(upstream("dL_dh"),), solution="dL_dh * dh_dw")
    with pytest.raises(SpecError, match="dL_dw: chain gives"):
        compute(wrong, [ROW])


def test_a_wrong_model_answer_is_refused() -> None:
    wrong = replace_part(NEURON, "h", solution="w * x - b")
    with pytest.raises(SpecError, match="h: model answer"):
        compute(wrong, [ROW])


class WrongBackward(torch.autograd.Function):
    """Squares, but claims the slope is x instead of 2x."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors  # type: ignore[attr-defined]
        return grad * x


def test_a_gradient_that_finite_differences_contradict_is_refused() -> None:
    def program(t: Tape) -> None:
        (x,) = t.given("x")
        t.node("y", WrongBackward.apply(x))

    part = Part("dy_dx", "dy/dx", "gradient", "hint", "2x", of=("y", "x"), solution="2 * x")
    spec = dataclasses.replace(
        exercise_spec("01_what_a_gradient_is"),
        givens=exercise_spec("01_what_a_gradient_is").givens[:1],
        constants={},
        constraints=(),
        program=program,
        parts=(part,),
    )
    with pytest.raises(SpecError, match="finite differences"):
        compute(spec, [{"x": 3.0}])


def test_unknown_exercise_lists_the_valid_names() -> None:
    with pytest.raises(KeyError, match="01_what_a_gradient_is.*07_try_it"):
        exercise_spec("08_nope")


def test_missing_givens_are_named() -> None:
    with pytest.raises(KeyError, match="no value for the given"):
        reference_quantities("03_a_neuron_by_hand", {"x": 3.0})


def test_results_are_cached_and_callers_cannot_change_them() -> None:
    first = reference_quantities(NEURON.name, ROW)
    first.pop("dL_dw")
    assert "dL_dw" in reference_quantities(NEURON.name, ROW)


@pytest.mark.processes
def test_importing_autograder_does_not_import_torch() -> None:
    code = "import autograder, autograder.learner.check, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.processes
def test_importing_autograder_and_its_command_loads_nothing_heavy() -> None:
    """`import autograder` and `autograder.cli` load no learner stack, no PyTorch, no
    nbgrader, no SymPy: a command pays for what it runs, and `Exercise` still imports."""
    heavy = ["torch", "nbgrader", "sympy", "autograder.learner.check", "autograder.diagnosis"]
    code = (
        f"import autograder, autograder.cli, sys; print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "from autograder import Exercise; print(Exercise.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "autograder.learner.check"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_stored_references_are_the_computed_ones(exercise: str, tmp_path: Path) -> None:
    """A grader keeps references in its state folder; read back, they are PyTorch's values."""
    from autograder.diagnosis import references

    givens = {**exercise_spec(exercise).constants, **learner_givens(exercise, "stored-learner")}
    (computed,) = compute(exercise_spec(exercise), [givens])
    references._values.cache_clear()
    with references.stored_in(tmp_path):
        assert not references.is_stored(exercise, givens)
        assert references.reference_values(exercise, givens) == computed  # computed, kept
        assert references.is_stored(exercise, givens)
        references._values.cache_clear()
        assert references.reference_values(exercise, givens) == computed  # read back
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{not json")  # an unreadable entry is computed again, and repaired
    references._values.cache_clear()
    with references.stored_in(tmp_path):
        assert references.reference_values(exercise, givens) == computed
    assert json.loads(entry.read_text()) == computed
    references._values.cache_clear()


def test_a_changed_spec_does_not_read_old_references(tmp_path: Path, monkeypatch: Any) -> None:
    from autograder.diagnosis import references

    givens = learner_givens(NEURON.name, "stored-learner")
    with references.stored_in(tmp_path):
        references.reference_values(NEURON.name, givens)
        assert references.is_stored(NEURON.name, givens)
        monkeypatch.setattr(references, "_code_fingerprint", lambda: "another-spec")
        assert not references.is_stored(NEURON.name, givens)


def test_another_pytorch_build_does_not_read_old_references(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The fingerprint reads PyTorch's `version.py` (version and commit) without importing
    anything: another build of PyTorch is another fingerprint."""
    import importlib.util

    from autograder.diagnosis import references

    installed = Path(torch.__file__).parent / "version.py"
    assert references._torch_build() == installed.read_bytes()
    assert torch.__version__.encode() in references._torch_build()
    ours = references._code_fingerprint.__wrapped__()

    other = tmp_path / "torch"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "version.py").write_text("__version__ = '9.9.9'\ngit_version = 'another'\n")
    found = importlib.util.spec_from_file_location("torch", other / "__init__.py")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: found)
    assert references._code_fingerprint.__wrapped__() != ours
