"""The check protocol's answers: each request a learner's kernel sends, judged as the grader
judges (`feedback.judge.judge`, the learner's numbers from `exercises.learner_givens`).

Every request names the exercise; the learner is whoever the hub says sent it (`user`),
never a name in the request. Cases and graphs a check runs on, and practice numbers, are
drawn here and sealed (HMAC with the service's secret, bound to the learner, exercise and
part), so the kernel can only send them back, not choose them. Nothing is stored: each
answer is computed from the request alone.

Requests (JSON objects) and answers, by action:
- `exercise` {exercise}: the learner's numbers, their problem in words, and what the
  exercise grades (names only);
- `practice` {exercise, new_structure?}: fresh numbers for the learner's own structure (or,
  with new_structure, another one drawn at random), sealed;
- `check` {exercise, names, cells, values, practice?}: verdicts on hand answers;
- `cases` {exercise, function, seed?} then `function` {..., cases, seal, results | raised};
- `graphs` {exercise, part, seed?} then `class` {..., graphs, seal, results}.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import random
from collections.abc import Callable, Mapping
from typing import Any

from autograder.answers.classes import draw_graphs_for
from autograder.answers.functions import raised_message
from autograder.core.givens import PUBLIC, Site
from autograder.core.quantities import Quantity
from autograder.core.spec import CODE_KINDS
from autograder.core.verdict import Verdict
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.learner.wire import decode_value
from autograder.specs import (
    class_tasks,
    exercise_spec,
    function_tasks,
    learner_givens,
    learner_problem,
    practice,
    practice_words,
    problem_words,
)

SOURCE = "your hub login"
MAX_CELLS = 2000
MAX_CELL_TEXT = 200_000


@functools.lru_cache(maxsize=4096)
def _quantities(exercise: str, givens: tuple[tuple[str, float], ...]) -> dict[str, Quantity]:
    return reference_quantities(exercise, dict(givens))


@functools.cache
def _hand_parts(exercise: str) -> tuple[str, ...]:
    return tuple(p.name for p in exercise_spec(exercise).parts if p.kind not in CODE_KINDS)


class _Context(JudgeContext):
    """A judge's context whose reference quantities are built once per learner's givens
    (every check of an exercise by that learner uses the same)."""

    def quantities(self) -> dict[str, Quantity]:
        return dict(_quantities(self.exercise, tuple(self.givens.items())))


class BadRequest(ValueError):
    """The request is not one the protocol answers; the text says why."""


class Judging:
    """Answers to the protocol's requests, sealed with `secret`."""

    def __init__(self, secret: bytes, site: Site = PUBLIC) -> None:
        """`site`: whose numbers (the course's id and secret, as the grader's)."""
        self.secret = secret
        self.site = site
        self.actions: dict[str, Callable[[str, Mapping[str, Any]], dict[str, Any]]] = {
            "exercise": self.exercise,
            "practice": self.practice,
            "check": self.check,
            "cases": self.cases,
            "function": self.function,
            "graphs": self.graphs,
            "class": self.build,
        }

    def answer(self, action: str, user: str, request: object) -> dict[str, Any]:
        """The answer to `request` for `action` from `user`; BadRequest if it has none."""
        if action not in self.actions:
            raise BadRequest(f"no action {action!r}; valid: {', '.join(self.actions)}")
        if not isinstance(request, dict):
            raise BadRequest("the request must be a JSON object")
        return self.actions[action](user, request)

    def seal(self, user: str, exercise: str, part: str, payload: object) -> str:
        text = json.dumps([user, exercise, part, payload], sort_keys=True)
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()

    def _unsealed(self, user: str, exercise: str, part: str, payload: object, seal: object) -> Any:
        """`payload` if `seal` is this service's seal on it for `user`, else BadRequest."""
        if not isinstance(seal, str) or not hmac.compare_digest(
            seal, self.seal(user, exercise, part, payload)
        ):
            raise BadRequest(
                "these numbers were not drawn by the check service for you (or it restarted "
                "since): run the Given cell or the check again"
            )
        return payload

    @staticmethod
    def _exercise(request: Mapping[str, Any]) -> str:
        name = request.get("exercise")
        if not isinstance(name, str) or name not in EXERCISES:
            raise BadRequest(f"unknown exercise {str(name)[:40]!r}; valid: {', '.join(EXERCISES)}")
        return name

    def _problem(self, user: str, exercise: str) -> str:
        """The learner's own problem (their structure, in a class with a secret)."""
        return learner_problem(exercise, user, self.site)

    def _givens(
        self, user: str, exercise: str, request: Mapping[str, Any]
    ) -> tuple[str, dict[str, float]]:
        """(the problem, the numbers) in use: the learner's own, or sealed practice ones."""
        practice = request.get("practice")
        if practice is None:
            return self._problem(user, exercise), learner_givens(exercise, user, self.site)
        if not isinstance(practice, dict):
            raise BadRequest("practice must be {givens, seal}")
        problem = practice.get("problem", exercise)
        sealed = self._unsealed(
            user, exercise, "practice", [problem, practice.get("givens")], practice.get("seal")
        )
        problem, givens = sealed
        return str(problem), {str(k): float(v) for k, v in givens.items()}

    def exercise(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise = self._exercise(request)
        spec = exercise_spec(exercise)
        givens = learner_givens(exercise, user, self.site)
        problem = self._problem(user, exercise)
        return {
            "learner": user,
            "source": SOURCE,
            "givens": givens,
            "given_names": list(spec.given_names),
            "words": problem_words(problem),
            "hand_parts": list(_hand_parts(exercise)),
            "reads": sorted(_quantities(problem, tuple(givens.items()))),
            "functions": list(function_tasks(exercise)),
            "classes": {name: task.cls for name, task in class_tasks(exercise).items()},
        }

    def practice(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise = self._exercise(request)
        own = learner_problem(exercise, user, self.site)
        problem, givens = practice(exercise, own, request.get("new_structure") is True)
        return {
            "givens": givens,
            "problem": problem,
            "words": practice_words(problem, own),
            "seal": self.seal(user, exercise, "practice", [problem, givens]),
        }

    def check(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise = self._exercise(request)
        problem, givens = self._givens(user, exercise, request)
        hand_parts = _hand_parts(exercise)
        names = request.get("names") or list(hand_parts)
        if not isinstance(names, list) or not all(n in hand_parts for n in names):
            raise BadRequest(f"{exercise} grades no {names!r}; valid: {', '.join(hand_parts)}")
        cells = request.get("cells")
        if cells is not None and (
            not isinstance(cells, list)
            or len(cells) > MAX_CELLS
            or not all(isinstance(c, str) and len(c) <= MAX_CELL_TEXT for c in cells)
        ):
            raise BadRequest(f"cells must be at most {MAX_CELLS} strings")
        values = request.get("values", {})
        if not isinstance(values, dict) or len(values) > MAX_CELLS:
            raise BadRequest("values must be a JSON object of encoded values")
        runtime: dict[str, object] = {str(k): decode_value(v) for k, v in values.items()}
        if request.get("kernel") is True and not runtime:
            runtime["__kernel__"] = None  # a kernel's namespace is never empty
        hand = read_hand_answers(cells, givens) if cells is not None else None
        context = _Context(problem, givens, hand, runtime=runtime)
        return _verdicts([judge(problem, n, context) for n in names])

    def _drawn(self, request: Mapping[str, Any]) -> random.Random:
        seed = request.get("seed")
        if seed is not None and type(seed) is not int:
            raise BadRequest("seed must be an integer or null")
        return random.Random(seed)

    def cases(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise, name = self._exercise(request), request.get("function")
        tasks = function_tasks(exercise)
        if name not in tasks:
            raise BadRequest(f"{exercise} has no function {name!r}; valid: {', '.join(tasks)}")
        cases = json.loads(json.dumps(tasks[name].make_cases(self._drawn(request))))
        return {"cases": cases, "seal": self.seal(user, exercise, name, cases)}

    def function(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise, name = self._exercise(request), request.get("function")
        tasks = function_tasks(exercise)
        if not isinstance(name, str) or name not in tasks:
            raise BadRequest(f"{exercise} has no function {name!r}")
        cases = self._unsealed(user, exercise, name, request.get("cases"), request.get("seal"))
        cases = [tuple(case) for case in cases]
        raised = request.get("raised")
        if raised is not None:
            index, error = raised.get("index"), raised.get("error")
            if type(index) is not int or not 0 <= index < len(cases) or not isinstance(error, str):
                raise BadRequest("raised must be {index, error}")
            message = raised_message(tasks[name], cases[index], error[:500])
            return _verdicts([Verdict(False, message, "raised")])
        results = request.get("results")
        if not isinstance(results, list) or len(results) != len(cases):
            raise BadRequest(f"results must hold one encoded value per case ({len(cases)})")
        decoded = [decode_value(r) for r in results]
        problem = self._problem(user, exercise)
        givens = learner_givens(exercise, user, self.site)
        context = _Context(problem, givens, calls={name: (cases, decoded)})
        return _verdicts([judge(problem, name, context)])

    def graphs(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise, part = self._exercise(request), request.get("part")
        tasks = class_tasks(exercise)
        if part not in tasks:
            raise BadRequest(f"{exercise} has no class part {part!r}; valid: {', '.join(tasks)}")
        graphs = draw_graphs_for(tasks[part], self._drawn(request))
        return {"graphs": graphs, "seal": self.seal(user, exercise, part, graphs)}

    def build(self, user: str, request: Mapping[str, Any]) -> dict[str, Any]:
        exercise, part = self._exercise(request), request.get("part")
        if not isinstance(part, str) or part not in class_tasks(exercise):
            raise BadRequest(f"{exercise} has no class part {part!r}")
        graphs = self._unsealed(user, exercise, part, request.get("graphs"), request.get("seal"))
        results = request.get("results")
        if not isinstance(results, list):
            raise BadRequest("results must be the list the class gave on the graphs")
        problem = self._problem(user, exercise)
        givens = learner_givens(exercise, user, self.site)
        context = _Context(problem, givens, builds={part: (graphs, results)})
        return _verdicts([judge(problem, part, context)])


def _verdicts(verdicts: list[Verdict]) -> dict[str, Any]:
    return {
        "verdicts": [
            {"passed": v.passed, "message": v.message, "reason": v.reason} for v in verdicts
        ]
    }
