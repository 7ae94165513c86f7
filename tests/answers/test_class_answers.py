"""Issue 12's graded parts: exercise 6's paths, exercise 8's functions to repair, and
exercise 9's class answer kind (the learner's `Value` on random graphs, judged by PyTorch).

Fast checks without the sandbox; the sandboxed `autograder grade` and `nbgrader autograde`
runs of the sample class (tests/grading/test_grader_parallel.py,
tests/grading/test_nbgrader_e2e.py) grade 08 and 09 end to end, with identical grades.
"""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from capstone_classes import CLASSES, class_cells
from test_spec_trusted import instructor_cells
from test_value_graphs import Mini, buggy

from autograd_lessons.value import Value
from autograder.answers.classes import draw_graphs_for
from autograder.answers.functions import judge_function_results
from autograder.answers.value_bugs import BUGS
from autograder.core.givens import PUBLIC
from autograder.core.tasks import GRAPHS_PER_PART
from autograder.core.value_build import evaluate_all
from autograder.diagnosis.diagnose import diagnose
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.diagnosis.references import reference_quantities
from autograder.grading.trusted import function_calls, givens_for, instructor_plan, verdicts
from autograder.learner.check import AnswerMismatch, Exercise
from autograder.specs import class_tasks, function_tasks, learner_givens

ROOT = Path(__file__).resolve().parents[2]
CAPSTONE = "09_autograd_by_hand"
ERRORS = "08_when_backward_complains"
PATHS = "06_one_backward_every_parameter"
CLASS_PARTS = list(class_tasks(CAPSTONE))
POINTS = sum(len(task.units) for task in class_tasks(CAPSTONE).values())


def _verdict(cls: Any, part: str, seed: int) -> Any:
    graphs = draw_graphs_for(class_tasks(CAPSTONE)[part], random.Random(seed))
    results: list[object] = list(evaluate_all(cls, graphs))
    context = JudgeContext(CAPSTONE, {}, builds={part: (graphs, results)})
    return judge(CAPSTONE, part, context)


@pytest.mark.parametrize("part", CLASS_PARTS)
def test_a_correct_value_scores_every_class_part_on_200_graphs(part: str) -> None:
    assert class_tasks(CAPSTONE)[part].count >= 200 == GRAPHS_PER_PART
    for seed in (1, 2):
        verdict = _verdict(Value, part, seed)
        assert verdict.passed, verdict.message
        assert f"{GRAPHS_PER_PART}/{GRAPHS_PER_PART} random graphs" in verdict.message


def _points(part: str, verdict: Any) -> float:
    if verdict.passed:
        return float(len(class_tasks(CAPSTONE)[part].units))
    return float(verdict.points or 0.0)


OPERATIONS_RIGHT = re.compile(r"(\d+) of (\d+) operations right")


def _live(name: str, seed: int) -> tuple[float, str]:
    """The live checks of class `name`, each run after its own cell as in the notebook:
    the points their words give, and their text."""
    exercise = Exercise(CAPSTONE)
    namespace: dict[str, Any] = {**NOTEBOOK, "exercise": exercise}
    points, text = 0.0, []
    for part, source in class_cells(name).items():
        exec(source, namespace)
        try:
            exec(f"exercise.check_class({part!r}, seed={seed})", namespace)
            points += len(class_tasks(CAPSTONE)[part].units)
        except AnswerMismatch as mismatch:
            found = OPERATIONS_RIGHT.search(str(mismatch))
            points += int(found[1]) if found else 0
            text.append(str(mismatch))
    return points, "\n".join(text)


def _graded(name: str, seed: int) -> float:
    """The grader's points for class `name`: its graphs, the notebook's final class."""
    cells = _release_cells(CAPSTONE)
    trusted = instructor_plan(instructor_cells(CAPSTONE), cells, random.Random(seed))
    namespace: dict[str, Any] = dict(NOTEBOOK)
    for source in class_cells(name).values():
        exec(source, namespace)
    sent = [
        {"function": c["function"], "builds": evaluate_all(namespace["Value"], c["graphs"])}
        for c in function_calls(trusted)
    ]
    found = verdicts(trusted, cells, sent, givens_for(CAPSTONE, "ada", PUBLIC))
    return sum(_points(trusted.class_checks[i], found[i][0]) for i in trusted.class_checks)


@pytest.mark.parametrize("name", list(CLASSES))
def test_the_capstone_table_live_and_graded_alike(name: str) -> None:
    """Each classic class: its bug named where it lives, the points it keeps for every other
    operation, the same live (each check after its own cell) and in the grader (its own
    graphs, the notebook's final class). `pytest -s -k table` prints the table."""
    _, key, expected = CLASSES[name]
    live, text = _live(name, seed=3)
    graded = _graded(name, seed=7)
    print(f"| {name} | {BUGS[key].line() if key else 'right'} | live {live:g}/{POINTS} | "
          f"graded {graded:g}/{POINTS} |")  # fmt: skip
    assert live == graded == expected, text
    if key:
        assert BUGS[key].line() in text, text


def test_a_bug_in_star_found_by_the_minus_parts_is_blamed_on_star() -> None:
    """Unary - written as a * -1 (lesson 9's way): * with its factor missing costs *'s
    point; unary - keeps its own."""
    verdict = _verdict(buggy("mul_factor"), "value_mul", 3)
    assert f"Likely bug {BUGS['mul_factor'].line()}." in verdict.message, verdict.message
    assert verdict.points == 2.0, verdict.message


NOTEBOOK = {"__name__": "__main__"}  # a notebook's namespace: its classes are __main__'s


def _notebook_class(source: str) -> dict[str, Any]:
    namespace = dict(NOTEBOOK)
    exec(source, namespace)
    return namespace


def _solution_class() -> str:
    cells = [c.source for c in _release_cells(CAPSTONE) if c.cell_type == "code"]
    value_cells = [c for c in cells if "class Value" in c or "Value." in c]
    return "\n".join(value_cells)


def test_the_kernel_check_uses_the_learners_class_and_raises_on_a_bug() -> None:
    exercise = Exercise(CAPSTONE)
    namespace = _notebook_class(_solution_class())
    exec("exercise.check_class('value_relu')", {**namespace, "exercise": exercise})
    overwriting = _solution_class().replace("self.grad += out.grad", "self.grad = out.grad", 1)
    broken = _notebook_class(overwriting)
    with pytest.raises(AnswerMismatch, match="overwritten"):
        exec("exercise.check_class('value_add')", {**broken, "exercise": exercise})
    with pytest.raises(AnswerMismatch, match="not defined yet"):
        exec("exercise.check_class('value_add')", {**NOTEBOOK, "exercise": exercise})


@pytest.mark.parametrize(
    "line", ["self.grad += out.grad", "other.grad += out.grad"], ids=["self", "other"]
)
def test_an_overwrite_on_one_side_is_named_on_every_draw(line: str) -> None:
    """Learners often overwrite on one side of `+` only; whatever graphs a check draws,
    the bug is named (one-sided overwrites once went unnamed on 8% of the draws)."""
    exercise = Exercise(CAPSTONE)
    overwriting = _solution_class().replace(line, line.replace("+=", "="))
    assert overwriting != _solution_class()
    namespace = {**_notebook_class(overwriting), "exercise": exercise}
    for seed in range(25):  # draws 2, 14 and 23 went unnamed before
        with pytest.raises(AnswerMismatch, match="overwritten"):
            exec(f"exercise.check_class('value_add', seed={seed})", namespace)


@pytest.mark.parametrize("how", ["imported", "subclass of an imported one"])
def test_an_imported_value_is_refused_live_with_the_graders_words(how: str) -> None:
    """The grader runs only the notebook's cells, where autograd_lessons is not: it gets
    no class. The live check says the same, word for word, instead of a ✓."""
    exercise = Exercise(CAPSTONE)
    namespace = {**NOTEBOOK, "Value": Value, "exercise": exercise}
    if how != "imported":
        exec("class Value(Value):\n    pass", namespace)
    for part in CLASS_PARTS:
        with pytest.raises(AnswerMismatch) as live:
            exec(f"exercise.check_class({part!r}, seed=11)", namespace)
        grader = _verdict(None, part, 11)
        assert not grader.passed and str(live.value) == grader.message
        assert "imported from a module" in grader.message and "0/200" in grader.message


def test_a_class_that_raises_or_returns_no_numbers_scores_nothing() -> None:
    class NoRadd(Mini):
        __radd__ = None  # type: ignore[assignment]

    for cls, why in ((NoRadd, "raised TypeError"), (None, "define no such class")):
        verdict = _verdict(cls, "value_add", 4)
        assert not verdict.passed and why in verdict.message, verdict.message
    graphs = draw_graphs_for(class_tasks(CAPSTONE)["value_add"], random.Random(5))
    missing = JudgeContext(CAPSTONE, {}, builds={"value_add": (graphs, "Value is not defined")})
    assert not judge(CAPSTONE, "value_add", missing).passed
    assert not judge(CAPSTONE, "value_add", JudgeContext(CAPSTONE, {})).passed


def _release_cells(name: str) -> list[Any]:
    path = ROOT / "solutions" / name / f"{name}.ipynb"
    return list(nbformat.read(path, as_version=4).cells)


def test_the_trusted_grader_draws_its_own_graphs_and_judges_what_the_class_gave() -> None:
    cells = _release_cells(CAPSTONE)
    trusted = instructor_plan(instructor_cells(CAPSTONE), cells, random.Random(7))
    assert sorted(trusted.class_checks.values()) == sorted(CLASS_PARTS)
    calls = function_calls(trusted)
    assert {c["function"] for c in calls} == set(CLASS_PARTS)
    tasks = class_tasks(CAPSTONE)
    for c in calls:  # 200 graphs for each operation the part credits
        assert c["class"] == "Value" and len(c["graphs"]) == 200 * len(tasks[c["function"]].units)
    # what the sandboxed worker sends back: the class's numbers, nothing else
    right = [{"function": c["function"], "builds": evaluate_all(Value, c["graphs"])} for c in calls]
    wrong = [
        {"function": c["function"], "builds": evaluate_all(buggy("no_seed"), c["graphs"])}
        for c in calls
    ]
    for sent, passed in ((right, True), (wrong, False)):
        found = verdicts(trusted, cells, sent, givens_for(CAPSTONE, "ada", PUBLIC))
        class_verdicts = [found[i][0] for i in trusted.class_checks]
        assert all(v.passed is passed for v in class_verdicts), [v.message for v in class_verdicts]
    nothing = verdicts(trusted, cells, [], givens_for(CAPSTONE, "ada", PUBLIC))
    assert not any(nothing[i][0].passed for i in trusted.class_checks)


def test_the_sandbox_builder_imports_nothing_that_knows_answers() -> None:
    tree = ast.parse((ROOT / "autograder" / "core" / "value_build.py").read_text())
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert modules == {"__future__", "collections.abc", "typing"}, modules
    from autograder.sandbox.workers import shim_files

    assert "core/value_build.py" in shim_files()
    shim = (ROOT / "autograder_shim" / "__init__.py").read_text()
    assert "def check_class" in shim


# --- exercise 8: the functions to repair ---------------------------------------------------

AS_GIVEN = re.compile(r"# As given: (.+?)  \(")
ERROR_TEXT = {
    "cut_grad": "does not require grad",
    "first_grad": "only for scalar outputs",
    "saved_grad": "modified by an inplace operation",
    "sgd_step": "leaf Variable that requires grad",
}


def _function_cell(name: str, part: str) -> str:
    for cell in _release_cells(name):
        if cell.metadata.get("nbgrader", {}).get("grade_id") == part:
            return str(cell.source)
    raise KeyError(part)


@pytest.mark.parametrize("part", sorted(ERROR_TEXT))
def test_each_function_as_given_hits_its_error_and_the_fix_matches_pytorch(part: str) -> None:
    import torch

    source = _function_cell(ERRORS, part)
    as_given = AS_GIVEN.search(source)
    assert as_given is not None, source
    region = re.compile(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION", re.S)
    broken = region.sub(lambda m: m.group(1) + as_given.group(1), source)
    task = function_tasks(ERRORS)[part]
    cases = task.make_cases(random.Random(8))
    scope: dict[str, Any] = {"torch": torch}
    exec(broken, scope)
    with pytest.raises(RuntimeError, match=ERROR_TEXT[part]):
        scope[part](*cases[0])
    exec(re.sub(r"^ *### (BEGIN|END) SOLUTION\n?", "", source, flags=re.M), scope)
    results = [scope[part](*case) for case in cases]
    assert judge_function_results(task, cases, results).passed


def test_known_wrong_repairs_are_named() -> None:
    tasks = function_tasks(ERRORS)
    for part, wrong, named in (
        ("first_grad", lambda x0, x1: float(x0), "gradient of the mean"),
        ("saved_grad", lambda x0: 2.718281828459045 ** float(x0), "×3 is missing"),
        ("sgd_step", lambda w0, lr: float(w0), "did not move"),
    ):
        cases = tasks[part].make_cases(random.Random(9))
        verdict = judge_function_results(tasks[part], cases, [wrong(*c) for c in cases])
        assert not verdict.passed and named in verdict.message, verdict.message


# --- exercise 6: paths add up --------------------------------------------------------------


@pytest.mark.parametrize("learner", ["ada", "ben", "learner-7"])
def test_paths_add_up_with_the_learners_own_u(learner: str) -> None:
    givens = learner_givens(PATHS, learner)
    u = givens["u"]
    assert abs(u) != 3.0  # never the lesson's 9 + 18 = 27
    q = reference_quantities(PATHS, givens)
    assert (q["share_direct"].value, q["share_sq"].value) == (u**2, 2 * u**2)
    assert q["df_du"].value == 3 * u**2 and q["grad_detached"].value == u**2
    one_path = diagnose(q["df_du"], u**2)
    assert not one_path.passed and "followed one path only" in one_path.message
    other_path = diagnose(q["df_du"], 2 * u**2)
    assert "followed one path only" in other_path.message
    both = diagnose(q["grad_detached"], 3 * u**2)
    assert "detached path sends nothing" in both.message
