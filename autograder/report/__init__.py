"""`autograder report [ASSIGNMENT]`: what the class got wrong, to decide what to re-teach.

Reads the course's gradebook (every score nbgrader recorded, manual grades included) and
the diagnoses `autograder grade` stored beside it (`autograder.grading.diagnoses`), of the
released assignments only (or the one named), and writes, under `reports/`:
- `<scope>.html`: the misconceptions most worth re-teaching (root causes, ranked by how
  many students made them, with an example formula and who made them); each part by its
  label (`Part D: dL/da`) with its root causes in plain words (`feedback.kinds`), the
  formulas written (in the given names, so one count over learners with their own
  numbers) and its follow-ons apart; each student's mistakes; progress. Plots embedded,
  with alt text;
- `<scope>.csv` (parts and mistakes), `<scope>_students.csv` (each student's mistakes),
  `<scope>_progress.csv` (each student's scores).
`<scope>` is the assignment's name, or `course`. A failed part with no stored diagnosis
(graded by `nbgrader autograde`, or a stale store) counts under "no diagnosis recorded".

Modules: `gather` (the facts), `page` (HTML and plots), `tables` (CSV).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from autograder.report.gather import (
    COURSE_SCOPE,
    NO_DIAGNOSIS,
    ClassReport,
    NothingGraded,
    ReportError,
    build,
)
from autograder.report.page import render_html
from autograder.report.tables import write_csvs

__all__ = [
    "COURSE_SCOPE",
    "NO_DIAGNOSIS",
    "ClassReport",
    "NothingGraded",
    "ReportError",
    "build",
    "render_html",
    "write_csvs",
    "write_report",
]


def write_report(course_dir: Path, assignment: str | None, out: Path) -> list[Path]:
    """Build and write the report; returns the files written."""
    report = build(course_dir, assignment)
    if not any(part.submitted for part in report.parts):
        raise NothingGraded("nothing is graded yet: run `autograder grade` first")
    if out.exists() and not out.is_dir():
        raise ReportError(f"cannot write the report in {out}: it is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        # Written whole beside the old report first, then moved over it file by file: a
        # failure part-way leaves the old report as it was, never half of each.
        with tempfile.TemporaryDirectory(dir=out, prefix=".writing-") as staging:
            page = Path(staging) / f"{report.scope}.html"
            page.write_text(render_html(report))
            staged = [page, *write_csvs(report, Path(staging))]
            for path in staged:
                os.replace(path, out / path.name)
    except OSError as error:
        raise ReportError(f"cannot write the report in {out}: {error.strerror or error}") from None
    return [out / path.name for path in staged]
