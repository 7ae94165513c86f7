"""`autograder report` on the sample class, graded for real by `autograder grade`.

The expected counts come from the sample class's profiles (instructor/sample_class/
README.md, the slips stated in tools/make_sample_class.py) and its answer key
(expected_grades.csv), not from the report code: in 03_a_neuron_by_hand ada, cyd and fay
are right everywhere; ben (factor 2 dropped) and eve (autograd) miss dL_da, dL_dh, dL_dw
and dL_db; dee submits the release untouched. fay did not submit 06. (gus, whose right
answers depend on numeric coincidences, is left out.)
"""

from __future__ import annotations

import base64
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.sample_class import expected_scores, make_course, submit_sample_class
from autograder.classroom.report import NO_DIAGNOSIS, build
from autograder.core.givens import PUBLIC
from autograder.grading.runner import Grader
from autograder.grading.trusted import givens_for

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

A03 = "03_a_neuron_by_hand"
A06 = "06_one_backward_every_parameter"
UNRELEASED = "01_what_a_gradient_is"
STUDENTS = ["ada", "ben", "cyd", "dee", "eve", "fay"]
CHAIN = ["dL_da", "dL_dh", "dL_dw", "dL_db"]  # ben and eve wrong, for different reasons
LOCAL = ["h", "a", "L", "da_dh", "dh_dw", "dh_db"]  # only dee wrong
WRITTEN = "why_dw_and_db_differ"
REPO = Path(__file__).resolve().parent.parent


def max_points(assignment: str) -> float:
    """The assignment's maximum score: the points of the instructor's graded cells."""
    notebook = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", 4)
    meta = [cell.metadata.get("nbgrader", {}) for cell in notebook.cells]
    return float(sum(m.get("points", 0) for m in meta if m.get("grade")))


def autograder(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "autograder"), *map(str, args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=os.environ)


def graded_sample_class(root: Path) -> Path:
    """The sample class (gus left out) handed in 03 and 06 and graded by `autograder grade`;
    01 is in the gradebook too (as `make assign` records it) but neither released nor
    handed in. The course has its own exchange, so no class on this machine counts."""
    exchange = root / "exchange"
    exchange.mkdir(parents=True)
    config = f"c.Exchange.root = {str(exchange)!r}\n"
    course = make_course(root / "course", [A03, A06, UNRELEASED], extra_config=config)
    submit_sample_class(course, [A03, A06], STUDENTS)
    nothing = autograder("report", cwd=course)
    assert nothing.returncode == 1 and "nothing is graded" in nothing.stderr
    outcomes = list(Grader(course, jobs=2).run())
    assert [o.status for o in outcomes] == ["graded"] * 11, [o.reasons for o in outcomes]
    return course


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return graded_sample_class(tmp_path_factory.mktemp("report"))


def test_share_right_per_part(course: Path) -> None:
    parts = {p.name: p for p in build(course, A03).parts}
    assert sorted(parts) == sorted(f"correct_{n}" for n in CHAIN + LOCAL) + [WRITTEN]
    for name in LOCAL:
        assert (parts[f"correct_{name}"].submitted, parts[f"correct_{name}"].right) == (6, 5)
    for name in CHAIN:
        assert (parts[f"correct_{name}"].submitted, parts[f"correct_{name}"].right) == (6, 3)
    written = parts[WRITTEN]  # five answered it, to be graded by hand; dee left the stub
    assert (written.submitted, written.right, written.ungraded) == (6, 0, 5)


def test_mistakes_by_kind_with_counts_and_examples(course: Path) -> None:
    parts = {p.name: p for p in build(course, A03).parts}
    # dee's untouched release: one kind, the same on all ten code parts
    dee_kinds = {m.kind for n in LOCAL for m in parts[f"correct_{n}"].mistakes}
    assert len(dee_kinds) == 1
    for name in LOCAL:
        assert [(m.kind, m.count) for m in parts[f"correct_{name}"].mistakes] == [
            (next(iter(dee_kinds)), 1)
        ]
    # ben's and eve's mistakes are two further kinds, one learner each, on every chain part
    for name in CHAIN:
        mistakes = parts[f"correct_{name}"].mistakes
        assert sorted(m.count for m in mistakes) == [1, 1, 1]
        assert len({m.kind for m in mistakes}) == 3 and dee_kinds < {m.kind for m in mistakes}
    # ben: dL_da = a - y, with his own numbers (drawn from his name)
    given = givens_for(A03, "ben", PUBLIC)  # the sample class is on the public seed
    a = max(given["w"] * given["x"] + given["b"], 0.0)
    examples = [m.example for m in parts["correct_dL_da"].mistakes]
    assert f"dL_da = {a - given['y']:.1f}" in examples, examples
    assert parts[WRITTEN].mistakes == []


def test_without_stored_diagnoses_every_wrong_part_still_counts(
    course: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    shutil.rmtree(copy / ".autograder" / "diagnoses")
    parts = {p.name: p for p in build(copy, A03).parts}
    for name in CHAIN:
        assert [(m.kind, m.count) for m in parts[f"correct_{name}"].mistakes] == [(NO_DIAGNOSIS, 3)]


def test_course_progress_per_student(course: Path) -> None:
    expected = expected_scores()
    report = build(course)
    rows = {row.student: row for row in report.progress}
    assert sorted(rows) == STUDENTS
    for student in STUDENTS:
        want = expected[(student, A03)] + expected[(student, A06)]
        assert rows[student].total == want
        assert rows[student].max_total == max_points(A03) + max_points(A06)
    assert rows["fay"].scores[A06] is None  # not submitted
    assert rows["ada"].scores == {A03: expected[("ada", A03)], A06: expected[("ada", A06)]}


def test_command_writes_html_with_plots_and_csv(course: Path) -> None:
    result = autograder("report", A03, cwd=course)
    assert result.returncode == 0, result.stderr
    out = course / "reports"
    page = (out / f"{A03}.html").read_text()
    images = page.count("src='data:image/png;base64,")
    assert images == 3  # share right, mistakes by kind, progress
    first = page.split("src='data:image/png;base64,")[1].split("'")[0]
    assert base64.b64decode(first).startswith(b"\x89PNG")
    with open(out / f"{A03}.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    dl_da = [r for r in rows if r["part"] == "correct_dL_da"]
    assert len(dl_da) == 3 and {r["right"] for r in dl_da} == {"3"}
    assert sum(int(r["mistakes"]) for r in rows) == 4 * 3 + 6 * 1
    with open(out / f"{A03}_progress.csv", newline="") as handle:
        progress = {r["student"]: r for r in csv.DictReader(handle)}
    expected = expected_scores()
    assert progress["fay"][A06] == ""
    # progress spans the course: ben's total is his 03 and his 06
    assert float(progress["ben"]["total"]) == expected[("ben", A03)] + expected[("ben", A06)]
    unknown = autograder("report", "99_nope", cwd=course)
    assert unknown.returncode == 2 and "not in the gradebook" in unknown.stderr


def test_lateness_against_the_gradebooks_due_date(course: Path) -> None:
    """The sample class handed in at 2026-03-16 17:30 UTC (timestamp.txt, as collected):
    with a due date 90 minutes earlier, the report says each one late, by how much."""
    import datetime

    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    from autograder.classroom.handin import late_text

    url = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(url, "backward-course") as gb:
        gb.update_or_create_assignment(A03, duedate=datetime.datetime(2026, 3, 16, 16, 0))
    try:
        rows = {row.student: row for row in build(course).progress}
        assert rows["ada"].late == {A03: 5400.0}
        assert rows["ada"].late_note == f"{A03} (late 1 h 30 min)"
        result = autograder("report", A03, cwd=course)
        assert result.returncode == 0, result.stderr
        with open(course / "reports" / f"{A03}_progress.csv", newline="") as handle:
            progress = {r["student"]: r for r in csv.DictReader(handle)}
        stamp = (REPO / "instructor" / "sample_class" / "ben" / A03 / "timestamp.txt").read_text()
        ben_late = parse_utc(stamp) - datetime.datetime(2026, 3, 16, 16, 0)
        assert progress["ben"]["late"] == f"{A03} (late {late_text(ben_late.total_seconds())})"
        assert "late 1 h 30 min" in (course / "reports" / f"{A03}.html").read_text()
    finally:
        with Gradebook(url, "backward-course") as gb:
            gb.update_or_create_assignment(A03, duedate=None)
    assert build(course).progress[0].late == {}
