"""A PostgreSQL gradebook (Debian's server, started here): `autograder grade` records into it
the same grades.csv as into SQLite, and a manual grade written while it runs is kept.

The course points at the server through its untracked site_config.py, as a class would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import stall_guard
from pg_server import running_postgres

from autograder.authoring.sample_class import make_course, submit_sample_class

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

ASSIGNMENT = "03_a_neuron_by_hand"
STUDENTS = ["ada", "ben", "dee", "eve"]  # right, wrong, blank, autograd; ada is graded first
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def course_with(root: Path, db_url: str | None) -> Path:
    root.mkdir(parents=True)
    if db_url:
        (root / "site_config.py").write_text(
            f'c = get_config()\nc.CourseDirectory.db_url = "{db_url}"\n'
        )
    course = make_course(root, [ASSIGNMENT])
    submit_sample_class(course, [ASSIGNMENT], STUDENTS)
    return course


def grade(course: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(BIN / "autograder"), "grade", "-j", "2", "--quiet", *extra],
        cwd=course,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    output, _ = stall_guard.communicate(process, "autograder grade")
    assert process.returncode == 0, output
    return output


def export(course: Path) -> str:
    target = course / "grades.csv"
    subprocess.run(
        [str(BIN / "nbgrader"), "export", f"--to={target}"],
        cwd=course,
        env=ENV,
        check=True,
        capture_output=True,
    )
    return target.read_text()


def written_grade(db_url: str, student: str) -> tuple[str, float | None]:
    """The written answer's cell and its manual score for `student` (KeyError: not yet)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url, "backward-course") as gb:
        try:
            notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        except MissingEntry:
            raise KeyError(student) from None
        for grade in notebook.grades:
            if grade.cell.cell_type == "markdown":
                return grade.name, grade.manual_score
    raise KeyError(student)


def grade_by_hand(db_url: str, student: str, points: float) -> None:
    """What formgrader does when the teacher types a score: set the grade's manual score."""
    from nbgrader.api import Gradebook

    cell, _ = written_grade(db_url, student)
    with Gradebook(db_url, "backward-course") as gb:
        grade = gb.find_grade(cell, ASSIGNMENT, ASSIGNMENT, student)
        grade.manual_score = points
        gb.db.commit()


def test_postgres_gradebook_records_like_sqlite_and_keeps_manual_grades(tmp_path: Path) -> None:
    sqlite = course_with(tmp_path / "sqlite", None)
    sqlite_run = grade(sqlite)  # graded while the server starts and its course is made

    with running_postgres() as url:
        course = course_with(tmp_path / "postgres", url)
        assert not (course / "gradebook.db").exists()  # the gradebook lives on the server
        finish(sqlite_run)
        sqlite_url = f"sqlite:///{sqlite / 'gradebook.db'}"
        grade_by_hand(sqlite_url, "ada", 1.0)
        like_sqlite = export(sqlite)  # nothing changes the SQLite course after this

        run = grade(course)

        def ada_recorded() -> bool:  # ada is recorded first; the teacher grades her then
            try:
                written_grade(url, "ada")
                return True
            except KeyError:
                assert run.poll() is None, "ada never recorded"
                return False

        stall_guard.wait_until(ada_recorded, "ada's grade", [stall_guard.cpu_of(run.pid)])
        grade_by_hand(url, "ada", 1.0)
        assert run.poll() is None, "grading ended before the manual grade: nothing was tested"
        finish(run)
        assert written_grade(url, "ada")[1] == 1.0
        recorded = export(course)
        assert recorded == like_sqlite
        assert "ada" in recorded

        finish(grade(course, "--force", "--student", "ada"))  # a regrade keeps it too
        assert written_grade(url, "ada")[1] == 1.0
        assert export(course) == like_sqlite
