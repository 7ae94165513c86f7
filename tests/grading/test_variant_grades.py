"""In a class with a course secret, each student's exercise has a structure of their own
(issue 27): `nbgrader autograde` (the student's kernel judging) and `autograder grade` (the
trusted grader) give the same grades, each student's own right formulas earn every point,
and the public solution's formulas, copied, earn only what does not depend on the
structure."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from courses import make_course
from nbgrader_course import AUTOGRADE_SEED

from autograder.core.givens import COURSE_ID, Site, create_secret, read_secret
from autograder.specs import SPECS, exercise_spec, learner_problem

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NAME = "01_what_a_gradient_is"
SAMPLE = REPO / "instructor" / "sample_class" / "ada" / NAME / f"{NAME}.ipynb"
STUDENTS = [f"v{i:02d}" for i in range(12)]


def run(args: list[str], course: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, cwd=course, env=env, capture_output=True, text=True, check=False)


def _hand_in(course: Path, student: str, problem: str) -> None:
    """The sample notebook (the public solution's formulas) with, for `problem` other than
    the lesson's, the student's own model answers written into the answer cells."""
    notebook = nbformat.read(SAMPLE, as_version=4)
    spec = exercise_spec(problem)
    if problem != NAME:
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in spec.part_names:
                cell.source = f"{spec.part(grade_id).stub}\n{spec.part(grade_id).code}"
    folder = course / "submitted" / student / NAME
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{NAME}.ipynb")


def _grades(course: Path) -> dict[str, float]:
    result = run([str(BIN / "nbgrader"), "export", "--to", str(course / "grades.csv")], course)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return {row["student_id"]: float(row["raw_score"]) for row in rows}


def test_both_graders_agree_on_each_students_own_structure(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", [NAME])
    create_secret(course)
    site = Site(COURSE_ID, read_secret(course))
    problems = {student: learner_problem(NAME, student, site) for student in STUDENTS}
    assert NAME not in problems.values()  # a class never gets the lesson's structure
    assert len(set(problems.values())) > 1
    # even students copy the public solution; odd ones write their own formulas
    for index, student in enumerate(STUDENTS):
        _hand_in(course, student, problems[student] if index % 2 else NAME)
    other = shutil.copytree(course, tmp_path / "other", symlinks=True)

    nbgrader = run([str(BIN / "nbgrader"), "autograde", NAME, "--force"], course)
    assert nbgrader.returncode == 0, nbgrader.stderr[-3000:]
    graded = run([str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED], other)
    assert graded.returncode == 0, graded.stderr[-3000:]

    by_nbgrader, by_autograder = _grades(course), _grades(other)
    assert by_nbgrader == by_autograder
    formula_points = sum(p.points for p in SPECS[NAME].parts)
    for index, student in enumerate(STUDENTS):
        if index % 2:  # own formulas: every part (the written answer is the teacher's)
            assert by_autograder[student] == formula_points, student
        else:  # copied: only the slope at the bottom (0 in every bowl)
            assert by_autograder[student] == 1, student
