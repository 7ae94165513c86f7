"""How late a hand-in was, decided once: for the service's log, the report and the feedback.

`lateness` and `late_text` say it in words (the service and the report); `NoteLateness`
puts it on the feedback page.

nbgrader's feedback shows a late hand-in only through its penalty, and nothing when the
course's `c.LateSubmissionPlugin.penalty_method` is "none". This preprocessor (listed in
`c.GenerateFeedback.preprocessors` after GetGrades) puts a line at the top of the page:
how long after the gradebook's due date the hand-in arrived (the arrival time the
exchange collector records, `autograder.service.collect`).
"""

from __future__ import annotations

import datetime
from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor


def utc_text(moment: datetime.datetime) -> str:
    """A naive UTC time as the service prints it."""
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def late_text(seconds: float) -> str:
    """How late, in words: '1 h 05 min', '2 d 3 h', '4 min 09 s'."""
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {seconds:02d} s"


def lateness(arrived: datetime.datetime, due: datetime.datetime | None) -> str:
    """'' when on time (or no due date), else 'LATE by 1 h 05 min (due ...)'."""
    if due is None or arrived <= due:
        return ""
    return f"LATE by {late_text((arrived - due).total_seconds())} (due {utc_text(due)})"


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
