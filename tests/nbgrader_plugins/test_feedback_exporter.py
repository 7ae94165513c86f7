"""Feedback pages from templates compiled once a process: the same pages, every template warm.

`autograder serve --release-feedback` renders each learner's page in a child forked from a
warm process (autograder/service/release_feedback.py); the child inherits what the parent
compiled and nothing the child compiles outlives it, so the parent must compile every
template a page uses before the first learner's child.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nbgrader_course import shared_autograded_course

from autograder.nbgrader_plugins.feedback_exporter import COMPILED, FeedbackExporter
from autograder.sandbox.workers import load_config
from autograder.service.release_feedback import Releaser

pytestmark = pytest.mark.processes  # every test here starts a process (tests/tiers.py)

ASSIGNMENT = "03_a_neuron_by_hand"


@pytest.fixture
def course(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A copy of the sample class graded by `autograder grade` (feedback is written in it)."""
    return Path(shutil.copytree(shared_autograded_course(tmp_path_factory), tmp_path / "course"))


def page(course: Path, student: str) -> bytes:
    return (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_bytes()


def students(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "autograded").iterdir())


def test_the_course_renders_feedback_with_the_cached_exporter(course: Path) -> None:
    from nbgrader.converters import GenerateFeedback

    converter = GenerateFeedback(config=load_config(course))
    assert converter.exporter_class is FeedbackExporter


def test_a_warm_releaser_has_compiled_every_template_a_page_uses(course: Path) -> None:
    COMPILED.clear()
    releaser = Releaser(course)  # warms up
    warm = set(COMPILED.code)
    assert len(warm) >= 5, warm  # the feedback template and what it extends and imports
    for student in students(course):
        result = releaser.api.generate_feedback(ASSIGNMENT, student, force=True)
        assert result["success"], result
        assert page(course, student)
    assert set(COMPILED.code) == warm, "a page compiled a template the warm-up had not"


def test_the_pages_are_the_ones_nbconvert_renders_without_the_cache(course: Path) -> None:
    from nbgrader.apps.api import NbGraderAPI

    def pages(exporter: str) -> dict[str, bytes]:
        config = load_config(course)
        config.GenerateFeedback.exporter_class = exporter
        api = NbGraderAPI(config=config)
        for student in students(course):
            result = api.generate_feedback(ASSIGNMENT, student, force=True)
            assert result["success"], result
        return {student: page(course, student) for student in students(course)}

    COMPILED.clear()
    uncached = pages("nbconvert.exporters.HTMLExporter")
    assert not COMPILED.code  # the control used nbconvert's own exporter
    cached = pages("autograder.nbgrader_plugins.feedback_exporter.FeedbackExporter")
    assert COMPILED.code
    assert cached == uncached
    assert len(cached) >= 3 and all(b"Score" in html for html in cached.values())
