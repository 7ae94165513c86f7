"""Each learner's problem where the teacher and the learner read the grades.

In a class with a secret, an exercise whose structure varies is stated for each learner's
own structure (`specs.learner_problem`), and their diagnoses are about it. `problem_of`
says which structure a student of a course has (the same draw the grader and the check
service make, from the course's id and secret); `NoteProblem` (listed in
`c.GenerateFeedback.preprocessors`) puts the Given cell's sentence, "Your problem: ...", at
the top of the feedback page, above the scores and diagnoses it explains; `ShowStructure`
(in `c.HTMLExporter.preprocessors`: formgrader renders a submission with nbconvert's
HTMLExporter and the course's config) puts "Structure: ..." at the top of formgrader's view
of a submission, for the teacher who grades it. An exercise with one structure gets no line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbconvert.preprocessors import Preprocessor
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.core.givens import Site
from autograder.grading.trusted import course_site
from autograder.specs import SPECS, exercise_spec, learner_problem, problem_words

MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


@dataclass(frozen=True)
class Problem:
    """One student's problem in one assignment: its name (`<exercise>[<tag>]`), the
    structure in words, and the Given cell's sentence ('' for both where the exercise has
    one structure)."""

    name: str
    structure: str
    sentence: str
    lesson: str = ""
    """The lesson's structure in words."""

    @property
    def teacher_line(self) -> str:
        """'Structure: the loss y = 3x²/2 (the lesson's is the loss y = x²)' ('' for an
        exercise with one structure)."""
        if not self.structure:
            return ""
        if self.structure == self.lesson:
            return f"Structure: {self.structure} (the lesson's)"
        return f"Structure: {self.structure} (the lesson's is {self.lesson})"


def problem_of(assignment: str, student: str, site: Site) -> Problem:
    """`student`'s problem in `assignment` (an assignment that is no exercise of the course
    has one structure: no words)."""
    if assignment not in SPECS or not SPECS[assignment].variants:
        return Problem(assignment, "", "")
    name = learner_problem(assignment, student, site)
    structure, lesson = exercise_spec(name).structure, SPECS[assignment].structure
    words = structure.words if structure is not None else ""
    lesson_words = lesson.words if lesson is not None else ""
    return Problem(name, words, problem_words(name), lesson_words)


def markdown_text(text: str) -> str:
    """`text` as Markdown that renders to itself (its punctuation escaped)."""
    return MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def put_first(nb: Any, line: str) -> None:
    """`line` ('Label: text') as the notebook's first cell, its label in bold."""
    if line:
        label, _, rest = line.partition(": ")
        text = f"**{markdown_text(label)}:** {markdown_text(rest)}"
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))


def course_problem(config: Any, assignment: str, student: str) -> Problem:
    """`student`'s problem in `assignment` of the course `config` describes."""
    return problem_of(assignment, student, course_site(CourseDirectory(config=config)))


class NoteProblem(NbGraderPreprocessor):  # type: ignore[misc]
    """Put 'Your problem: ...' at the top of the feedback of a varied exercise."""

    def preprocess(self, nb: Any, resources: ResourcesDict) -> tuple[Any, ResourcesDict]:
        info = resources["nbgrader"]
        put_first(nb, course_problem(self.config, info["assignment"], info["student"]).sentence)
        return nb, resources


class ShowStructure(Preprocessor):  # type: ignore[misc]
    """Put 'Structure: ...' at the top of formgrader's view of a submission of a varied
    exercise (formgrader's resources name the submission, its student and assignment;
    any other page is left as it is)."""

    def preprocess(self, nb: Any, resources: ResourcesDict) -> tuple[Any, ResourcesDict]:
        student, assignment = resources.get("student"), resources.get("assignment_id")
        if (
            "submission_id" in resources
            and isinstance(student, str)
            and isinstance(assignment, str)
        ):
            put_first(nb, course_problem(self.config, assignment, student).teacher_line)
        return nb, resources
