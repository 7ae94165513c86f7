"""The class's check service with structures that vary (issue 27): it tells each learner
their own problem, judges their answers on it as the grader does, seals a practice
structure with the practice numbers, and refuses a practice structure it did not draw."""

from __future__ import annotations

import pytest

from autograder.checks.judging import BadRequest, Judging
from autograder.core.givens import Site
from autograder.specs import SPECS, exercise_spec, learner_problem, problem_words

NAME = "01_what_a_gradient_is"
SITE = Site("judging-variants", "a course secret")


def _cells(problem: str) -> list[str]:
    spec = exercise_spec(problem)
    names = ", ".join(spec.given_names)
    quoted = ", ".join(f'"{n}"' for n in spec.given_names)
    return [f"{names} = exercise.given({quoted})", *(p.code for p in spec.parts)]


def test_each_learner_is_told_and_judged_on_their_own_problem() -> None:
    judging = Judging(b"service secret", SITE)
    problem = learner_problem(NAME, "ada", SITE)
    assert problem != NAME
    about = judging.answer("exercise", "ada", {"exercise": NAME})
    assert about["words"] == problem_words(problem)
    assert "Your problem: the loss y = " in about["words"]
    parts = ["y_start", "slope_start", "y_after_step"]
    own = judging.answer(
        "check", "ada", {"exercise": NAME, "names": parts, "cells": _cells(problem)}
    )
    assert [v["passed"] for v in own["verdicts"]] == [True, True, True]
    copied = judging.answer(
        "check", "ada", {"exercise": NAME, "names": parts, "cells": _cells(NAME)}
    )
    assert [v["passed"] for v in copied["verdicts"]] == [False, False, False]


def test_self_study_service_keeps_the_lessons_structure() -> None:
    judging = Judging(b"service secret")
    about = judging.answer("exercise", "ada", {"exercise": NAME})
    assert about["words"] == "Your problem: the loss y = x² (the lesson's)."
    checked = judging.answer("check", "ada", {"exercise": NAME, "cells": _cells(NAME)})
    assert all(v["passed"] for v in checked["verdicts"])


def test_practice_draws_a_sealed_structure_and_refuses_another() -> None:
    judging = Judging(b"service secret", SITE)
    tags = {f"{NAME}[{s.tag}]" for s in SPECS[NAME].variants}
    practice = judging.answer("practice", "ada", {"exercise": NAME})
    assert practice["problem"] in tags
    assert practice["words"] == problem_words(practice["problem"])
    cells = _cells(practice["problem"])
    request = {"exercise": NAME, "cells": cells, "names": ["slope_start"], "practice": practice}
    (verdict,) = judging.answer("check", "ada", request)["verdicts"]
    assert verdict["passed"], verdict
    other = next(t for t in sorted(tags) if t != practice["problem"])
    forged = {**request, "practice": {**practice, "problem": other}}
    with pytest.raises(BadRequest, match="not drawn by the check service"):
        judging.answer("check", "ada", forged)
