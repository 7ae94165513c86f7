"""Feedback pages without repeated work are the same pages, byte for byte.

`GetGradesAtOnce` (autograder/nbgrader_plugins/grades.py) stands in for nbgrader's GetGrades
in the course config, the feedback process shares one gradebook engine
(`shared_gradebook_work`), and `FeedbackExporter` makes nbconvert's BeautifulSoup pass
without the tree (`accessible_html`): every page of the sample class, every assignment,
must be the page nbgrader's own GetGrades and nbconvert's own HTMLExporter give, with far
fewer statements, and without falling back to the tree.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from nbgrader_course import shared_autograded_course
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autograder.grading.nbgrader_internals import shared_gradebook_work
from autograder.nbgrader_plugins import accessible_html
from autograder.sandbox.workers import load_config

pytestmark = pytest.mark.processes  # the graded course is made by `autograder grade`

NBGRADER_GETGRADES = "nbgrader.preprocessors.GetGrades"
AT_ONCE = "autograder.nbgrader_plugins.grades.GetGradesAtOnce"
NBCONVERTS = "nbconvert.exporters.HTMLExporter"
OURS = "autograder.nbgrader_plugins.feedback_exporter.FeedbackExporter"


@pytest.fixture
def course(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A copy of the sample class graded by `autograder grade` (feedback is written in it)."""
    return Path(shutil.copytree(shared_autograded_course(tmp_path_factory), tmp_path / "course"))


class Statements:
    """SQL statements executed while counting."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: object) -> None:
        self.count += 1


@pytest.fixture
def statements() -> Iterator[Statements]:
    counter = Statements()
    event.listen(Engine, "before_cursor_execute", counter)
    try:
        yield counter
    finally:
        event.remove(Engine, "before_cursor_execute", counter)


def hand_ins(course: Path) -> list[tuple[str, str]]:
    """(assignment, student) of every autograded hand-in."""
    return sorted(
        (assignment.name, student.name)
        for student in (course / "autograded").iterdir()
        for assignment in student.iterdir()
    )


def pages(
    course: Path, first_preprocessor: str, shared: bool, exporter: str = OURS
) -> dict[Path, bytes]:
    """Every feedback page of the course, generated with `first_preprocessor` reading the
    grades (the course config's other preprocessors after it) and `exporter`."""
    from nbgrader.apps.api import NbGraderAPI

    config = load_config(course)
    listed = list(config.GenerateFeedback.preprocessors)
    assert listed[0] == AT_ONCE  # what the course config says
    config.GenerateFeedback.preprocessors = [first_preprocessor, *listed[1:]]
    assert config.GenerateFeedback.exporter_class == OURS
    config.GenerateFeedback.exporter_class = exporter
    api = NbGraderAPI(config=config)
    shutil.rmtree(course / "feedback", ignore_errors=True)
    with shared_gradebook_work() if shared else contextlib.nullcontext():
        for assignment, student in hand_ins(course):
            result = api.generate_feedback(assignment, student, force=True)
            assert result["success"], result
    return {p.relative_to(course): p.read_bytes() for p in (course / "feedback").rglob("*.html")}


def test_pages_are_nbgraders_own_byte_for_byte_in_far_fewer_statements(
    course: Path, statements: Statements, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbgraders = pages(course, NBGRADER_GETGRADES, shared=False, exporter=NBCONVERTS)
    nbgrader_statements, statements.count = statements.count, 0
    through_the_tree: list[str] = []
    soup_pass = accessible_html.soup_pass

    def counted_soup_pass(html: str) -> tuple[str, int]:
        through_the_tree.append(html)
        return soup_pass(html)

    monkeypatch.setattr(accessible_html, "soup_pass", counted_soup_pass)
    ours = pages(course, AT_ONCE, shared=True)
    assert not through_the_tree, "a sample page fell back to BeautifulSoup's pass"
    assert len(nbgraders) == len(hand_ins(course)) >= 20
    assert ours == nbgraders
    assert statements.count * 3 < nbgrader_statements, (statements.count, nbgrader_statements)


def test_grades_at_once_alone_gives_the_same_pages(course: Path) -> None:
    """Without the shared engine too (as `nbgrader generate_feedback` runs it)."""
    assert pages(course, AT_ONCE, shared=False) == pages(course, NBGRADER_GETGRADES, shared=False)
