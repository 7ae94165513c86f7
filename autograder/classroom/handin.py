"""What the gradebook says about hand-ins, and what happens to one that is refused.

- `GradebookFacts`: each assignment's notebooks and due date, and the roster: the
  gradebook's students when the course keeps one (`c.Autograde.create_student = False`,
  nbgrader's own switch for "only known students"), else None (anyone may hand in).
- `lateness`: how late an arrival is against a due date, as the service prints it.
- `keep_refused`: every refused hand-in is kept in the course's private state,
  `.autograder/refused/<inbound name>/` (mode 0700), with `reason.txt` and, when it passed
  the safety checks, the copy that was refused (`handin/`): nothing that arrived is lost.
- `tell_student`: a feedback page for the refused hand-in, released where `nbgrader
  fetch_feedback` looks for that hand-in (the exchange's `feedback/<md5(secret +
  notebook)>.html`), saying what was wrong and which hand-in stands.
"""

from __future__ import annotations

import datetime
import html
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from autograder.sandbox.workers import STATE_DIR

REFUSED_DIR = "refused"


@dataclass(frozen=True)
class GradebookFacts:
    """What the collector needs from the gradebook, read in one look."""

    notebooks: dict[str, list[str]]  # assignment -> its notebooks' names
    duedates: dict[str, datetime.datetime | None]  # assignment -> due (UTC, naive) or None
    roster: frozenset[str] | None  # who may hand in (None: anyone)


def read_facts(coursedir: CourseDirectory, rostered: bool) -> GradebookFacts:
    """The gradebook's assignments, due dates and (when `rostered`) students."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        assignments = gb.assignments
        return GradebookFacts(
            {a.name: [n.name for n in a.notebooks] for a in assignments},
            {a.name: a.duedate for a in assignments},
            frozenset(s.id for s in gb.students) if rostered else None,
        )


def utc_text(moment: datetime.datetime) -> str:
    """A naive UTC time as the service prints it."""
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def lateness(arrived: datetime.datetime, due: datetime.datetime | None) -> str:
    """'' when on time (or no due date), else 'LATE by 1 h 05 min (due ...)'."""
    if due is None or arrived <= due:
        return ""
    seconds = int((arrived - due).total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        amount = f"{days} d {hours} h"
    elif hours:
        amount = f"{hours} h {minutes:02d} min"
    else:
        amount = f"{minutes} min {seconds:02d} s"
    return f"LATE by {amount} (due {utc_text(due)})"


def private_folder(course: Path, name: str) -> Path:
    """`.autograder/<name>/` in the course, created private to the grader (0700)."""
    folder = course / STATE_DIR / name
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    return folder


def keep_refused(course: Path, inbound_name: str, reason: str, copy: Path | None) -> Path:
    """Keep a refused hand-in's reason (and its checked copy, moved from `copy`) in the
    course's private state; the folder kept."""
    folder = private_folder(course, REFUSED_DIR) / inbound_name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(mode=0o700)
    (folder / "reason.txt").write_text(reason + "\n", encoding="utf-8")
    if copy is not None:
        os.rename(copy, folder / "handin")
    return folder


def refusal_page(assignment: str, arrived: str, reason: str, standing: str | None) -> str:
    """The feedback page a student fetches for a hand-in that was not graded."""
    stands = (
        f"Your hand-in that arrived {html.escape(standing)} stands: it is the one graded."
        if standing
        else "No hand-in of yours has been graded for this assignment yet."
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{html.escape(assignment)}: hand-in not graded</title></head><body>\n"
        f"<h1>{html.escape(assignment)}: this hand-in was not graded</h1>\n"
        f"<p>The hand-in that arrived {html.escape(arrived)} was refused:</p>\n"
        f"<p><strong>{html.escape(reason)}</strong></p>\n"
        f"<p>{stands}</p>\n"
        "<p>Fix what is said above and submit again from the Assignments tab.</p>\n"
        "</body></html>\n"
    )


def tell_student(outbound: Path, secret: str, notebooks: list[str], page: str) -> int:
    """Release `page` as the feedback of each notebook of a hand-in whose
    submission_secret.txt is `secret`; how many pages were released."""
    from nbgrader.utils import notebook_hash

    if not secret or not notebooks:
        return 0
    if not outbound.is_dir():
        outbound.mkdir(mode=0o711, parents=True)
    for notebook in notebooks:
        target = outbound / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"
        staging = target.with_name(f".{target.name}.part")
        staging.write_text(page, encoding="utf-8")
        staging.chmod(0o644)
        os.replace(staging, target)
    return len(notebooks)
