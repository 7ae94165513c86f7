"""`autograder grade` against `nbgrader autograde`: same grades, resumable, regrades alone.

Both full-class gradings are shared with other tests (tests/nbgrader_course.py): nbgrader's
reference run with tests/grading/test_nbgrader_e2e.py, `autograder grade`'s with the tests that
read what it recorded. Each test grades its own course first and asks for the reference
afterwards, so it does not sit waiting on the reference's lock while that run is made.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import stall_guard
from courses import make_course
from nbgrader_course import AUTOGRADE_SEED, shared_autograded_course, shared_graded_course

from autograder.authoring.sample_class import submit_sample_class

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.nbgrader


def run(args: list[str], course: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        args, cwd=course, env=env, capture_output=True, text=True, check=False, **kwargs
    )


def exported(course: Path, to: Path | None = None) -> list[dict[str, str]]:
    """nbgrader's export of the course's gradebook (into `to`, else the course's
    grades.csv), as rows sorted by assignment and student."""
    target = to or course / "grades.csv"
    result = run([str(BIN / "nbgrader"), "export", "--to", str(target)], course)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    return sorted(rows, key=lambda r: (r["assignment"], r["student_id"]))


def autograder(course: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(
        [str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED, *extra], course
    )


def nbgrader_grades(
    tmp_path_factory: pytest.TempPathFactory, assignments: list[str] = ASSIGNMENTS
) -> list[dict[str, str]]:
    """The sample class graded by plain `nbgrader autograde` (the reference; one run,
    shared with tests/grading/test_nbgrader_e2e.py), as exported rows of grades.csv, those of
    `assignments` only."""
    graded = shared_graded_course(tmp_path_factory)
    rows = csv.DictReader(io.StringIO(graded.grades_csv.read_text()))
    chosen = [row for row in rows if row["assignment"] in assignments]
    return sorted(chosen, key=lambda r: (r["assignment"], r["student_id"]))


def test_same_grades_csv_as_nbgrader_autograde(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    # The class graded by `autograder grade` in one uninterrupted run (the shared one:
    # tests/nbgrader_course.py), copied here because nbgrader writes into the course.
    course = shutil.copytree(shared_autograded_course(tmp_path_factory), tmp_path / "course")
    assert exported(course) == nbgrader_grades(tmp_path_factory)
    # nbgrader's own feedback works on what autograder recorded, with the diagnosis in it.
    name = "03_a_neuron_by_hand"
    feedback = run([str(BIN / "nbgrader"), "generate_feedback", name], course)
    assert feedback.returncode == 0, feedback.stderr[-3000:]
    html = (course / "feedback" / "ben" / name / f"{name}.html").read_text()
    assert "PyTorch gives" in html


# Resuming keys on each (student, assignment) recorded, not on the class's size: three
# assignments (20 notebooks; fay handed nothing in for 06) leave plenty graded and plenty
# to do when the run is killed after five, at a third of a full class's cost.
RESUMED = ["03_a_neuron_by_hand", "05_three_mechanics", "06_one_backward_every_parameter"]


def test_killed_run_resumes_to_the_same_result(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    course = make_course(tmp_path / "course", RESUMED)
    submit_sample_class(course, RESUMED)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    process = subprocess.Popen(
        [str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED],
        cwd=course,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    markers = course / ".autograder" / "graded"
    stall_guard.wait_until(
        lambda: process.poll() is not None or len(list(markers.rglob("*.json"))) >= 5,
        "autograder grade, before five submissions were recorded",
        [stall_guard.cpu_of(process.pid)],
    )
    assert process.poll() is None, "the run finished before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_before = len(list(markers.rglob("*.json")))
    result = autograder(course)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert f"{done_before} skipped as already graded" in result.stdout
    assert exported(course) == nbgrader_grades(tmp_path_factory, RESUMED)


def test_resubmission_regrades_only_that_student(tmp_path: Path) -> None:
    name = "03_a_neuron_by_hand"
    course = make_course(tmp_path / "course", [name])
    submit_sample_class(course, [name])
    first = autograder(course)
    assert first.returncode == 0, first.stdout + first.stderr[-3000:]
    students = len(list((course / "submitted").iterdir()))
    before = {r["student_id"]: r["score"] for r in exported(course)}
    assert before["ben"] != before["ada"]
    submitted = course / "submitted" / "ben" / name
    shutil.rmtree(submitted)
    shutil.copytree(course / "submitted" / "ada" / name, submitted)
    again = autograder(course)
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    assert f"1 graded, 0 failed, {students - 1} skipped as already graded" in again.stdout
    after = {r["student_id"]: r["score"] for r in exported(course)}
    assert after["ben"] == before["ada"]
    assert {k: v for k, v in after.items() if k != "ben"} == {
        k: v for k, v in before.items() if k != "ben"
    }
