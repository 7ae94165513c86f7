"""The real nbgrader pipeline on the sample class: every grade as reasoned, feedback that teaches.

generate_assignment, autograde, generate_feedback and export run as nbgrader commands in
temporary course directories (see `nbgrader_course`); the grades they export must equal
instructor/sample_class/expected_grades.csv, which was reasoned from the student profiles
in tools/make_sample_class.py, not copied from a grader's output.
"""

from __future__ import annotations

import html
import re

import pytest
from nbgrader_course import (
    GradedCourse,
    assignment_names,
    read_expected_grades,
    shared_graded_course,
)

pytestmark = pytest.mark.nbgrader


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
    return shared_graded_course(tmp_path_factory)


STUDENTS = ("ada", "ben", "cyd", "dee", "eve", "fay")


def feedback_text(course: GradedCourse, student: str, assignment: str) -> str:
    """The feedback page as plain text: tags dropped, entities decoded."""
    page = course.feedback_html(student, assignment).read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_exported_grades_are_exactly_the_expected_ones(graded_course: GradedCourse) -> None:
    exported = graded_course.grades()
    expected = read_expected_grades()
    wrong = {
        key: {"expected": expected.get(key), "nbgrader": exported.get(key)}
        for key in sorted(set(exported) | set(expected))
        if exported.get(key) != expected.get(key)
    }
    assert not wrong, f"grades.csv disagrees with expected_grades.csv: {wrong}"


def test_totals_per_student(graded_course: GradedCourse) -> None:
    totals = {s: 0.0 for s in STUDENTS}
    for (student, _), (score, _) in graded_course.grades().items():
        totals[student] += score
    assert totals == {"ada": 66, "ben": 40, "cyd": 54, "dee": 0, "eve": 43, "fay": 58}


def test_a_missing_submission_is_exported_as_zero(graded_course: GradedCourse) -> None:
    assert graded_course.grades()[("fay", "06_one_backward_every_parameter")] == (0.0, 7.0)
    assert not graded_course.feedback_html("fay", "06_one_backward_every_parameter").exists()


@pytest.mark.parametrize(
    ("student", "assignment", "message"),
    [
        ("ada", "03_a_neuron_by_hand", "✓ dL/dw = 12.0 matches PyTorch"),
        ("ben", "06_one_backward_every_parameter", "Right size, wrong sign"),
        ("ben", "03_a_neuron_by_hand", "a factor of 2 is missing"),
        ("ben", "05_three_mechanics", "grad_of_intermediate(2.0) raised AttributeError"),
        ("cyd", "04_the_dead_relu", "The ReLU on this path is closed (h < 0)"),
        ("cyd", "05_three_mechanics", "Gradients accumulate: x.grad adds up over the steps"),
        ("cyd", "05_three_mechanics", "accumulated over 3 backward calls"),
        ("cyd", "01_what_a_gradient_is", "is not plain arithmetic (calls `torch.tensor`)"),
        ("dee", "01_what_a_gradient_is", "is not answered yet"),
        ("eve", "03_a_neuron_by_hand", "was computed with autograd (uses `.grad`)"),
        ("eve", "03_a_neuron_by_hand", "by hand means by hand"),
        ("fay", "04_the_dead_relu", "rounded too much"),
    ],
)
def test_feedback_carries_the_diagnosis(
    graded_course: GradedCourse, student: str, assignment: str, message: str
) -> None:
    assert message in feedback_text(graded_course, student, assignment)


def test_feedback_shows_no_solution(graded_course: GradedCourse) -> None:
    for student in STUDENTS:
        for assignment in assignment_names():
            page = graded_course.feedback_html(student, assignment)
            if page.exists():
                assert "BEGIN SOLUTION" not in page.read_text(encoding="utf-8")


def test_report_timings(
    graded_course: GradedCourse, record_property: pytest.RecordProperty
) -> None:
    """Not a check: records how long each nbgrader step took (see -rA or the junit XML)."""
    for step, seconds in graded_course.timings.items():
        record_property(f"seconds_{step}", round(seconds, 1))
    print("nbgrader timings (s):", {k: round(v, 1) for k, v in graded_course.timings.items()})
