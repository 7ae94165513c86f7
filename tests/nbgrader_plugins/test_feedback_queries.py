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
from dataclasses import dataclass
from pathlib import Path

import pytest
from nbgrader_course import shared_autograded_course
from test_saved_grades import Statements, counting

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


@dataclass
class NbgradersPages:
    pages: dict[Path, bytes]
    statements: int
    hand_ins: int


@pytest.fixture(scope="module")
def nbgraders(tmp_path_factory: pytest.TempPathFactory) -> NbgradersPages:
    """Every page as nbgrader's own GetGrades and nbconvert's HTMLExporter make it, and the
    statements that took: what each test below compares against (made once)."""
    course = shutil.copytree(
        shared_autograded_course(tmp_path_factory), tmp_path_factory.mktemp("nbgraders") / "c"
    )
    with counting(Statements()) as counted:
        made = pages(course, NBGRADER_GETGRADES, shared=False, exporter=NBCONVERTS)
    return NbgradersPages(made, counted.statements, len(hand_ins(course)))


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
    course: Path, nbgraders: NbgradersPages, monkeypatch: pytest.MonkeyPatch
) -> None:
    through_the_tree: list[str] = []
    soup_pass = accessible_html.soup_pass

    def counted_soup_pass(html: str) -> tuple[str, int]:
        through_the_tree.append(html)
        return soup_pass(html)

    monkeypatch.setattr(accessible_html, "soup_pass", counted_soup_pass)
    with counting(Statements()) as counted:
        ours = pages(course, AT_ONCE, shared=True)
    assert not through_the_tree, "a sample page fell back to BeautifulSoup's pass"
    assert len(nbgraders.pages) == nbgraders.hand_ins >= 20
    assert ours == nbgraders.pages
    assert counted.statements * 3 < nbgraders.statements, (counted.statements, nbgraders.statements)


def test_grades_at_once_alone_gives_the_same_pages(course: Path, nbgraders: NbgradersPages) -> None:
    """Without the shared engine too (as `nbgrader generate_feedback` runs it)."""
    assert pages(course, AT_ONCE, shared=False) == nbgraders.pages
