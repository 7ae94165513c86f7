"""The real nbgrader pipeline on the sample class: every grade as reasoned, feedback that teaches.

generate_assignment, autograde, generate_feedback and export run as nbgrader commands in
temporary course directories (see `nbgrader_course`); the grades they export must equal
instructor/sample_class/expected_grades.csv, which tools/make_sample_class.py derives from
each student's stated slips and the specs' points, not from a grader's output. Every
student has their own numbers: nbgrader runs each notebook in autograded/<student>/..., and
the checker takes the numbers of the student whose folder that is.
"""

from __future__ import annotations

import html
import re
import sys

import pytest
from nbgrader_course import (
    REPO_ROOT,
    GradedCourse,
    assignment_names,
    read_expected_grades,
    shared_graded_course,
)

from autograder.core.verdict import format_value
from autograder.diagnosis.references import reference_quantities
from autograder.specs import SPECS, learner_givens

sys.path.insert(0, str(REPO_ROOT / "tools"))
import make_sample_class  # noqa: E402  (tools/ is not a package)

pytestmark = pytest.mark.nbgrader


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
    return shared_graded_course(tmp_path_factory)


STUDENTS = tuple(s.name for s in make_sample_class.STUDENTS)
NEURON = "03_a_neuron_by_hand"


def reference(student: str, assignment: str, name: str) -> str:
    """PyTorch's value of `name` for the student's own numbers, as messages show it."""
    givens = learner_givens(assignment, student)
    return format_value(reference_quantities(assignment, givens)[name].value)


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


def test_a_missing_submission_is_exported_as_zero(graded_course: GradedCourse) -> None:
    name = "06_one_backward_every_parameter"
    assert graded_course.grades()[("fay", name)] == (0.0, float(SPECS[name].max_points))
    assert not graded_course.feedback_html("fay", "06_one_backward_every_parameter").exists()


def test_each_student_is_graded_on_their_own_numbers(graded_course: GradedCourse) -> None:
    for student in ("ada", "ben"):
        text = feedback_text(graded_course, student, NEURON)
        assert f"Numbers of {student} (the folder nbgrader is grading)" in text
    ada = f"✓ dL/dw = {reference('ada', NEURON, 'dL_dw')} matches PyTorch"
    assert ada in feedback_text(graded_course, "ada", NEURON)
    gus = f"but PyTorch gives {reference('gus', NEURON, 'dL_dw')}"
    assert gus in feedback_text(graded_course, "gus", NEURON)


@pytest.mark.parametrize(
    ("student", "assignment", "message"),
    [
        ("ben", "06_one_backward_every_parameter", "right size, wrong sign"),
        ("ben", "03_a_neuron_by_hand", "the factor 2, the 2 of the square"),
        ("ben", "03_a_neuron_by_hand", "fix Part D (dL/da) first"),
        ("ben", "05_three_mechanics", "grad_of_intermediate(2.0) raised AttributeError"),
        ("cyd", "04_the_dead_relu", "The ReLU on this path is shut (h < 0)"),
        ("cyd", "05_three_mechanics", "Gradients accumulate: x.grad adds up over the steps"),
        ("cyd", "05_three_mechanics", "only one call adds up"),
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
    """Not a check: records how long each nbgrader step took (see -rA or the junit XML),
    in this session or, when its run was reused from the cache, in the one that made it."""
    for step, seconds in graded_course.timings.items():
        record_property(f"seconds_{step}", round(seconds, 1))
    record_property("reused_from_cache", graded_course.reused)
    when = "an earlier session (cached)" if graded_course.reused else "this session"
    timings = {k: round(v, 1) for k, v in graded_course.timings.items()}
    print(f"nbgrader timings (s), run in {when}:", timings)
