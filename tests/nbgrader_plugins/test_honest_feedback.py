"""Feedback on a written answer (graded by hand) says what is true of its grade.

With the real pipeline (`autograder grade`, formgrader's way of recording a manual score,
`nbgrader generate_feedback --force` as the README says): before the teacher grades it
the written answer shows "pending review", not "0.0 / 1.0"; graded, it shows its score;
after a resubmission that changed it, "awaiting review (changed since it was graded)"
with neither the old score nor the old comment, and the notebook's total leaves it out;
a resubmission that left it as graded keeps the score.
"""

from __future__ import annotations

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

    rewrite_answer(course, "The slope is whatever the plot shows, I guess.")
    changed = feedback(course)
    assert f"awaiting review (changed since it was graded) / {points:.1f}" in changed
    assert COMMENT not in changed
    assert total(changed) == (automatic, most)

    grade_in_formgrader(course, 0.0)  # the teacher reviews the new answer
    reviewed = feedback(course, regrade=False)
    assert total(reviewed) == (automatic, most) and "awaiting" not in reviewed
