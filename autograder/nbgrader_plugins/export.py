"""`nbgrader export` of released assignments only (the course config sets this plugin).

`make assign` records every assignment of the course in the gradebook, released or not;
nbgrader's CSV export would give every student a zero for each one not yet released.
Released means: in the exchange's outbound folder (`nbgrader release_assignment`), or
handed in at least once (e.g. collected from an LMS with `nbgrader zip_collect`).
`nbgrader export --assignment=...` still exports exactly what it names.

nbgrader's columns, written through `core.spreadsheet.InertWriter` (quoted where a name
holds a comma; a name or id that a spreadsheet would run as a formula written as text),
and one more: `needs_review`, the parts whose manual grade awaits the teacher (a written
answer not graded yet, or changed since it was graded: `grading/manual_review`), which
`score` leaves out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.core.spreadsheet import InertWriter

DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"
COLUMNS = [
    "assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
    "raw_score", "late_submission_penalty", "score", "max_score", "needs_review",
]  # fmt: skip


def released_assignments(gradebook: Any, exchange_root: str, course_id: str) -> list[str]:
    """The gradebook's assignments that were released or handed in, by name."""
    outbound = Path(exchange_root) / course_id / "outbound"
    return [
        a.name
        for a in gradebook.assignments
        if (outbound / a.name).is_dir() or a.num_submissions > 0
    ]


def awaiting_review(submission: Any) -> list[str]:
    """`notebook/part` of each manually graded part of `submission` with no manual grade
    yet that nbgrader marks as needing one."""
    return [
        f"{notebook.name}/{grade.name}"
        for notebook in submission.notebooks
        for grade in notebook.grades
        if grade.needs_manual_grade and grade.manual_score is None
    ]


def export_row(gradebook: Any, assignment: Any, student: Any) -> list[object]:
    """One student's row for one assignment (zeros when they handed nothing in)."""
    head = [assignment.name, assignment.duedate, None, student.id, student.last_name,
            student.first_name, student.email]  # fmt: skip
    try:
        submission = gradebook.find_submission(assignment.name, student.id)
    except MissingEntry:
        return [*head, 0.0, 0.0, 0.0, assignment.max_score, ""]
    head[2] = submission.timestamp
    penalty = submission.late_submission_penalty
    score = max(0.0, submission.score - penalty)
    waiting = " ".join(awaiting_review(submission))
    return [*head, submission.score, penalty, score, assignment.max_score, waiting]


class ReleasedExport(CsvExportPlugin):  # type: ignore[misc]
    """nbgrader's CSV export, of the released assignments unless told which."""

    def export(self, gradebook: Any) -> None:
        named: list[str] = [str(a) for a in getattr(self, "assignment")]  # noqa: B009
        if not named:
            exchange = str(self.config.Exchange.get("root", DEFAULT_EXCHANGE))
            course_id = str(self.config.CourseDirectory.get("course_id", ""))
            named = released_assignments(gradebook, exchange, course_id)
            unreleased = sorted({a.name for a in gradebook.assignments} - set(named))
            if unreleased:
                self.log.info("Not released, not exported: %s", ", ".join(unreleased))
            if not named:
                self.log.warning("No assignment is released yet: nothing to export")
        students = {str(s) for s in getattr(self, "student")}  # noqa: B009
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="") as handle:
            writer = InertWriter(handle, lineterminator="\n")
            writer.writerow(COLUMNS)
            for assignment in gradebook.assignments:
                if assignment.name not in named:
                    continue
                for student in gradebook.students:
                    if not students or student.id in students:
                        writer.writerow(export_row(gradebook, assignment, student))
