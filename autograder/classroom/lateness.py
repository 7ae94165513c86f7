"""`NoteLateness`: the feedback page says how late a hand-in was.

nbgrader's feedback shows a late hand-in only through its penalty, and nothing when the
course's `c.LateSubmissionPlugin.penalty_method` is "none". This preprocessor (listed in
`c.GenerateFeedback.preprocessors` after GetGrades) puts a line at the top of the page:
how long after the gradebook's due date the hand-in arrived (the arrival time the
exchange collector records, `autograder.classroom.collect`).
"""

from __future__ import annotations

from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.classroom.handin import late_text, utc_text


def late_line(seconds: float, due: Any) -> str:
    """The feedback's sentence for a hand-in `seconds` after `due`."""
    return f"**Handed in late:** {late_text(seconds)} after the due date ({utc_text(due)})."


class NoteLateness(NbGraderPreprocessor):  # type: ignore[misc]
    """Put 'Handed in late: ...' at the top of a late hand-in's feedback."""

    def preprocess(self, nb: Any, resources: ResourcesDict) -> tuple[Any, ResourcesDict]:
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            seconds, due = float(submission.total_seconds_late), submission.duedate
        if seconds > 0 and due is not None:
            nb.cells.insert(0, nbformat.v4.new_markdown_cell(late_line(seconds, due)))
        return nb, resources
