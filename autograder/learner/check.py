"""`Exercise(name)`: what the notebooks' locked cells call.

- `exercise.given("x", "w")` returns the learner's own numbers (see `learner.identity`
  for whose) and prints whose they are;
- `exercise.check("dL_dw")` judges the answer against PyTorch's value for those numbers;
- `exercise.check_function("train")` calls the learner's function on drawn cases;
- `exercise.check_class("value_add")` builds random graphs with the learner's `Value`;
- `exercise.practise()` switches to fresh random numbers, outside the graded record
  (`exercise.practise(False)` switches back; under `nbgrader autograde` it does nothing).

The verdicts come from `feedback.judge`, which the trusted grader also calls with the
answers read from the submission's source and the numbers of the submission's folder.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Mapping
from typing import Any

from autograder.answers.classes import draw_graphs_for
from autograder.answers.functions import raised_message
from autograder.core.quantities import Quantity
from autograder.core.spec import CODE_KINDS
from autograder.core.verdict import MISSING, Verdict
from autograder.diagnosis.byhand import HandAnswer, HistoryReader
from autograder.diagnosis.judge import JudgeContext, judge, judge_hand
from autograder.diagnosis.references import reference_quantities
from autograder.learner.identity import grading, learner_identity, learner_site
from autograder.learner.kernel import (
    PRACTICE_SOURCE,
    AnswerMismatch,
    error_text,
    fail,
    given_line,
    learner_state,
    not_defined_yet,
    pick_givens,
    plain_warnings,
    show_verdicts,
    working,
)
from autograder.specs import (
    exercise_spec,
    function_tasks,
    learner_givens,
    learner_problem,
    practice,
    practice_words,
)

__all__ = ["AnswerMismatch", "Exercise", "judge_hand_answer"]


def judge_hand_answer(
    exercise: str,
    name: str,
    answer: HandAnswer | None,
    runtime_value: object = MISSING,
    *,
    givens: Mapping[str, float],
    answers: Mapping[str, object] | None = None,
) -> Verdict:
    """Verdict on one hand answer for the learner whose numbers are `givens`."""
    q = reference_quantities(exercise, givens).get(name)
    if q is None:
        raise KeyError(f"{exercise} grades no hand answer {name!r}")
    return judge_hand(q, answer, runtime_value, answers)


class Exercise:
    """One exercise, with the learner's own numbers, checked against PyTorch."""

    def __init__(self, name: str) -> None:
        self.spec = exercise_spec(name)
        self.name = name
        self.learner, self.source = learner_identity()
        self.site, self.key = learner_site(self.learner)
        self._practice: dict[str, float] | None = None
        self._practice_problem: str | None = None
        self._history = HistoryReader()  # the kernel's cells, each read once

    def __repr__(self) -> str:
        return f"Exercise({self.name!r})"

    @property
    def givens(self) -> dict[str, float]:
        """The numbers in use: the learner's own, or practice numbers."""
        if self._practice is not None:
            return dict(self._practice)
        return learner_givens(self.name, self.learner, self.site, self.key)

    @property
    def problem(self) -> str:
        """The problem in use: the learner's own structure (in a class, drawn from their key;
        else the lesson's), or the practice one."""
        if self._practice_problem is not None:
            return self._practice_problem
        return learner_problem(self.name, self.learner, self.site, self.key)

    @property
    def quantities(self) -> dict[str, Quantity]:
        """The quantities this exercise grades, for the numbers in use."""
        return reference_quantities(self.problem, self.givens)

    def given(self, *names: str) -> Any:
        """The given values `names` (one float, or a tuple in order); prints whose they are,
        and the learner's problem where the exercise's structure varies."""
        whose = None if self._practice is not None else (self.learner, self.source)
        own = learner_problem(self.name, self.learner, self.site, self.key)
        problem = practice_words(self.problem, own)
        return pick_givens(self.name, self.givens, self.spec.given_names, names, whose, problem)

    def practise(self, on: bool = True, new_structure: bool = False) -> None:
        """Fresh random numbers to practise with (not graded), on your own problem; in a
        class, `new_structure=True` practises another structure too. `practise(False)` to go
        back to your own numbers."""
        if grading():
            print("Practice numbers are off while the notebook is graded.")
            return
        own = learner_problem(self.name, self.learner, self.site, self.key)
        if on:
            self._practice_problem, self._practice = practice(self.name, own, new_structure)
        else:
            self._practice_problem, self._practice = None, None
        if on:
            print(given_line("practice", PRACTICE_SOURCE, self.givens))
            words = practice_words(self.problem, own)
            if words:
                print(words)
            print("Run the Given cell again, then your answers and their checks.")
        else:
            print(f"Back to your own numbers ({self.learner}): run the Given cell again.")

    def _raise_or_print(self, verdicts: list[Verdict]) -> None:
        show_verdicts(verdicts, practice=self._practice is not None)

    def check(self, *names: str) -> None:
        """Check the named answers (all hand answers when none is named); raise AnswerMismatch."""
        namespace, cells = learner_state(sys._getframe(1))
        givens = self.givens
        hand = self._history.answers(cells, givens) if cells is not None else None
        context = JudgeContext(self.problem, givens, hand, runtime=namespace)
        hand_parts = [p.name for p in self.spec.parts if p.kind not in CODE_KINDS]
        for name in names:
            if name not in hand_parts:
                raise KeyError(f"{self.name} grades no {name!r}; valid: {', '.join(hand_parts)}")
        with working(quiet=grading()):
            found = [judge(self.problem, n, context) for n in names or hand_parts]
        self._raise_or_print(found)

    def check_function(self, name: str, seed: int | None = None) -> None:
        """Run the learner's function `name` on fixed and random cases; raise AnswerMismatch."""
        tasks = function_tasks(self.name)
        if name not in tasks:
            raise KeyError(f"{self.name} has no function {name!r}; valid: {', '.join(tasks)}")
        task = tasks[name]
        namespace, _ = learner_state(sys._getframe(1))
        function = namespace.get(name, MISSING)
        if not callable(function):
            raise not_defined_yet(name, function=True)
        cases = task.make_cases(random.Random(seed))
        results: list[object] = []
        with plain_warnings() as warned:
            for case in cases:
                try:
                    results.append(function(*case))
                except Exception as error:
                    failed = raised_message(task, case, error_text(error))
                    break
            else:
                failed = ""
        for line in warned:  # PyTorch's own words, without its internal C++ path
            print(f"While running {name}, PyTorch warned: {line}")
        if failed:
            fail(failed)
            return
        context = JudgeContext(self.problem, self.givens, calls={name: (cases, results)})
        with working(quiet=grading()):
            verdict = judge(self.problem, name, context)
        self._raise_or_print([verdict])

    def check_class(self, name: str, seed: int | None = None) -> float | None:
        """Build random graphs with the learner's class for part `name`; raise AnswerMismatch.

        While nbgrader grades, a part with some operations right prints its verdict and
        returns the points they earn (the cell's value: nbgrader's partial credit)."""
        from autograder.core.value_build import evaluate_all
        from autograder.specs import class_tasks

        tasks = class_tasks(self.name)
        if name not in tasks:
            raise KeyError(f"{self.name} has no class part {name!r}; valid: {', '.join(tasks)}")
        task = tasks[name]
        namespace, _ = learner_state(sys._getframe(1))
        cls = namespace.get(task.cls, MISSING)
        if not callable(cls):
            raise not_defined_yet(task.cls, function=False)
        graphs = draw_graphs_for(task, random.Random(seed))
        # the grader runs only the notebook's cells: a class imported from a module is
        # not there, so it is judged as no class at all (the grader's verdict, word for word)
        notebook = namespace.get("__name__", "__main__")
        bases = getattr(cls, "__mro__", (cls,))[:-1]  # a subclass of an imported one too
        own = all(getattr(c, "__module__", None) == notebook for c in bases)
        with working(quiet=grading()):
            results: list[object] = list(evaluate_all(cls if own else None, graphs))
            context = JudgeContext(self.problem, self.givens, builds={name: (graphs, results)})
            verdict = judge(self.problem, name, context)
        if grading() and not verdict.passed and verdict.points:
            print(verdict.message)
            return verdict.points
        self._raise_or_print([verdict])
        return None
