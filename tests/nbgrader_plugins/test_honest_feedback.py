"""Feedback on a written answer (graded by hand) says what is true of its grade.

With the real pipeline (`autograder grade`, formgrader's way of recording a manual score,
`nbgrader generate_feedback --force` as the README says): before the teacher grades it
the written answer shows "pending review", not "0.0 / 1.0"; graded, it shows its score;
after a resubmission that changed it, "awaiting review (changed since it was graded)"
with neither the old score nor the old comment, and the notebook's total leaves it out;
a resubmission that left it as graded keeps the score. Formgrader (nbgrader's API), the
export and the report agree with the feedback each time: the changed answer needs
review there too, and its old point counts nowhere (they all counted it before).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from courses import make_course

from autograder.authoring.sample_class import submit_sample_class

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

ASSIGNMENT = "03_a_neuron_by_hand"
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
COMMENT = "Clear: the slope is the local rate of change."


def run(course: Path, *command: str) -> str:
    done = subprocess.run(command, cwd=course, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def feedback(course: Path, regrade: bool = True) -> str:
    """(Re)grade ada, generate her feedback (as the README says) and read it as text."""
    if regrade:
        run(course, str(BIN / "autograder"), "grade", ASSIGNMENT, "--force", "--quiet")
    run(course, str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT, "--force")
    page = course / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text()))


def written(course: Path) -> tuple[str, float]:
    """The written answer's grade id and its points."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "backward-course") as gb:
        cell = next(
            c for c in gb.find_notebook(ASSIGNMENT, ASSIGNMENT).grade_cells
            if c.cell_type == "markdown"
        )  # fmt: skip
        return cell.name, float(cell.max_score)


def grade_in_formgrader(course: Path, points: float) -> None:
    """What formgrader's save does (its GradeHandler): the score, marked as graded, and a
    comment."""
    from nbgrader.api import Gradebook

    name, _ = written(course)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "backward-course") as gb:
        grade = gb.find_grade(name, ASSIGNMENT, ASSIGNMENT, "ada")
        grade.manual_score = points
        grade.needs_manual_grade = False
        comment = gb.find_comment(name, ASSIGNMENT, ASSIGNMENT, "ada")
        comment.manual_comment = COMMENT
        gb.db.commit()


def rewrite_answer(course: Path, text: str) -> None:
    """ada hands in again with this written answer."""
    path = course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    name, _ = written(course)
    notebook = json.loads(path.read_text())
    cell = next(
        c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == name
    )
    cell["source"] = text
    path.write_text(json.dumps(notebook))


def total(page: str) -> tuple[float, float]:
    found = re.search(rf"{ASSIGNMENT} \(Score: ([\d.]+) / ([\d.]+)", page)
    assert found, page[:500]
    return float(found[1]), float(found[2])


def test_feedback_on_a_written_answer_is_never_stale(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", [ASSIGNMENT])
    submit_sample_class(course, [ASSIGNMENT], ["ada"])
    _, points = written(course)

    pending = feedback(course)
    assert f"Score: pending review / {points:.1f}" in pending
    assert f"Score: 0.0 / {points:.1f}" not in pending
    assert f"{points:.1f} more point(s) awaiting the teacher's review" in pending
    automatic, most = total(pending)

    grade_in_formgrader(course, points)
    graded = feedback(course, regrade=False)  # the README's step after formgrader
    assert total(graded) == (automatic + points, most)
    assert COMMENT in graded and "awaiting" not in graded and "pending review" not in graded
    unchanged = feedback(course)  # handed in again as graded: the manual grade holds
    assert total(unchanged) == (automatic + points, most) and COMMENT in unchanged

    assert everywhere(course) == (automatic + points, "")  # formgrader asks nothing again

    rewrite_answer(course, "The slope is whatever the plot shows, I guess.")
    changed = feedback(course)
    assert f"awaiting review (changed since it was graded) / {points:.1f}" in changed
    assert COMMENT not in changed
    assert total(changed) == (automatic, most)
    # formgrader, the export and the report say the same: to review, the old point out
    name, _ = written(course)
    assert everywhere(course) == (automatic, f"{ASSIGNMENT}/{name}")
    kept = json.loads(
        (course / ".autograder" / "reviewed" / "ada" / f"{ASSIGNMENT}.kept.json").read_text()
    )
    assert kept[f"{ASSIGNMENT}/{name}"]["score"] == points  # nothing the teacher wrote lost
    assert kept[f"{ASSIGNMENT}/{name}"]["comment"] == COMMENT

    grade_in_formgrader(course, 0.0)  # the teacher reviews the new answer
    reviewed = feedback(course, regrade=False)
    assert total(reviewed) == (automatic, most) and "awaiting" not in reviewed
    assert everywhere(course) == (automatic, "")


def everywhere(course: Path) -> tuple[float, str]:
    """ada's score and the parts awaiting review, as formgrader (nbgrader's API, which
    its pages and handlers call), `nbgrader export` and the report each say them; the
    test fails when they disagree."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from autograder.grading.runner import load_config
    from autograder.report import build

    config = load_config(course)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    (listed,) = api.get_submissions(ASSIGNMENT)
    (notebook,) = api.get_notebook_submissions(ASSIGNMENT, ASSIGNMENT)
    assert bool(listed["needs_manual_grade"]) == bool(notebook["needs_manual_grade"])
    formgrader = (float(listed["score"]), bool(listed["needs_manual_grade"]))

    run(course, str(BIN / "nbgrader"), "export", f"--to={course / 'grades.csv'}")
    with open(course / "grades.csv", newline="") as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["student_id"] == "ada"]
    exported = (float(row["score"]), row["needs_review"])

    report = build(course, ASSIGNMENT)
    (progress,) = [p for p in report.progress if p.student == "ada"]
    ungraded = sum(part.ungraded for part in report.parts)
    reported = (float(progress.scores[ASSIGNMENT] or 0.0), ungraded)

    assert formgrader == (exported[0], bool(exported[1])), (formgrader, exported)
    assert reported == (exported[0], int(bool(exported[1]))), (reported, exported)
    return exported
