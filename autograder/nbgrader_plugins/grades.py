"""nbgrader's GetGrades for feedback pages, with two queries where it made one per cell.

nbgrader's `GetGrades` looks up every graded cell's grade (then its maximum, deferred) and
every answer cell's comment one query at a time: about 40 statements a page. `GetGradesAtOnce`
(the course config lists it in `c.GenerateFeedback.preprocessors` in its place) reads the
submitted notebook's grades and comments in one query each and puts the very same values in
the same cell metadata, resolved as nbgrader resolves them (a grade cell's before a task
cell's of the same name; a solution cell's comment before a task cell's); a cell it cannot
resolve so is looked up by nbgrader's own `find_grade` / `find_comment`, which raise what
they raise. It only reads the gradebook, as GetGrades does. (Its recording counterpart,
`SaveAutoGradesAtOnce`, is the grader's: `autograder.grading.saved_grades`.)
"""

from __future__ import annotations

from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import BaseCell, Comment, Grade, Gradebook
from nbgrader.preprocessors import GetGrades

from autograder.grading.saved_grades import COMMENT_CELL_TYPES, GRADE_CELL_TYPES, first_of


class GetGradesAtOnce(GetGrades):  # type: ignore[misc]
    """`GetGrades`, with the submitted notebook's grades and comments read at once."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        info = resources["nbgrader"]
        self.notebook_id = info["notebook"]
        self.assignment_id = info["assignment"]
        self.student_id = info["student"]
        self.db_url = info["db_url"]
        self.gradebook = Gradebook(self.db_url)
        with self.gradebook as gb:
            notebook = gb.find_submission_notebook(
                self.notebook_id, self.assignment_id, self.student_id
            )
            grade_rows = (
                gb.db.query(BaseCell.name, BaseCell.type, Grade.score, Grade.max_score)
                .join(Grade, Grade.cell_id == BaseCell.id)
                .filter(Grade.notebook_id == notebook.id)
                .all()
            )
            comment_rows = (
                gb.db.query(BaseCell.name, BaseCell.type, Comment.comment)
                .join(Comment, Comment.cell_id == BaseCell.id)
                .filter(Comment.notebook_id == notebook.id)
                .all()
            )
            self.grades = first_of(grade_rows, GRADE_CELL_TYPES)
            self.comments = first_of(comment_rows, COMMENT_CELL_TYPES)
            for index, cell in enumerate(nb.cells):
                nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
            late_penalty = notebook.late_submission_penalty
            if late_penalty is None:
                late_penalty = 0
            else:
                self.log.warning(f"Late submission penalty: {late_penalty}")
            info["score"] = notebook.score - late_penalty
            info["max_score"] = notebook.max_score
            info["late_penalty"] = late_penalty
        return nb, resources

    def _get_comment(self, cell: NotebookNode, resources: ResourcesDict) -> None:
        row = self.comments.get(cell.metadata["nbgrader"]["grade_id"])
        if row is None:
            super()._get_comment(cell, resources)  # nbgrader's lookup, and its error
            return
        cell.metadata.nbgrader["comment"] = row.comment

    def _get_score(self, cell: NotebookNode, resources: ResourcesDict) -> None:
        row = self.grades.get(cell.metadata["nbgrader"]["grade_id"])
        if row is None:
            super()._get_score(cell, resources)
            return
        cell.metadata.nbgrader["score"] = row.score
        cell.metadata.nbgrader["points"] = row.max_score
