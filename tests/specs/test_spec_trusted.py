"""Trusted verdicts use the numbers of the student whose folder the submission is in.

Answers written with the given names score full for any student; answers written as one
student's numbers score only for that student (and where the numbers coincide)."""

from __future__ import annotations

import random
from pathlib import Path

import nbformat
import pytest

from autograder.core.givens import PUBLIC
from autograder.grading import trusted
from autograder.specs import SPECS

SAMPLE = Path(__file__).resolve().parents[2] / "instructor" / "sample_class"
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"
NAME = "03_a_neuron_by_hand"


def instructor_cells(name: str = NAME) -> dict[str, dict[str, object]]:
    """The instructor's graded and locked cells (what the gradebook holds), from solutions/."""
    nb = nbformat.read(SOLUTIONS / name / f"{name}.ipynb", as_version=4)
    cells: dict[str, dict[str, object]] = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id"):
            cells[meta["grade_id"]] = {
                "source": cell.source,
                "grade": bool(meta.get("grade")),
                "solution": bool(meta.get("solution")),
                "locked": bool(meta.get("locked")),
            }
    return cells


def passed(student_folder: str, as_student: str, name: str = NAME) -> int:
    """How many trusted test cells pass when `student_folder`'s notebook is graded as
    `as_student`."""
    nb = nbformat.read(SAMPLE / student_folder / name / f"{name}.ipynb", as_version=4)
    plan = trusted.instructor_plan(instructor_cells(name), nb.cells, random.Random(0))
    givens = trusted.givens_for(plan.exercise, as_student, PUBLIC)
    verdicts = trusted.verdicts(plan, nb.cells, [], givens)
    return sum(all(v.passed for v in cell) for cell in verdicts.values())


@pytest.mark.parametrize("student", ["ada", "ben", "someone-new"])
def test_answers_with_the_given_names_score_full_for_anyone(student: str) -> None:
    parts = len(SPECS[NAME].parts)
    assert passed("ada", student) == parts


def test_answers_with_another_students_numbers_score_only_for_them() -> None:
    """gus wrote ada's numbers as bare numbers: graded as gus they are wrong; graded as
    ada they are her values, yet a bare number earns nothing where the value follows the
    givens, so only the two parts the open ReLU fixes (da/dh = 1, dh/db = 1) pass."""
    parts = len(SPECS[NAME].parts)
    assert passed("gus", "ada") == 2
    assert passed("gus", "gus") < parts // 2


def test_the_notebook_cannot_claim_other_numbers() -> None:
    """The given cell's text is the same for everyone; the numbers come from the folder."""
    nb = nbformat.read(SAMPLE / "ada" / NAME / f"{NAME}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "given":
            cell.source = "x, w, b, y = 2.0, 3.0, -1.0, 2.0"
    plan = trusted.instructor_plan(instructor_cells(), nb.cells, random.Random(0))
    givens = trusted.givens_for(plan.exercise, "ada", PUBLIC)
    verdicts = trusted.verdicts(plan, nb.cells, [], givens)
    assert sum(all(v.passed for v in cell) for cell in verdicts.values()) < 4
