"""Verdicts no submission can influence: computed in the grader, from the notebook's text.

A test cell that calls `exercise.check("dL_dw")` earns its points from this module, not
from whatever happened in the learner's kernel: the answer is read from the cell source
with `byhand` (nothing executed), the reference comes from PyTorch in the grader process,
and the test cell's outputs are replaced by the verdict before nbgrader records grades.
`exercise.check_function("train")` is judged on random cases drawn here, from the numbers
the sandboxed function returned, against references computed here. The references are
those of the student whose folder the submission is in (`spec.learner_givens`), never
numbers the notebook claims.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbgrader.coursedir import CourseDirectory

from autograder.answers.classes import draw_graphs_for
from autograder.core.givens import Site, read_secret
from autograder.core.verdict import Verdict
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.diagnosis.references import EXERCISES
from autograder.specs import (
    class_tasks,
    function_tasks,
    learner_givens,
    learner_problem,
    problem_words,
)


@dataclass
class TrustedPlan:
    """What the grader will judge itself in one notebook."""

    exercise: str | None = None
    problem: str | None = None
    """The student's own problem (`problem_for`); None: the exercise as the lesson states it."""
    hand_checks: dict[int, list[str]] = field(default_factory=dict)  # cell index -> names
    function_checks: dict[int, str] = field(default_factory=dict)  # cell index -> function
    cases: dict[str, list[tuple[float, ...]]] = field(default_factory=dict)
    class_checks: dict[int, str] = field(default_factory=dict)  # cell index -> class part
    graphs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _string_args(call: ast.Call) -> list[str] | None:
    args = [a.value for a in call.args if isinstance(a, ast.Constant)]
    if len(args) != len(call.args) or not all(isinstance(a, str) for a in args):
        return None
    return [str(a) for a in args]


def _calls(source: str) -> list[ast.Call]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def instructor_plan(
    source_cells: dict[str, dict[str, Any]], cells: list[Any], rng: random.Random
) -> TrustedPlan:
    """The plan from the instructor's cells in the gradebook, never from the submission.

    `source_cells` maps grade_id -> the instructor's source and nbgrader flags (see
    `runner.source_cells`); the exercise is named in one of its locked cells, and its
    test cells that check through the grader are found by their instructor source, then
    located in the submitted `cells` by grade_id. A test cell missing from the
    submission loses its points; nothing the submission adds or removes changes which
    cells are judged here, or against what.
    """
    exercise = None
    for info in source_cells.values():
        if exercise is None and info.get("locked") and isinstance(info.get("source"), str):
            exercise = _exercise_in(info["source"])
    result = TrustedPlan(exercise=exercise)
    if exercise is None:
        return result
    tasks, builds = function_tasks(exercise), class_tasks(exercise)
    where = {
        cell.metadata.get("nbgrader", {}).get("grade_id"): index
        for index, cell in reversed(list(enumerate(cells)))
        if cell.cell_type == "code"
    }
    for grade_id, info in source_cells.items():
        source = info.get("source")
        if not info.get("grade") or info.get("solution") or not isinstance(source, str):
            continue
        index = where.get(grade_id)
        for call in _calls(source):
            func, args = call.func, _string_args(call)
            if not isinstance(func, ast.Attribute) or not args or index is None:
                continue
            if func.attr == "check":
                result.hand_checks.setdefault(index, []).extend(args)
            elif func.attr == "check_function" and len(args) == 1 and args[0] in tasks:
                result.function_checks[index] = args[0]
                result.cases.setdefault(args[0], tasks[args[0]].make_cases(rng))
            elif func.attr == "check_class" and len(args) == 1 and args[0] in builds:
                result.class_checks[index] = args[0]
                result.graphs.setdefault(args[0], draw_graphs_for(builds[args[0]], rng))
    return result


def _exercise_in(source: str) -> str | None:
    for call in _calls(source):
        if isinstance(call.func, ast.Name) and call.func.id == "Exercise":
            args = _string_args(call)
            if args and len(args) == 1 and args[0] in EXERCISES:
                return args[0]
    return None


def givens_for(exercise: str | None, student: str, site: Site) -> dict[str, float]:
    """`student`'s given values (the folder name) in installation `site`, computed outside
    the sandbox (which is given them, never the site's secret)."""
    if exercise is None:
        return {}
    return {str(k): float(v) for k, v in learner_givens(exercise, student, site).items()}


def problem_for(exercise: str | None, student: str, site: Site) -> str | None:
    """`student`'s problem: in a class with a secret, the exercise in the structure drawn
    from their key (`specs.learner_problem`); else the exercise itself."""
    return None if exercise is None else learner_problem(exercise, student, site)


def given_problem(trusted: TrustedPlan) -> str:
    """What the Given cell prints of the student's problem ('' for an exercise with one
    structure): the line the sandbox's stand-in prints, as the real package does."""
    return problem_words(trusted.problem) if trusted.problem else ""


def course_site(coursedir: CourseDirectory) -> Site:
    """The installation a course grades for: its course id and its secret, if any."""
    return Site(coursedir.course_id, read_secret(Path(coursedir.root)))


def function_calls(trusted: TrustedPlan) -> list[dict[str, Any]]:
    """The calls the sandboxed worker makes after running the cells."""
    calls: list[dict[str, Any]] = [
        {"function": name, "cases": cases} for name, cases in trusted.cases.items()
    ]
    builds = class_tasks(trusted.exercise) if trusted.exercise else {}
    for name, graphs in trusted.graphs.items():
        calls.append({"function": name, "class": builds[name].cls, "graphs": graphs})
    return calls


def _class_results(call: dict[str, Any] | None, count: int) -> list[object] | str:
    """What the sandboxed class gave on each graph (judged later), or why there is nothing."""
    if call is None or not isinstance(call.get("builds"), list):
        return str((call or {}).get("error", "the notebook did not finish"))
    builds: list[object] = list(call["builds"])
    if len(builds) != count:
        return f"{len(builds)} results for {count} graphs"
    return builds


def _function_results(
    name: str, cases: list[tuple[float, ...]], call: dict[str, Any] | None
) -> list[object] | str:
    """The plain numbers the sandboxed function returned, or why there are none."""
    if call is None or "results" not in call:
        return str((call or {}).get("error", "the notebook did not finish"))
    results: list[object] = []
    for case, item in zip(cases, call["results"], strict=False):
        if not isinstance(item, dict) or "value" not in item:
            error = item.get("error", "no result") if isinstance(item, dict) else "no result"
            return f"{name}{tuple(case)}: {error}"
        value = item["value"]
        results.append(float(value) if type(value) in (int, float) else None)
    return results


def verdicts(
    trusted: TrustedPlan, cells: list[Any], calls: list[dict[str, Any]], givens: dict[str, float]
) -> dict[int, list[Verdict]]:
    """Every trusted test cell's verdicts, for the student's numbers `givens`
    (`givens_for`), from the notebook text."""
    if trusted.exercise is None:
        return {}
    exercise = trusted.problem or trusted.exercise
    code_sources = [cell.source for cell in cells if cell.cell_type == "code"]
    by_function = {str(c.get("function")): c for c in calls}
    context = JudgeContext(
        exercise,
        givens,
        read_hand_answers(code_sources, givens),
        calls={
            name: (cases, _function_results(name, cases, by_function.get(name)))
            for name, cases in trusted.cases.items()
        },
        builds={
            name: (graphs, _class_results(by_function.get(name), len(graphs)))
            for name, graphs in trusted.graphs.items()
        },
    )
    found: dict[int, list[Verdict]] = {}
    for index, names in trusted.hand_checks.items():
        found[index] = [judge(exercise, name, context) for name in names]
    for index, name in trusted.function_checks.items():
        found.setdefault(index, []).append(judge(exercise, name, context))
    for index, name in trusted.class_checks.items():
        found.setdefault(index, []).append(judge(exercise, name, context))
    return found


def partial_points(cell_verdicts: list[Verdict]) -> float | None:
    """The points of a test cell that earns some of its points (one class part whose
    operations are credited one by one), else None (all or nothing)."""
    if len(cell_verdicts) == 1 and not cell_verdicts[0].passed and cell_verdicts[0].points:
        return cell_verdicts[0].points
    return None


def verdict_outputs(cell_verdicts: list[Verdict]) -> list[dict[str, Any]]:
    """A test cell's outputs for its verdicts: a stream if all passed, the stream and the
    points as the cell's value (nbgrader's partial credit) if some are, else an error."""
    failed = [v.message for v in cell_verdicts if not v.passed]
    partial = partial_points(cell_verdicts)
    if not failed or partial is not None:
        text = "".join(v.message + "\n" for v in cell_verdicts)
        stream = {"output_type": "stream", "name": "stdout", "text": text}
        if partial is None:
            return [stream]
        value = {"text/plain": repr(partial)}
        return [stream, {"output_type": "execute_result", "data": value, "metadata": {},
                         "execution_count": None}]  # fmt: skip
    return [
        {
            "output_type": "error",
            "ename": "AnswerMismatch",
            "evalue": "\n".join(failed),
            "traceback": ["AnswerMismatch: " + "\n".join(failed)],
        }
    ]
