"""`Exercise(name).check("dL_dw")`: what the notebooks' test cells call.

The verdict logic is the pure `judge_hand_answer`, which the trusted grader also calls
with an answer read from the submission's source and no runtime value at all.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import Any

from autograder.byhand import HandAnswer, read_hand_answers
from autograder.diagnose import MISSING, Verdict, diagnose, format_value
from autograder.functions import FUNCTION_TASKS, call_text, judge_function_results
from autograder.quantities import Quantity
from autograder.references import EXERCISES, reference_quantities

ALLOWED_FORM = (
    "Write numbers with + - * / ** and ( ), names you assigned that way, or max, min, abs, round."
)


class AnswerMismatch(AssertionError):
    """A graded answer does not match PyTorch; the text is the teaching message."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: just the message."""
        return f"AnswerMismatch: {self}".split("\n")


def quantity(exercise: str, name: str) -> Quantity:
    """The graded quantity `name` of `exercise`; KeyError listing the valid names."""
    quantities = reference_quantities(exercise)
    if name not in quantities:
        raise KeyError(f"{exercise} grades no {name!r}; valid names: {', '.join(quantities)}")
    return quantities[name]


def _same_value(runtime: object, hand: float | bool) -> bool:
    if type(hand) is bool or type(runtime) is bool:
        return runtime is hand
    if type(runtime) not in (int, float) or not isinstance(runtime, int | float):
        return False
    return math.isclose(runtime, hand, rel_tol=1e-9, abs_tol=1e-12)


def judge_hand_answer(
    exercise: str, name: str, answer: HandAnswer | None, runtime_value: object = MISSING
) -> Verdict:
    """Verdict on one hand answer: the by-hand rule first, then `diagnose`.

    `answer` is what `read_hand_answers` found for `name` (None: nothing, or no source to
    read, in which case `runtime_value` is judged alone). `runtime_value` is the value in
    the learner's namespace when there is one; MISSING means unknown (the grader).
    """
    q = quantity(exercise, name)
    if answer is None:
        return diagnose(q, runtime_value)
    label, status, detail = q.label, answer.status, answer.detail
    example = "True or False" if q.is_bool else "the arithmetic, e.g. `2 * (5 - 2)`"
    if status == "autograd":
        return Verdict(
            False,
            f"✗ {label}: `{name}` was computed with autograd ({detail}); by hand means by "
            f"hand: write {example}.",
            "autograd",
        )
    if status == "not_arithmetic":
        allowed = "Write True or False: your own prediction." if q.is_bool else ALLOWED_FORM
        return Verdict(
            False,
            f"✗ {label}: `{name}` is not plain arithmetic ({detail}).\n  {allowed}",
            "not_arithmetic",
        )
    if status == "error":
        return Verdict(False, f"✗ {label}: `{name}` could not be read: {detail}.", "error")
    if status == "unanswered" or answer.value is None:
        return Verdict(False, f"✗ {label}: `{name}` is not answered yet: {detail}.", "unanswered")
    if runtime_value is not MISSING and not _same_value(runtime_value, answer.value):
        return Verdict(
            False,
            f"✗ {label}: the notebook holds `{name}` = {format_value(runtime_value)} but your "
            f"cells assign {format_value(answer.value)}; run the answer cell again.",
            "stale",
        )
    return diagnose(q, answer.value)


def _ipython_shell() -> Any:
    """The running IPython shell, or None (without importing IPython)."""
    module = sys.modules.get("IPython")
    if module is None:
        return None
    return module.get_ipython()


def _learner_state(frame: FrameType | None) -> tuple[Mapping[str, object], Sequence[str] | None]:
    """The learner's namespace and the source of the cells run so far (None outside IPython)."""
    shell = _ipython_shell()
    if shell is not None:
        history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", None)
        if not isinstance(history, list):
            history = shell.user_ns.get("In")
        cells = [c for c in history if isinstance(c, str)] if isinstance(history, list) else []
        # a shell that stores no history (run_cell without store_history) has nothing to read
        return shell.user_ns, cells if any(c.strip() for c in cells) else None
    return (frame.f_globals if frame is not None else {}), None


class Exercise:
    """The graded quantities of one exercise, checked against PyTorch."""

    def __init__(self, name: str) -> None:
        if name not in EXERCISES:
            raise KeyError(f"unknown exercise {name!r}; valid names: {', '.join(EXERCISES)}")
        self.name = name

    def __repr__(self) -> str:
        return f"Exercise({self.name!r})"

    @property
    def quantities(self) -> dict[str, Quantity]:
        """The quantities this exercise grades, by notebook variable."""
        return reference_quantities(self.name)

    def check(self, *names: str) -> None:
        """Check the named answers (all of them when none is named); raise AnswerMismatch."""
        namespace, cells = _learner_state(sys._getframe(1))
        answers = read_hand_answers(cells) if cells is not None else None
        failures: list[str] = []
        for name in names or tuple(self.quantities):
            runtime = namespace.get(name, MISSING)
            answer = answers.get(name) if answers is not None else None
            if answers is not None and answer is None and runtime is not MISSING:
                detail = f"not assigned by a `{name} = ...` line of a cell"
                answer = HandAnswer(name, None, "not_arithmetic", detail)
            if answer is not None and answer.status == "number" and runtime is MISSING:
                verdict = Verdict(
                    False,
                    f"✗ {quantity(self.name, name).label}: `{name}` has no value in the "
                    "notebook: its cell stopped early; fix the error and run it again.",
                    "stale",
                )
            else:
                verdict = judge_hand_answer(self.name, name, answer, runtime)
            if verdict.passed:
                print(verdict.message)
            else:
                failures.append(verdict.message)
        if failures:
            raise AnswerMismatch("\n".join(failures))

    def check_function(self, name: str, seed: int | None = None) -> None:
        """Run the learner's function `name` on fixed and random cases; raise AnswerMismatch."""
        tasks = FUNCTION_TASKS.get(self.name, {})
        if name not in tasks:
            raise KeyError(f"{self.name} has no function {name!r}; valid: {', '.join(tasks)}")
        task = tasks[name]
        namespace, _ = _learner_state(sys._getframe(1))
        function = namespace.get(name, MISSING)
        if not callable(function):
            raise AnswerMismatch(f"✗ `{name}` is not a function yet: run the cell that defines it.")
        cases = task.make_cases(random.Random(seed))
        results: list[object] = []
        for case in cases:
            try:
                results.append(function(*case))
            except Exception as error:
                message = f"✗ {call_text(task, case)} raised {type(error).__name__}: {error}"
                raise AnswerMismatch(f"{message[:160]}\n  {task.hint}") from None
        verdict = judge_function_results(task, cases, results)
        if not verdict.passed:
            raise AnswerMismatch(verdict.message)
        print(verdict.message)
