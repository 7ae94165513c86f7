"""check: the by-hand rule, Exercise.check in a namespace and in a real IPython shell, and
the code exercises of 05_three_mechanics."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from ipython_shells import run_in_shells

from autograder.answers.functions import (
    GRAD_OF_INTERMEDIATE,
    TRAIN,
    grad_of_intermediate_reference,
    judge_function_results,
    train_reference,
    train_without_zeroing,
)
from autograder.core.verdict import MISSING, Verdict, format_value
from autograder.diagnosis.byhand import HandAnswer, read_hand_answers
from autograder.diagnosis.references import reference_quantities
from autograder.learner.check import AnswerMismatch, Exercise, judge_hand_answer
from autograder.specs import exercise_spec, learner_givens, problem_words

NEURON = "03_a_neuron_by_hand"
TESTER = "tester"
"""Whose numbers Exercise uses in these tests (JUPYTERHUB_USER)."""
MINE = reference_quantities(NEURON, learner_givens(NEURON, TESTER))
DW = format_value(MINE["dL_dw"].value)
H = MINE["h"].value


@pytest.fixture(autouse=True)
def as_tester(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", TESTER)


MECHANICS = "05_three_mechanics"
FUNCTION_TASKS = {MECHANICS: {"train": TRAIN, "grad_of_intermediate": GRAD_OF_INTERMEDIATE}}


def lesson(exercise: str) -> dict[str, float]:
    """The lesson's numbers (the worked example, where dL/dw = 12)."""
    spec = exercise_spec(exercise)
    return {**spec.lesson_givens, **spec.constants}


def judge(
    exercise: str, name: str, answer: HandAnswer | None = None, runtime: object = MISSING
) -> Verdict:
    return judge_hand_answer(exercise, name, answer, runtime, givens=lesson(exercise))


def hand(source: str, name: str = "dL_dw") -> HandAnswer | None:
    return read_hand_answers([source]).get(name)


# --- judge_hand_answer: what the trusted grader calls -------------------------------------


GIVEN_LINE = "x, w, b, y = exercise.given('x', 'w', 'b', 'y')"


def formula(source: str, name: str = "dL_dw") -> HandAnswer | None:
    return read_hand_answers([GIVEN_LINE, source], lesson(NEURON)).get(name)


def test_hand_arithmetic_passes() -> None:
    verdict = judge(NEURON, "dL_dw", formula("dL_dw = 2 * (max(w * x + b, 0) - y) * x"))
    assert verdict.passed and verdict.message == "✓ dL/dw = 12.0 matches PyTorch"


def test_a_bare_number_earns_nothing_right_or_wrong() -> None:
    right = judge(NEURON, "dL_dw", hand("dL_dw = 12"))
    assert (right.passed, right.reason) == (False, "no_arithmetic")
    assert "PyTorch's number, but written as a bare number" in right.message
    assert "max(" not in right.message and "* x" not in right.message  # no formula given away
    wrong = judge(NEURON, "dL_dw", hand("dL_dw = 36.0"))
    assert (wrong.passed, wrong.reason) == (False, "no_arithmetic")
    assert "but PyTorch gives 12" in wrong.message
    assert "the cause can only be guessed from the value" in wrong.message  # a guess, said so


def test_arithmetic_with_the_learners_own_numbers_is_read_as_names() -> None:
    """2 · (5 − 2) · 2 where a = 5 and x = y = 2: the chain, read with names (issue 45)."""
    read = judge(NEURON, "dL_dw", hand("dL_dw = 2 * (5 - 2) * 2"))
    assert (read.passed, read.reason) == (True, "match")
    assert "read with your numbers as names: dL_dw = 2 * (a - y) * x" in read.message


def test_an_answer_computed_with_autograd_scores_zero() -> None:
    verdict = judge(NEURON, "dL_dw", hand("dL_dw = w.grad.item()"), 12.0)
    assert (verdict.passed, verdict.reason) == (False, "autograd")
    assert "computed with autograd (uses `.grad`)" in verdict.message
    assert "by hand means by hand: write the arithmetic with the given names" in verdict.message
    assert "`dL_da = 2 * (a - y)`" in verdict.message and "(5 - 2)" not in verdict.message


def test_a_tensor_answer_is_not_arithmetic() -> None:
    verdict = judge(NEURON, "dL_dw", hand("dL_dw = torch.tensor(12.0)"))
    assert verdict.reason == "not_arithmetic"
    assert "calls `torch.tensor`" in verdict.message
    assert "Write numbers with + - * / **" in verdict.message


def test_unanswered_and_unreadable() -> None:
    assert judge(NEURON, "dL_dw", None).reason == "unanswered"
    assert judge(NEURON, "dL_dw", hand("dL_dw = ...")).reason == "unanswered"
    todo = judge(NEURON, "dL_dw", hand("dL_dw = 12\nraise NotImplementedError()"))
    assert todo.reason == "unanswered" and "NotImplementedError" in todo.message
    broken = judge(NEURON, "dL_dw", hand("dL_dw = 12 / 0"))
    assert broken.reason == "error" and "division by zero" in broken.message


def test_a_wrong_hand_answer_is_diagnosed() -> None:
    verdict = judge(NEURON, "dL_dw", formula("dL_dw = 2 * (max(w * x + b, 0) - y) * x * w"))
    assert verdict.reason == "given_extra"


def test_bool_hand_answers() -> None:
    answer = hand("flag = 1 > 2", "requires_grad_inside_no_grad")
    assert answer is None
    answer = hand("requires_grad_inside_no_grad = False", "requires_grad_inside_no_grad")
    assert judge(MECHANICS, "requires_grad_inside_no_grad", answer).passed


def test_bool_facts_must_be_predicted() -> None:
    name = "requires_grad_inside_no_grad"
    verdict = judge(MECHANICS, name, hand(f"{name} = y.requires_grad", name))
    assert verdict.reason == "not_arithmetic" and "Write True or False" in verdict.message


def test_without_source_the_runtime_value_is_judged() -> None:
    assert judge(NEURON, "dL_dw", None, 12.0).passed
    assert judge(NEURON, "dL_dw", None, torch.tensor(12.0)).reason == "tensor"


def test_runtime_value_that_differs_from_the_cells_is_stale() -> None:
    verdict = judge(NEURON, "dL_dw", hand("dL_dw = 12.0"), 13.0)
    assert verdict.reason == "stale" and "run the answer cell again" in verdict.message
    assert judge(NEURON, "dL_dw", hand("dL_dw = 12.0"), 12.0).reason == "no_arithmetic"
    assert judge(NEURON, "dL_dw", hand("dL_dw = 12"), 12).reason == "no_arithmetic"


def test_unknown_names_raise_key_error() -> None:
    with pytest.raises(KeyError, match="grades no hand answer 'nope'"):
        judge(NEURON, "nope", None)
    with pytest.raises(KeyError, match="valid names"):
        Exercise("99_nope")


@pytest.mark.parametrize("exercise", list(FUNCTION_TASKS) + [NEURON])
def test_every_reference_written_as_a_decimal_earns_only_where_it_is_a_fact(
    exercise: str,
) -> None:
    """Hand answers typed as decimals earn nothing through the whole grader path, except
    facts and values the chain's branches fix (the slope 1 of an open ReLU)."""
    refused = 0
    for name, q in Exercise(exercise).quantities.items():
        literal = repr(q.value) if q.is_bool else f"{float(q.value):.4g}"
        verdict = judge_hand_answer(
            exercise, name, hand(f"{name} = {literal}", name), givens=Exercise(exercise).givens
        )
        assert verdict.passed or verdict.reason == "no_arithmetic", verdict.message
        assert verdict.passed or not q.is_bool
        refused += not verdict.passed
    assert refused >= 2


# --- Exercise.check outside IPython: the caller's globals ---------------------------------


Runner = Callable[..., str]


@pytest.fixture
def run_check(capsys: pytest.CaptureFixture[str]) -> Runner:
    """Run code with a namespace as its globals, as a plain script would; return its output."""

    def run(code: str, **namespace: object) -> str:
        capsys.readouterr()
        env: dict[str, Any] = {"Exercise": Exercise, **namespace}
        exec(compile(code, "<cell>", "exec"), env)
        return capsys.readouterr().out.rstrip("\n")

    return run


def test_check_reads_the_callers_globals(run_check: Runner) -> None:
    out = run_check(
        "Exercise('03_a_neuron_by_hand').check('dL_dw', 'h')", dL_dw=MINE["dL_dw"].value, h=int(H)
    )
    assert out == f"✓ dL/dw = {DW} matches PyTorch\n✓ h = {int(H)} matches PyTorch"


def test_check_raises_one_message_per_failure(run_check: Runner) -> None:
    with pytest.raises(AnswerMismatch) as caught:
        run_check("Exercise('03_a_neuron_by_hand').check('dL_dw', 'dL_db', 'h')", dL_dw=6.0, h=H)
    message = str(caught.value)
    assert f"✗ dL/dw = 6.0, but PyTorch gives {DW}." in message
    assert "`dL_db` is not answered yet" in message
    assert f"h = {format_value(H)}" not in message
    assert isinstance(caught.value, AssertionError)


def test_check_without_names_checks_everything(run_check: Runner) -> None:
    values = {n: q.value for n, q in Exercise("06_one_backward_every_parameter").quantities.items()}
    out = run_check("Exercise('06_one_backward_every_parameter').check()", **values)
    assert out.count("✓") == len(values)


def test_answer_mismatch_renders_as_one_short_message() -> None:
    error = AnswerMismatch("✗ dL/dw = 6.0, but PyTorch gives 12.0.\n  Half of it.")
    assert error._render_traceback_() == [
        "AnswerMismatch: ✗ dL/dw = 6.0, but PyTorch gives 12.0.",
        "  Half of it.",
    ]


# --- the code exercises -------------------------------------------------------------------


def train_fixed(x0: float, lr: float, steps: int) -> float:
    x = torch.tensor(x0, requires_grad=True)
    for _ in range(steps):
        loss = (x - 5) ** 2
        loss.backward()
        assert x.grad is not None
        with torch.no_grad():
            x -= lr * x.grad
        x.grad.zero_()
    return x.item()


def train_in_float64(x0: float, lr: float, steps: int) -> float:
    x = x0
    for _ in range(steps):
        x -= lr * 2 * (x - 5)
    return x


def intermediate_fixed(x0: float) -> float:
    x = torch.tensor(x0, requires_grad=True)
    y = x**3
    y.retain_grad()
    z = y * y
    z.backward()
    assert y.grad is not None
    return y.grad.item()


def intermediate_x_grad(x0: float) -> float:
    x = torch.tensor(x0, requires_grad=True)
    z = (x**3) * (x**3)
    z.backward()
    assert x.grad is not None
    return x.grad.item()


def judge_function(task: str, function: Callable[..., object], seed: int = 0) -> Any:
    t = FUNCTION_TASKS[MECHANICS][task]
    cases = t.make_cases(random.Random(seed))
    return judge_function_results(t, cases, [function(*case) for case in cases])


@pytest.mark.parametrize("seed", range(5))
def test_correct_functions_pass(seed: int) -> None:
    assert judge_function("train", train_fixed, seed).passed
    assert judge_function("train", train_in_float64, seed).passed
    assert judge_function("grad_of_intermediate", intermediate_fixed, seed).passed
    assert judge_function("grad_of_intermediate", lambda x0: 2 * x0**3, seed).passed


def test_the_accumulation_bug_is_named() -> None:
    verdict = judge_function("train", train_without_zeroing)
    assert (verdict.passed, verdict.reason) == (False, "known_mistake")
    assert verdict.message.startswith("✗ train(0.0, 0.1, 10) returned 4.88001, but PyTorch gives")
    assert "Gradients accumulate" in verdict.message and "x.grad.zero_()" in verdict.message


def test_reading_the_wrong_gradient_is_named() -> None:
    verdict = judge_function("grad_of_intermediate", intermediate_x_grad)
    assert verdict.reason == "known_mistake" and "That is x.grad" in verdict.message
    verdict = judge_function("grad_of_intermediate", lambda x0: x0**3)
    assert "the value of y" in verdict.message


@pytest.mark.parametrize(
    ("result", "words"),
    [
        (None, "returned None"),
        (torch.tensor(4.46), "returned a tensor"),
        ("4.46", "returned a str"),
        (float("nan"), "not a finite number"),
    ],
)
def test_function_results_must_be_plain_numbers(result: object, words: str) -> None:
    verdict = judge_function("train", lambda *case: result)
    assert not verdict.passed and words in verdict.message


def test_buggy_and_fixed_train_differ_on_the_fixed_cases() -> None:
    """The fixed cases catch the bug whatever the random ones turn out to be."""
    for case in FUNCTION_TASKS[MECHANICS]["train"].make_cases(random.Random(1))[:3]:
        assert abs(train_reference(*case) - train_without_zeroing(*case)) > 0.1


def test_references_of_functions_follow_the_course() -> None:
    assert grad_of_intermediate_reference(2.0) == 16.0  # 2 * 2**3
    assert train_reference(5.0, 0.1, 10) == 5.0


def test_check_function_in_a_namespace(run_check: Runner) -> None:
    out = run_check(
        "Exercise('05_three_mechanics').check_function('train', seed=3)", train=train_fixed
    )
    assert out == "✓ train(x0, lr, steps) matches PyTorch on 6 cases"
    with pytest.raises(AnswerMismatch, match="Gradients accumulate"):
        run_check(
            "Exercise('05_three_mechanics').check_function('train')", train=train_without_zeroing
        )
    with pytest.raises(AnswerMismatch, match="raised ZeroDivisionError"):
        run_check("Exercise('05_three_mechanics').check_function('train')", train=lambda *a: 1 / 0)
    with pytest.raises(AnswerMismatch, match="not a function yet"):
        run_check("Exercise('05_three_mechanics').check_function('train')")


# --- Exercise.check in a real IPython shell -----------------------------------------------

SETUP = (
    "import torch\nfrom autograder.learner.check import Exercise\n"
    "ex = Exercise('03_a_neuron_by_hand')"
)
GIVEN = "x, w, b, y = ex.given('x', 'w', 'b', 'y')"
SCENARIOS: dict[str, list[str]] = {
    "by_hand": [
        SETUP,
        GIVEN,
        "dL_dw = 2 * (w * x + b - y) * x",
        "ex.check('dL_dw')",
    ],
    "follow_on": [
        SETUP,
        GIVEN,
        "dL_da = w * x + b - y",
        "dL_dh = dL_da * 1",
        "ex.check('dL_dh')",
    ],
    "practice": [
        SETUP,
        "ex.practise()",
        GIVEN,
        "dL_dw = 2 * (w * x + b - y) * x",
        "ex.check('dL_dw')",
        "ex.practise(False)",
        GIVEN,
        "dL_dw = 2 * (w * x + b - y) * x",
        "ex.check('dL_dw')",
    ],
    "autograd": [
        SETUP,
        "wt = torch.tensor(3.0, requires_grad=True)\nL = (wt * 2 - 1 - 2) ** 2\nL.backward()",
        "dL_dw = wt.grad.item()",
        "ex.check('dL_dw')",
    ],
    "tensor": [SETUP, "dL_dw = torch.tensor(12.0)", "ex.check('dL_dw')"],
    "fixed_after_retry": [
        SETUP,
        f"dL_dw = {MINE['dL_dw'].value / 2}",
        "ex.check('dL_dw')",
        f"dL_dw = {MINE['dL_dw'].value}",
        "ex.check('dL_dw')",
    ],
    "stale": [SETUP, "dL_dw = 12.0", "globals()['dL_dw'] = 13.0", "ex.check('dL_dw')"],
    "cell_failed": [SETUP, "dL_dw = 12.0\nfoo(", "ex.check('dL_dw')"],
    "magic": [SETUP, "%time dL_db = 6.0", "ex.check('dL_db')"],
    "todo": [
        SETUP,
        "dL_dw = 12.0\n# YOUR CODE HERE\nraise NotImplementedError()",
        "ex.check('dL_dw')",
    ],
    "function": [
        "import torch\nfrom autograder.learner.check import Exercise",
        "def train(x0, lr, steps):\n    x = x0\n    for _ in range(steps):\n"
        "        x -= lr * 2 * (x - 5)\n    return x",
        "Exercise('05_three_mechanics').check_function('train')",
    ],
}


@pytest.fixture(scope="module")
def ipython(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every scenario run cell by cell in a fresh real InteractiveShell (one subprocess)."""
    return run_in_shells(SCENARIOS, tmp_path_factory.mktemp("ipython"), TESTER)


@pytest.mark.processes
def test_ipython_by_hand_passes(ipython: dict[str, list[dict[str, Any]]]) -> None:
    given, last = ipython["by_hand"][1], ipython["by_hand"][-1]
    shown = ", ".join(
        f"{n} = {format_value(v)}" for n, v in MINE["h"].values.items() if n in "xwby"
    )
    # self-study: the lesson's neuron, said so under the numbers
    own = f"Numbers of tester (JUPYTERHUB_USER): {shown}\n{problem_words(NEURON)}\n"
    assert "(the lesson's)" in problem_words(NEURON)
    assert given["out"] == own
    assert last == {"ok": True, "out": f"✓ dL/dw = {DW} matches PyTorch\n", "error": None}


@pytest.mark.processes
def test_ipython_follow_on_points_at_the_earlier_part(
    ipython: dict[str, list[dict[str, Any]]],
) -> None:
    last = ipython["follow_on"][-1]
    half = format_value(MINE["dL_dh"].value / 2)
    assert (
        f"✗ dL/dh = {half}, but PyTorch gives {format_value(MINE['dL_dh'].value)}." in last["out"]
    )
    assert f"Consistent with your dL/da = {half}" in last["out"] and "fix Part D" in last["out"]


@pytest.mark.processes
def test_ipython_practice_numbers_are_fresh_and_not_graded(
    ipython: dict[str, list[dict[str, Any]]],
) -> None:
    practice = ipython["practice"]
    assert practice[2]["out"].startswith("Numbers of practice (fresh numbers, not graded)")
    assert practice[4]["ok"] and practice[4]["out"].startswith("(practice numbers) ✓ dL/dw")
    assert practice[6]["out"].startswith("Numbers of tester")
    assert practice[8]["ok"] and f"✓ dL/dw = {DW}" in practice[8]["out"]


@pytest.mark.processes
def test_ipython_autograd_fails_with_a_short_message(
    ipython: dict[str, list[dict[str, Any]]],
) -> None:
    last = ipython["autograd"][-1]
    assert (last["ok"], last["error"]) == (False, "AnswerMismatch")
    assert last["out"].startswith("AnswerMismatch: ✗ dL/dw: `dL_dw` was computed with autograd")
    assert "Traceback" not in last["out"] and "File " not in last["out"]
    assert len(last["out"].strip().split("\n")) <= 2


@pytest.mark.processes
def test_ipython_messages(ipython: dict[str, list[dict[str, Any]]]) -> None:
    assert "calls `torch.tensor`" in ipython["tensor"][-1]["out"]
    retry = ipython["fixed_after_retry"]
    assert "A number without its arithmetic" in retry[2]["out"] and not retry[2]["ok"]
    # a bare number gets no formula-based story, only its value's slip, said as a guess
    assert "the cause can only be guessed from the value" in retry[2]["out"]
    assert "You wrote" not in retry[2]["out"]
    assert "PyTorch's number, but written as a bare number" in retry[4]["out"]
    assert not retry[4]["ok"]
    assert "run the answer cell again" in ipython["stale"][-1]["out"]
    assert "has no value in the notebook" in ipython["cell_failed"][-1]["out"]
    assert "not assigned by a `dL_db = ...` line" in ipython["magic"][-1]["out"]
    assert "NotImplementedError" in ipython["todo"][-1]["out"]
    assert ipython["function"][-1]["out"].startswith("✓ train(x0, lr, steps) matches PyTorch")


def test_outside_ipython_no_history_is_read(run_check: Runner) -> None:
    """A script has no cells to read: the runtime value alone is judged."""
    assert MISSING is not None
    out = run_check(
        "g = 2 * 6\nExercise('03_a_neuron_by_hand').check('dL_dw')", dL_dw=MINE["dL_dw"].value
    )
    assert out.startswith("✓")


# --- whose numbers --------------------------------------------------------------------------


def test_identity_under_nbgrader_autograde_is_the_submission_folder(tmp_path: Path) -> None:
    from autograder.learner.identity import learner_identity

    folder = tmp_path / "autograded" / "ben" / NEURON
    env = {"NBGRADER_EXECUTION": "autograde", "JUPYTERHUB_USER": "someone-else"}
    assert learner_identity(env, folder) == ("ben", "the folder nbgrader is grading")


def test_identity_order_hub_user_then_nbgrader_then_local_user(tmp_path: Path) -> None:
    import getpass

    from autograder.learner.identity import learner_identity

    assert learner_identity({"JUPYTERHUB_USER": "hub-user"}, tmp_path)[0] == "hub-user"
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.student_id = 'configured-student'\n"
    )
    assert learner_identity({}, tmp_path) == ("configured-student", "nbgrader's student id")
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert learner_identity({}, tmp_path) == (getpass.getuser(), "the local user name")
    validating = {"NBGRADER_EXECUTION": "validate", "JUPYTERHUB_USER": "hub-user"}
    assert learner_identity(validating, tmp_path)[0] == "hub-user"


def test_practice_is_off_while_grading(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    exercise = Exercise(NEURON)
    exercise.practise()
    assert "off while the notebook is graded" in capsys.readouterr().out
    assert exercise._practice is None
