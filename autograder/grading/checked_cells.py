"""nbgrader's OverwriteCells, with the notebook's cells read in two queries, not two per cell.

nbgrader's sanitising step `OverwriteCells` puts back, in every graded or locked cell of a
hand-in, what the instructor's version says (its type, its locked flag, its points, its
checksum; a locked cell's source). It asks the gradebook for that cell's source cell, and
for a grade cell its graded cell: two queries a cell, for every cell of every hand-in.
`OverwriteCellsAtOnce` (the grader's preparation uses it in its place) reads the
notebook's source cells and graded cells once, in one query each, and answers those
lookups from them: the same rows (the same objects, from the same session), resolved as
nbgrader resolves them (`first_of`: a grade cell's before a task cell's of the same
name). A cell it did not read is looked up by nbgrader's own code, which raises what it
raises; everything else the step asks of the gradebook goes to the gradebook.
"""

from __future__ import annotations

from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Assignment, BaseCell, Gradebook, Notebook, SourceCell
from nbgrader.preprocessors import OverwriteCells

from autograder.grading.saved_grades import GRADE_CELL_TYPES, first_of


class NotebookCells:
    """A gradebook as `OverwriteCells` sees it, with one notebook's source and graded cells
    read at once (`find_source_cell`, `find_graded_cell`); the rest is `gradebook`'s."""

    def __init__(self, gradebook: Gradebook, notebook: str, assignment: str) -> None:
        self.gradebook = gradebook
        self.notebook = (notebook, assignment)

        def of_notebook(cls: Any) -> list[Any]:
            return list(
                gradebook.db.query(cls)
                .join(Notebook, Notebook.id == cls.notebook_id)
                .join(Assignment, Assignment.id == Notebook.assignment_id)
                .filter(Notebook.name == notebook, Assignment.name == assignment)
            )

        self.source_cells = {cell.name: cell for cell in of_notebook(SourceCell)}
        self.graded_cells = first_of(of_notebook(BaseCell), GRADE_CELL_TYPES)

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> Any:
        if (notebook, assignment) == self.notebook and name in self.source_cells:
            return self.source_cells[name]
        return self.gradebook.find_source_cell(name, notebook, assignment)

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> Any:
        if (notebook, assignment) == self.notebook and name in self.graded_cells:
            return self.graded_cells[name]
        return self.gradebook.find_graded_cell(name, notebook, assignment)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.gradebook, name)


class OverwriteCellsAtOnce(OverwriteCells):  # type: ignore[misc]
    """`OverwriteCells`, its lookups answered from the notebook's cells read at once."""

    gradebook: Any  # the Gradebook `preprocess` opened for this notebook

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, cell_index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        # `preprocess` opened this notebook's Gradebook as `self.gradebook` (and closes
        # that object when its cells are done): the first cell reads the notebook's cells
        if not isinstance(self.gradebook, NotebookCells):
            self.gradebook = NotebookCells(self.gradebook, self.notebook_id, self.assignment_id)
        return super().preprocess_cell(cell, resources, cell_index)  # type: ignore[no-any-return]
