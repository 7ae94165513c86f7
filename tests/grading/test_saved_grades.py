"""Auto grades saved at once are the grades nbgrader's SaveAutoGrades saves.

`SaveAutoGradesAtOnce` (autograder/grading/saved_grades.py) stands in for nbgrader's
SaveAutoGrades when the grader records a hand-in. For every autograded notebook of the
sample class, each of the two is run over the same notebook on its own copy of the
gradebook, after every auto score, review flag and auto comment was overwritten with
something neither writes (and a manual score given to some grades, which turns their
review flag on): the two gradebooks must end the same, row for row, with far fewer
statements and one commit a notebook.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbgrader_course import shared_autograded_course
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autograder.grading.nbgrader_internals import shared_gradebook_work
from autograder.grading.recording import notebook_resources

pytestmark = pytest.mark.processes  # the graded course is made by `autograder grade`

SENTINEL_COMMENT = "written by neither"


def scrambled_gradebook(course: Path, into: Path) -> str:
    """A copy of the course's gradebook with every auto field set to what neither
    preprocessor writes, and a manual score on every third grade; its URL."""
    from nbgrader.api import Comment, Grade, Gradebook

    shutil.copy(course / "gradebook.db", into)
    url = f"sqlite:///{into}"
    with Gradebook(url) as gb:
        for number, grade in enumerate(gb.db.query(Grade).order_by(Grade.id)):
            grade.auto_score = -7.0
            grade.needs_manual_grade = number % 2 == 0  # flipped below where it must be
            grade.manual_score = 1.0 if number % 3 == 0 else None
        for comment in gb.db.query(Comment):
            comment.auto_comment = SENTINEL_COMMENT
        gb.db.commit()
    return url


def saved_rows(url: str) -> list[tuple[Any, ...]]:
    """Every grade's and comment's auto fields, in a stable order."""
    from nbgrader.api import Comment, Grade, Gradebook

    with Gradebook(url) as gb:
        grades = [
            ("grade", g.id, g.auto_score, g.manual_score, g.needs_manual_grade)
            for g in gb.db.query(Grade).order_by(Grade.id)
        ]
        comments = [
            ("comment", c.id, c.auto_comment) for c in gb.db.query(Comment).order_by(Comment.id)
        ]
    return grades + comments


class Statements:
    """SQL statements and commits while counting."""

    def __init__(self) -> None:
        self.statements = 0
        self.commits = 0

    def statement(self, *args: object) -> None:
        self.statements += 1

    def commit(self, *args: object) -> None:
        self.commits += 1


@contextlib.contextmanager
def counting(counted: Statements) -> Iterator[Statements]:
    event.listen(Engine, "before_cursor_execute", counted.statement)
    event.listen(Engine, "commit", counted.commit)
    try:
        yield counted
    finally:
        event.remove(Engine, "before_cursor_execute", counted.statement)
        event.remove(Engine, "commit", counted.commit)


def resources_of(path: Path, url: str) -> Any:
    """nbgrader's resources for the notebook at `<step>/<student>/<assignment>/` `path`."""
    return notebook_resources(path.parent.parent.name, path.parent.name, path.stem, url)


def save_all(course: Path, url: str, preprocessor: Any, counted: Statements) -> None:
    """Run `preprocessor` over every autograded notebook of the course against `url`."""
    for notebook_path in sorted((course / "autograded").glob("*/*/*.ipynb")):
        notebook = nbformat.read(notebook_path, as_version=4)
        with counting(counted):
            preprocessor().preprocess(notebook, resources_of(notebook_path, url))


def test_saved_at_once_is_what_nbgrader_saves(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from nbgrader.preprocessors import SaveAutoGrades

    from autograder.grading.saved_grades import SaveAutoGradesAtOnce

    course = shared_autograded_course(tmp_path_factory)
    theirs_url = scrambled_gradebook(course, tmp_path / "theirs.db")
    ours_url = scrambled_gradebook(course, tmp_path / "ours.db")
    before = saved_rows(ours_url)
    notebooks = len(list((course / "autograded").glob("*/*/*.ipynb")))
    assert notebooks >= 20, "the sample class should give many notebooks to compare"
    from nbgrader.api import Gradebook

    theirs, ours, opening = Statements(), Statements(), Statements()
    with shared_gradebook_work():
        save_all(course, theirs_url, SaveAutoGrades, theirs)
        save_all(course, ours_url, SaveAutoGradesAtOnce, ours)
        with counting(opening):
            Gradebook(ours_url).close()  # what opening a gradebook commits, each notebook
    saved = saved_rows(ours_url)
    assert saved == saved_rows(theirs_url)
    changed = [new for new, old in zip(saved, before, strict=True) if new != old]
    assert len(changed) > len(saved) // 2, "most rows must have been written again"
    assert any(row[0] == "grade" and row[3] is not None and row[4] for row in saved)
    expected = notebooks * (1 + opening.commits)  # one a notebook, besides opening's
    assert expected <= ours.commits <= expected + 1  # (+1: the first open of the copy)
    assert theirs.commits > 3 * ours.commits
    assert ours.statements < theirs.statements / 2, (ours.statements, theirs.statements)


def test_a_cell_not_in_the_gradebook_fails_as_nbgrader_fails(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from nbgrader.api import MissingEntry

    from autograder.grading.saved_grades import SaveAutoGradesAtOnce

    course = shared_autograded_course(tmp_path_factory)
    url = scrambled_gradebook(course, tmp_path / "gradebook.db")
    before = saved_rows(url)
    path = sorted((course / "autograded").glob("*/*/*.ipynb"))[0]
    notebook = nbformat.read(path, as_version=4)
    graded = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    graded[-1].metadata.nbgrader["grade_id"] = "no_such_cell"
    with pytest.raises(MissingEntry):
        SaveAutoGradesAtOnce().preprocess(notebook, resources_of(path, url))
    assert saved_rows(url) == before, "nothing of a failed notebook is saved"
