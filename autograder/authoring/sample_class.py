"""Throwaway nbgrader courses built from this repository, with the sample class submitted.

Used by `make grade`, the grading tests and the grading benchmark.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.authoring.release import generate
from autograder.core.givens import COURSE_ID

REPO = Path(__file__).resolve().parents[2]
SAMPLE_CLASS = REPO / "instructor" / "sample_class"


def make_course(root: Path, assignments: list[str], extra_config: str = "") -> Path:
    """A course directory with `assignments` generated (gradebook and release)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in assignments:
        shutil.copytree(REPO / "solutions" / name, root / "solutions" / name)
    config = (REPO / "nbgrader_config.py").read_text() + "\n" + extra_config
    (root / "nbgrader_config.py").write_text(config)
    generate(root, assignments)
    return root


def released_through_exchange(root: Path, assignment: str) -> tuple[Path, Path]:
    """A course under `root` with an exchange beside it, `assignment` released into it by
    nbgrader; hand-ins are placed by the user running this, so nbgrader's owner check is
    off (as in a container where every user is jovyan). Returns (course, exchange)."""
    exchange = root / "exchange"
    exchange.mkdir()
    config = f"c.Exchange.root = {str(exchange)!r}\nc.ExchangeCollect.check_owner = False\n"
    course = make_course(root / "course", [assignment], extra_config=config)
    shutil.copytree(course / "exercises" / assignment, course / "release" / assignment)
    nbgrader = Path(sys.executable).parent / "nbgrader"
    subprocess.run(
        [str(nbgrader), "release_assignment", assignment],
        cwd=course,
        check=True,
        capture_output=True,
    )
    return course, exchange


def submit_sample_class(
    course: Path, assignments: list[str], students: list[str] | None = None
) -> None:
    """Copy the sample class's submissions into `course/submitted/`."""
    for student_dir in sorted(SAMPLE_CLASS.iterdir()):
        if not student_dir.is_dir() or (students and student_dir.name not in students):
            continue
        for name in assignments:
            if (student_dir / name).is_dir():
                shutil.copytree(student_dir / name, course / "submitted" / student_dir.name / name)


def submit_class_of(course: Path, assignments: list[str], students: int) -> int:
    """A class of `students` (s000, s001, ...) handing in the sample class's submissions,
    copied round-robin into `course/submitted/`; the number of notebooks submitted."""
    samples = [p for p in sorted(SAMPLE_CLASS.iterdir()) if p.is_dir()]
    notebooks = 0
    for i in range(students):
        sample = samples[i % len(samples)]
        for name in assignments:
            if (sample / name).is_dir():
                shutil.copytree(sample / name, course / "submitted" / f"s{i:03d}" / name)
                notebooks += len(list((sample / name).glob("*.ipynb")))
    return notebooks


def expected_scores() -> dict[tuple[str, str], float]:
    """(student, assignment) -> expected score, as tools/make_sample_class.py derives it."""
    with open(SAMPLE_CLASS / "expected_grades.csv") as handle:
        return {(r["student"], r["assignment"]): float(r["score"]) for r in csv.DictReader(handle)}


def gradebook_scores(course: Path) -> dict[tuple[str, str], float]:
    """(student, assignment) -> score, as nbgrader's gradebook records it."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                scores[(submission.student.id, assignment.name)] = float(submission.score)
    return scores
