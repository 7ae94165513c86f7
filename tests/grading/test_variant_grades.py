"""In a class with a course secret, each student's exercise has a structure of their own
(issue 27): `nbgrader autograde` (the student's kernel judging) and `autograder grade` (the
trusted grader) give the same grades, each student's own right formulas earn every point,
and the public solution's formulas, copied, earn only what does not depend on the
structure (of the formula parts' points, at most a quarter)."""

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
from autograder.core.spec import CODE_KINDS
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.fresh_points import NUMERIC
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.specs import SPECS, exercise_spec, learner_givens, learner_problem

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
VARIED = [name for name, spec in SPECS.items() if spec.variants]
STUDENTS = [f"v{i:02d}" for i in range(8)]


def run(args: list[str], course: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, cwd=course, env=env, capture_output=True, text=True, check=False)


def _hand_in(course: Path, student: str, name: str, problem: str) -> None:
    """The solution's formulas (ada's sample notebook, every part right in the lesson) with,
    for `problem` other than the lesson's, the student's own model answers written in (the
    code parts, the same in every structure, as ada wrote them)."""
    sample = REPO / "instructor" / "sample_class" / "ada" / name / f"{name}.ipynb"
    notebook = nbformat.read(sample, as_version=4)
    spec = exercise_spec(problem)
    if problem != name:
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in spec.part_names and spec.part(grade_id).kind not in CODE_KINDS:
                cell.source = f"{spec.part(grade_id).stub}\n{spec.part(grade_id).code}"
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{name}.ipynb")


def _expected(
    name: str, problem: str, student: str, site: Site, kinds: tuple[str, ...] | None = None
) -> float:
    """The points the grader's judge gives the hand-in's parts (of `kinds`: all by default),
    in process; its code parts are ada's, right in every structure (the graders run them)."""
    sample = REPO / "instructor" / "sample_class" / "ada" / name / f"{name}.ipynb"
    sources = [c.source for c in nbformat.read(sample, as_version=4).cells if c.cell_type == "code"]
    givens = learner_givens(name, student, site)
    context = JudgeContext(problem, givens, read_hand_answers(sources, givens))
    parts = [p for p in exercise_spec(problem).parts if kinds is None or p.kind in kinds]
    code = sum(p.points for p in parts if p.kind in CODE_KINDS)
    judged = [p for p in parts if p.kind not in CODE_KINDS]
    return float(code + sum(p.points for p in judged if judge(problem, p.name, context).passed))


def _grades(course: Path) -> dict[tuple[str, str], float]:
    result = run([str(BIN / "nbgrader"), "export", "--to", str(course / "grades.csv")], course)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return {(row["student_id"], row["assignment"]): float(row["raw_score"]) for row in rows}


def test_both_graders_agree_on_each_students_own_structure(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", VARIED)
    create_secret(course)
    site = Site(COURSE_ID, read_secret(course))
    problems = {(s, n): learner_problem(n, s, site) for s in STUDENTS for n in VARIED}
    for name in VARIED:  # a class never gets the lesson's structure, and gets several
        drawn = {problems[s, name] for s in STUDENTS}
        assert name not in drawn and len(drawn) > 1
    # even students copy the public solution; odd ones write their own formulas
    for index, student in enumerate(STUDENTS):
        for name in VARIED:
            _hand_in(course, student, name, problems[student, name] if index % 2 else name)
    other = shutil.copytree(course, tmp_path / "other", symlinks=True)

    for name in VARIED:
        nbgrader = run([str(BIN / "nbgrader"), "autograde", name, "--force"], course)
        assert nbgrader.returncode == 0, nbgrader.stderr[-3000:]
    graded = run([str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED], other)
    assert graded.returncode == 0, graded.stderr[-3000:]

    by_nbgrader, by_autograder = _grades(course), _grades(other)
    assert by_nbgrader == by_autograder
    for index, student in enumerate(STUDENTS):
        for name in VARIED:
            every = float(sum(p.points for p in SPECS[name].parts))  # written: the teacher's
            got = by_autograder[student, name]
            if index % 2:  # own formulas: every part
                assert got == every, (student, name)
            else:  # copied: what the judge gives the lesson's formulas, far from all
                expected = _expected(name, problems[student, name], student, site)
                assert got == expected, (student, name, got)
                # of the formula parts, at most a quarter (the facts and code parts are the
                # same in every structure: a copy earns those)
                formulas = sum(p.points for p in SPECS[name].parts if p.kind in NUMERIC)
                copied = _expected(name, problems[student, name], student, site, NUMERIC)
                assert copied <= formulas / 4, (student, name, copied)
