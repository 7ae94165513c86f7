"""`autograder grade` over real hand-ins of the derivation corpus (issue 45): each student
hands in ada's notebook (every part right) with one part written as an entry of
`evaluation.derivations` with their own numbers; an honest form keeps every point, a cheat
loses exactly that part's."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from courses import make_course
from nbgrader_course import AUTOGRADE_SEED

from autograder.specs import SPECS
from evaluation.derivations import CHEATS, HONEST, Entry

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENTRIES = {f"s{index:03d}": entry for index, entry in enumerate([*HONEST, *CHEATS])}


def run(args: list[str], course: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, cwd=course, env=env, capture_output=True, text=True, check=False)


def hand_in(course: Path, student: str, entry: Entry) -> None:
    """ada's notebook of the entry's exercise, the entry's lines in its part's cell."""
    name = entry.exercise
    notebook = nbformat.read(
        REPO / "instructor" / "sample_class" / "ada" / name / f"{name}.ipynb", 4
    )
    cells = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == entry.part
    ]
    assert len(cells) == 1, (name, entry.part)
    cells[0].source = entry.lines(student)
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{name}.ipynb")


@pytest.fixture(scope="module")
def grades(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], float]:
    exercises = sorted({entry.exercise for entry in ENTRIES.values()})
    course = make_course(tmp_path_factory.mktemp("exact") / "course", exercises)
    for student, entry in ENTRIES.items():
        hand_in(course, student, entry)
    graded = run([str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED], course)
    assert graded.returncode == 0, graded.stderr[-3000:]
    exported = run([str(BIN / "nbgrader"), "export", "--to", str(course / "grades.csv")], course)
    assert exported.returncode == 0, exported.stderr[-3000:]
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return {(row["student_id"], row["assignment"]): float(row["raw_score"]) for row in rows}


def test_the_grader_credits_every_honest_form_and_no_cheat(
    grades: dict[tuple[str, str], float],
) -> None:
    wrong = []
    for student, entry in ENTRIES.items():
        spec = SPECS[entry.exercise]
        lost = [*entry.costs, *([] if entry.honest else [entry.part])]
        expected = float(sum(p.points for p in spec.parts if p.name not in lost))
        got = grades[student, entry.exercise]
        if got != expected:
            wrong.append((student, entry.lines(student), got, expected))
    assert not wrong
