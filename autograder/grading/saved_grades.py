"""nbgrader's SaveAutoGrades, with two queries and one commit where it made one of each per cell.

`SaveAutoGradesAtOnce` (the grader's recording uses it in place of nbgrader's
`SaveAutoGrades`) writes the very same auto scores, review flags and auto comments,
resolved as nbgrader resolves them (`first_of`: a grade cell's before a task cell's of the
same name; a solution cell's comment before a task cell's), but reads the notebook's
grades and comments in one query each and commits once, after the last cell. The
gradebook ends the same, and a recording that fails halfway leaves none of its grades
saved. A cell it cannot resolve so is looked up by nbgrader's own code, which raises what
it raises. (`GetGradesAtOnce`, the feedback pages' counterpart, reads the same way.)
"""

from __future__ import annotations

from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import BaseCell, Comment, Grade, Gradebook
from nbgrader.preprocessors import SaveAutoGrades

GRADE_CELL_TYPES = ("GradeCell", "TaskCell")  # find_grade's order
COMMENT_CELL_TYPES = ("SolutionCell", "TaskCell")  # find_comment's order


def first_of(rows: list[Any], order: tuple[str, ...]) -> dict[str, Any]:
    """cell name -> the row of the first cell type in `order` that has that name."""
    found: dict[str, Any] = {}
    for cell_type in reversed(order):
        found.update({row.name: row for row in rows if row.type == cell_type})
    return found


class SaveAutoGradesAtOnce(SaveAutoGrades):  # type: ignore[misc]
    """`SaveAutoGrades`, with the notebook's grades and comments read at once, committed once."""

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
                gb.db.query(Grade, BaseCell.name, BaseCell.type)
                .join(BaseCell, BaseCell.id == Grade.cell_id)
                .filter(Grade.notebook_id == notebook.id)
                .all()
            )
            comment_rows = (
                gb.db.query(Comment, BaseCell.name, BaseCell.type)
                .join(BaseCell, BaseCell.id == Comment.cell_id)
                .filter(Comment.notebook_id == notebook.id)
                .all()
            )
            self.grades = first_of(grade_rows, GRADE_CELL_TYPES)
            self.comments = first_of(comment_rows, COMMENT_CELL_TYPES)
            for index, cell in enumerate(nb.cells):
                nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
            gb.db.commit()
        return nb, resources

    def _add_score(self, cell: NotebookNode, resources: ResourcesDict) -> None:
        row = self.grades.get(cell.metadata["nbgrader"]["grade_id"])
        if row is None:
            super()._add_score(cell, resources)  # nbgrader's lookup, and its error
            return
        grade = row.Grade
        grade.auto_score, _ = utils.determine_grade(cell, self.log)
        # a manual grade given before, or no auto score: a person must look (as nbgrader)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell: NotebookNode, resources: ResourcesDict) -> None:
        row = self.comments.get(cell.metadata["nbgrader"]["grade_id"])
        if row is None:
            super()._add_comment(cell, resources)
            return
        unchanged = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
        no_response = unchanged and not utils.is_task(cell)
        row.Comment.auto_comment = "No response." if no_response else None
