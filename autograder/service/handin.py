"""What the gradebook says about hand-ins, and what happens to one that is refused.

- `GradebookFacts`: each assignment's notebooks and due date, and the roster: the
  gradebook's students when the course keeps one (`c.Autograde.create_student = False`,
  nbgrader's own switch for "only known students"), else None (anyone may hand in).
- `record_arrival`: the arrival (the filesystem's time) as the submission time, refusing a
  claimed time far from it; `check_gradable`: every notebook of the assignment there and
  readable, else `Ungradable` (with the checked copy);
- how late an arrival is: `autograder.nbgrader_plugins.lateness`, decided there once.
- `Refusals.refuse`: every refused hand-in is kept in the course's private state,
  `.autograder/refused/<inbound name>/` (mode 0700), with `reason.txt` and, when it passed
  the safety checks, the copy that was refused (`handin/`): nothing that arrived is lost;
  and its student gets a feedback page, released where `nbgrader fetch_feedback` looks for
  that hand-in (the exchange's `feedback/<md5(secret + notebook)>.html`), saying what was
  wrong and which hand-in stands.
"""

from __future__ import annotations

import datetime
import html
import os
import pwd
import shutil
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from autograder.grading.budgets import Budgets
from autograder.grading.preparation import read_submitted_notebook
from autograder.grading.submissions import SubmissionError, open_no_follow, read_file
from autograder.nbgrader_plugins.lateness import utc_text
from autograder.sandbox.workers import STATE_DIR

REFUSED_DIR = "refused"
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f UTC"  # how `nbgrader submit` writes a timestamp
MAX_TOLD = 50  # notebooks of a refused hand-in given a feedback page, at most


def owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def arrival_time(ns: int) -> datetime.datetime:
    """A filesystem time (ns since the epoch) as nbgrader's naive UTC."""
    moment = datetime.datetime.fromtimestamp(ns / 1e9, datetime.UTC)
    return moment.replace(tzinfo=None)


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


class Ungradable(SubmissionError):
    """A hand-in that passed the safety checks but cannot be graded; `copy` is its checked
    copy, kept with the reason."""

    def __init__(self, reason: str, copy: Path) -> None:
        super().__init__(reason)
        self.copy = copy


def record_arrival(
    copy: Path, claimed: datetime.datetime, arrived_ns: int, tolerance: float
) -> None:
    """Refuse a hand-in whose claimed time is more than `tolerance` seconds from its
    arrival; else write the arrival into the `copy`'s timestamp.txt (what nbgrader's late
    penalties read)."""
    arrived = arrival_time(arrived_ns)
    if abs((arrived - claimed).total_seconds()) > tolerance:
        raise SubmissionError(
            f"named and stamped {utc_text(claimed)} but arrived {utc_text(arrived)} "
            "(the filesystem's time); refused"
        )
    (copy / "timestamp.txt").write_text(f"{arrived:{NBGRADER_TIME}}")


def check_gradable(copy: Path, notebooks: list[str], budgets: Budgets) -> None:
    """Ungradable (with the `copy`) unless each of the assignment's `notebooks` is there
    and reads as a notebook."""
    found = sorted(p.name for p in copy.glob("*.ipynb"))
    try:
        for notebook in notebooks:
            path = copy / f"{notebook}.ipynb"
            if not path.is_file():
                raise SubmissionError(
                    f"{notebook}.ipynb is missing (found {', '.join(found) or 'no notebook'};"
                    " rename the notebook to the assignment's name and submit again)"
                )
            read_submitted_notebook(path, budgets)
    except SubmissionError as error:
        raise Ungradable(f"cannot be graded: {error}", copy) from None


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


@dataclass(frozen=True)
class Refusals:
    """Where a course keeps refused hand-ins (`course`) and tells students (`outbound`)."""

    course: Path
    outbound: Path  # the exchange's feedback folder
    check_owner: bool  # only a folder owned by the student it names gets a page

    def refuse(
        self,
        folder: Path,
        student: str,
        assignment: str,
        reason: Exception,
        copy: Path | None,
        standing: datetime.datetime | None,
    ) -> list[str]:
        """Keep the inbound `folder`'s refusal (and its checked `copy`), tell its student
        which hand-in stands (`standing`: when it arrived); the lines to print."""
        lines: list[str] = []
        try:
            kept = keep_refused(self.course, folder.name, str(reason), copy)
            lines.append(f"  kept with its reason in {kept}")
        except OSError as failure:
            lines.append(f"  FAILED to keep the refused hand-in: {failure}")
        if copy is not None and copy.exists():
            shutil.rmtree(copy, ignore_errors=True)
        try:
            told = self._tell(folder, student, assignment, str(reason), standing)
        except (SubmissionError, OSError, UnicodeDecodeError) as failure:
            return [*lines, f"  the student was not told: {failure}"]
        if told:
            lines.append(f"  the student was told in {told} feedback page(s)")
        return lines

    def _tell(
        self,
        folder: Path,
        student: str,
        assignment: str,
        reason: str,
        standing: datetime.datetime | None,
    ) -> int:
        """Release the refusal page for the notebooks in `folder`; how many pages."""
        fd = open_no_follow(folder, os.O_RDONLY | os.O_DIRECTORY, "not a folder one may open")
        try:
            info = os.fstat(fd)
            if self.check_owner and owner_name(info.st_uid) != student:
                return 0  # a folder under someone else's name: its maker is not told
            secret = read_file(Path("submission_secret.txt"), 1000, dir_fd=fd).decode()
            notebooks = sorted(
                entry.name.removesuffix(".ipynb")
                for entry in os.scandir(fd)
                if entry.name.endswith(".ipynb")
            )[:MAX_TOLD]
        finally:
            os.close(fd)
        arrived = utc_text(arrival_time(info.st_ctime_ns))
        page = refusal_page(assignment, arrived, reason, utc_text(standing) if standing else None)
        return tell_student(self.outbound, secret, notebooks, page)
