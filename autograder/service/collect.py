"""Collecting submissions from nbgrader's exchange into submitted/, refusing unsafe folders.

`nbgrader submit` leaves `<Exchange.root>/<course_id>/inbound/student+assignment+timestamp
+random/`, a folder the student owns. `ExchangeCollector.look` does what `nbgrader collect
--update` does for every served assignment at once: the newest submission of each student
and assignment is copied to `submitted/<student>/<assignment>/` when its timestamp is newer
than the one collected there. It differs where nbgrader's copy is unsafe: nbgrader follows
symbolic links (a student's link to a file only the instructor may read would be copied
into submitted/ and could reach feedback) and only warns when the folder's owner is not the
student it names. Here a submission is refused, with the reason, when its folder holds a
link, a special file, an unsafe name, files over the budgets (`submissions.check_folder`),
files owned by someone else or hard-linked, or when its owner is not the student (unless
`c.ExchangeCollect.check_owner = False`, for containers where every user is jovyan). Files
are read through open folder descriptors with O_NOFOLLOW, copied into a temporary folder
beside the destination and renamed into place, so no grader sees half a submission.
A folder is collected once it is complete (timestamp.txt and submission_secret.txt, which
`nbgrader submit` writes last) and unchanged over two looks; each version of a student's
newest submission is decided, and reported, once.

The submission time is when the hand-in arrived, as the filesystem says it: the newest
status change (ctime) of the folder and of everything in it, which no user can set back.
It is written to the collected timestamp.txt (what nbgrader's late penalties read), and a
hand-in whose name and timestamp.txt claim a time more than ARRIVAL_TOLERANCE away from its
arrival is refused. A hand-in from a student not on the roster, or one that cannot be graded
(a notebook of the assignment missing or misnamed, or not a readable notebook) is refused
too, so it never replaces the last good one. Every refused hand-in is kept with its reason
in the course's private state, and its student is told in a feedback page
(`autograder.service.handin` holds those rules; this module, a little over 400 lines,
keeps the whole safe copy in one place so it can be read as one).
"""

from __future__ import annotations

import copy
import datetime
import fnmatch
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc
from traitlets.config import Config

from autograder.grading.budgets import Budgets
from autograder.grading.submissions import (
    MAX_DEPTH,
    SubmissionError,
    check_folder,
    check_student_id,
    check_student_name,
    open_no_follow,
    read_file,
)
from autograder.nbgrader_plugins.lateness import lateness, utc_text
from autograder.service.handin import (
    GradebookFacts,
    Refusals,
    Ungradable,
    arrival_time,
    check_gradable,
    owner_name,
    read_facts,
    record_arrival,
)

COMPLETE = ("timestamp.txt", "submission_secret.txt")  # written last by `nbgrader submit`
INCOMPLETE_AFTER = 30.0  # seconds an unchanged folder may stay incomplete before it is reported
KNOWN_REFRESH = 10.0  # seconds between gradebook looks for an unknown assignment
ARRIVAL_TOLERANCE = 300.0  # seconds a hand-in's claimed time may differ from its arrival


@dataclass(frozen=True)
class Inbound:
    """One folder in the exchange's inbound/, as its name describes it."""

    name: str
    student: str
    assignment: str
    timestamp: datetime.datetime  # in UTC, without tzinfo, as nbgrader's parse_utc gives it

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}"


def parse_inbound_name(name: str) -> Inbound | None:
    """`student+assignment+timestamp[+random]` as nbgrader reads it (the student id may hold
    '+'); None when the name is not one."""
    parts = name.rsplit("+", 3)
    if len(parts) < 3:
        return None
    try:
        timestamp = parse_utc(parts[2])
    except (ValueError, OverflowError):
        return None
    return Inbound(name, parts[0], parts[1], timestamp)


@dataclass
class CopyState:
    """What one copy has spent of the submission's budgets."""

    owner: int | None  # every entry's owner must be this uid (None: not checked)
    arrived_ns: int = 0  # the newest status change seen, in ns since the epoch
    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


class ExchangeCollector:
    """Collects an nbgrader course's exchange inbound/ into its submitted/ folder."""

    def __init__(
        self,
        config: Config,
        known_assignments: Callable[[], set[str]],
        assignments: list[str] | None = None,
    ) -> None:
        """`config`: the course's nbgrader config (`sandbox.load_config`); `assignments`:
        only these (default: every assignment the gradebook knows)."""
        merged = copy.deepcopy(config)
        merged.ExchangeCollect.merge(merged.CollectApp)  # nbgrader's older name, honoured
        self.coursedir = CourseDirectory(config=merged)
        exchange = ExchangeCollect(coursedir=self.coursedir, config=merged)
        self.check_owner = bool(exchange.check_owner)
        self.rostered = not bool(merged.Autograde.get("create_student", True))
        self.before_duedate = bool(exchange.before_duedate)
        self.inbound = Path(exchange.root) / self.coursedir.course_id / "inbound"
        outbound = self.inbound.parent / "feedback"  # where fetch_feedback looks
        self.refusals = Refusals(Path(self.coursedir.root), outbound, self.check_owner)
        self.budgets = Budgets(config=merged)
        self.served = set(assignments or [])
        self._known_assignments = known_assignments
        self._known: set[str] = set()
        self._known_at = -KNOWN_REFRESH
        self._decided: dict[str, tuple[tuple[object, ...], str]] = {}  # name -> version, outcome
        self._pending: dict[str, tuple[tuple[object, ...], float]] = {}  # name -> version, since
        self._reported: set[str] = set()
        self._names: dict[str, Inbound | None] = {}  # inbound name -> parsed (names never change)
        self._facts: GradebookFacts | None = None  # read once per look that decides any
        self.submitted_at: dict[str, float] = {}  # student/assignment -> its arrival time
        self.seen_new = False  # the last look saw a folder new or changed: look again soon

    def facts(self) -> GradebookFacts:
        """The gradebook's notebooks, due dates and roster, read once per look that decides
        a hand-in (a due date or a student added meanwhile counts at the next look; a rush
        of hand-ins costs one read, not one per hand-in)."""
        if self._facts is None:
            self._facts = read_facts(self.coursedir, self.rostered)
        return self._facts

    def problem(self) -> str | None:
        """Why this course's exchange cannot be collected from (None: it can)."""
        if not self.coursedir.course_id:
            return "the course config sets no CourseDirectory.course_id"
        if self.before_duedate:
            return (
                "ExchangeCollect.before_duedate is set: collecting the last submission "
                "before the due date is not supported here; use `nbgrader collect`"
            )
        return None

    def once(self, message: str) -> list[str]:
        """[message] the first time it is said, then []."""
        if message in self._reported:
            return []
        self._reported.add(message)
        return [message]

    def _is_served(self, assignment: str) -> tuple[bool, list[str]]:
        if self.served:
            if assignment in self.served:
                return True, []
            return False, self.once(f"exchange: {assignment} is not served here; left in inbound")
        if assignment not in self._known and time.monotonic() - self._known_at > KNOWN_REFRESH:
            self._known = self._known_assignments()
            self._known_at = time.monotonic()
        if assignment in self._known:
            return True, []
        return False, self.once(
            f"exchange: ignoring submissions of {assignment!r}: not in the gradebook"
        )

    def look(self) -> list[str]:
        """Collect what is new in inbound/; one line per thing to tell the instructor."""
        try:
            names = [entry.name for entry in os.scandir(self.inbound)]
        except FileNotFoundError:
            return self.once(f"exchange: no {self.inbound} (yet): grading submitted/ alone")
        except OSError as error:
            return self.once(f"exchange: cannot read {self.inbound} ({error.strerror})")
        messages: list[str] = []
        self._facts = None
        self.seen_new = False
        by_key: dict[str, list[Inbound]] = {}
        for name in names:
            if name not in self._names:
                self._names[name] = parse_inbound_name(name)
            record = self._names[name]
            if record is None:
                messages += self.once(
                    f"exchange: ignoring inbound/{name}: not student+assignment+timestamp"
                )
                continue
            served, notes = self._is_served(record.assignment)
            messages += notes
            if served:
                by_key.setdefault(record.key, []).append(record)
        for _, records in sorted(by_key.items()):
            # The newest arrival first (never the newest claim: names can lie); past a
            # refused one (a forgery under the student's name, say), the next newest, so
            # no one can block a student's hand-ins.
            for record in sorted(records, key=self._arrived_ns, reverse=True):
                outcome, notes = self._consider(record)
                messages += notes
                if outcome != "refused":
                    break
        return messages

    def _arrived_ns(self, record: Inbound) -> int:
        """When the inbound folder last changed status (0: gone), in ns."""
        try:
            return os.lstat(self.inbound / record.name).st_ctime_ns
        except OSError:
            return 0

    def _consider(self, record: Inbound) -> tuple[str, list[str]]:
        """Decide one inbound folder, once per version: ("wait" | "refused" | "done",
        the lines to print)."""
        folder = self.inbound / record.name
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            return "refused", []  # gone: the next newest counts
        version = (info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        decided = self._decided.get(record.name)
        if decided is not None and decided[0] == version:
            return decided[1], []
        pending = self._pending.get(record.name)
        if pending is None or pending[0] != version:  # new or changed: look again next time
            self._pending[record.name] = (version, time.monotonic())
            self.seen_new = True
            return "wait", []
        waited = time.monotonic() - pending[1]
        complete = all((folder / name).is_file() for name in COMPLETE)
        if stat.S_ISDIR(info.st_mode) and not complete and waited < INCOMPLETE_AFTER:
            return "wait", []  # `nbgrader submit` may still be writing it
        del self._pending[record.name]
        where = f"inbound/{record.name}"
        try:
            collected = self.collect(record)
        except (SubmissionError, OSError) as error:
            self._decided[record.name] = (version, "refused")
            kind = "REFUSED" if isinstance(error, SubmissionError) else "FAILED to collect"
            return "refused", [
                f"{kind} {record.key} ({where}): {error}",
                *self.refused(record, error),
            ]
        self._decided[record.name] = (version, "done")
        if collected is None:
            return "done", []
        arrived = arrival_time(collected.arrived_ns)
        self.submitted_at[record.key] = collected.arrived_ns / 1e9
        line = f"collected {record.key} arrived {utc_text(arrived)}"
        late = lateness(arrived, self.facts().duedates.get(record.assignment))
        if late:
            line += f", {late}"
        if collected.skipped:
            left_out = ", ".join(collected.skipped)
            line += f" (left out, over CourseDirectory.max_file_size: {left_out})"
        return "done", [line]

    def refused(self, record: Inbound, error: Exception) -> list[str]:
        """Keep a refused hand-in with its reason and tell its student; the lines to print."""
        try:
            standing = self.existing_timestamp(self.destination(record))
        except (SubmissionError, OSError):
            standing = None
        copy = error.copy if isinstance(error, Ungradable) else None
        return self.refusals.refuse(
            self.inbound / record.name, record.student, record.assignment, error, copy, standing
        )

    def destination(self, record: Inbound) -> Path:
        step = self.coursedir.submitted_directory
        return Path(self.coursedir.format_path(step, record.student, record.assignment))

    def existing_timestamp(self, dest: Path) -> datetime.datetime | None:
        """The timestamp of what is collected at `dest` (None: nothing, or no timestamp)."""
        try:
            text = (dest / "timestamp.txt").read_text().strip()
        except FileNotFoundError:
            return None
        if not text:
            return None
        try:
            stamp: datetime.datetime = parse_utc(text)
        except ValueError:
            raise SubmissionError(f"{dest}/timestamp.txt is not a timestamp") from None
        return stamp

    def collect(self, record: Inbound) -> CopyState | None:
        """Copy `record` into submitted/ if newer than what is there; None when not newer.

        Raises SubmissionError (refused, with why) or OSError; nothing is left half-copied.
        """
        check_student_name(record.student)
        roster = self.facts().roster
        if roster is not None and record.student not in roster:
            raise SubmissionError(
                f"{record.student} is not on the class roster (the gradebook's students, "
                "as c.Autograde.create_student = False asks); refused"
            )
        source = self.inbound / record.name
        if not all((source / name).is_file() for name in COMPLETE):
            raise SubmissionError(
                f"incomplete: no {' or '.join(COMPLETE)} after {INCOMPLETE_AFTER:g} s"
            )
        dest = self.destination(record)
        existing = self.existing_timestamp(dest)
        if existing is not None and arrival_time(self._arrived_ns(record)) <= existing:
            return None  # arrived before what is collected (whatever its name claims)
        # What is checked below is what is copied.
        fd = open_no_follow(source, os.O_RDONLY | os.O_DIRECTORY, "not a folder one may open")
        try:
            return self._collect_open(fd, record, dest)
        finally:
            os.close(fd)

    def _collect_open(self, fd: int, record: Inbound, dest: Path) -> CopyState:
        owner = os.fstat(fd).st_uid
        if self.check_owner and owner_name(owner) != record.student:
            raise SubmissionError(
                f"the folder is owned by {owner_name(owner)}, not by {record.student} "
                "(set c.ExchangeCollect.check_owner = False where every user is jovyan)"
            )
        # Links, special files, names and budgets, refused with why (then again as copied).
        check_folder(self.inbound / record.name, self.budgets)
        dest.parent.mkdir(parents=True, exist_ok=True)
        check_student_id(dest.parent)
        staging = dest.parent / f".collecting-{record.assignment}-{secrets.token_hex(4)}"
        staging.mkdir(mode=0o700)
        try:
            state = CopyState(owner if self.check_owner else None, os.fstat(fd).st_ctime_ns)
            self._copy_folder(fd, staging, Path("."), state)
            state.arrived_ns = max(state.arrived_ns, os.fstat(fd).st_ctime_ns)
            self._check_timestamp(staging, record)
            record_arrival(staging, record.timestamp, state.arrived_ns, ARRIVAL_TOLERANCE)
            expected = self.facts().notebooks.get(record.assignment, [])
            check_gradable(staging, expected, self.budgets)
            staging.chmod(0o755)
            replaced = None
            if os.path.lexists(dest):
                replaced = dest.parent / f".replaced-{record.assignment}-{secrets.token_hex(4)}"
                os.rename(dest, replaced)
            os.rename(staging, dest)
        except Ungradable:
            raise  # the caller keeps the copy with the reason
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if replaced is not None:
            shutil.rmtree(replaced, ignore_errors=True)
        return state

    @staticmethod
    def _check_timestamp(staging: Path, record: Inbound) -> None:
        stamp = (staging / "timestamp.txt").read_text().strip()
        try:
            same = parse_utc(stamp) == record.timestamp
        except ValueError:
            same = False
        if not same:
            raise SubmissionError(f"timestamp.txt says {stamp[:40]!r}, unlike the folder's name")

    def _copy_folder(self, fd: int, dest: Path, where: Path, state: CopyState) -> None:
        """Copy the open folder `fd` into `dest`, as nbgrader's copy (ignore, include,
        max_file_size), never following a link, within the budgets."""
        coursedir = self.coursedir
        if len(where.parts) > MAX_DEPTH:
            raise SubmissionError(f"{where}: folders nested over {MAX_DEPTH} deep")
        for entry in sorted(os.scandir(fd), key=lambda e: e.name):
            name, path = entry.name, where / entry.name
            if any(fnmatch.fnmatch(name, glob) for glob in coursedir.ignore or []):
                continue
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            state.arrived_ns = max(state.arrived_ns, info.st_ctime_ns)
            if state.owner is not None and info.st_uid != state.owner:
                raise SubmissionError(f"{path} belongs to {owner_name(info.st_uid)}; refused")
            if stat.S_ISDIR(info.st_mode):
                flags = os.O_RDONLY | os.O_DIRECTORY
                sub = open_no_follow(name, flags, f"{path} cannot be opened", dir_fd=fd)
                try:
                    (dest / name).mkdir(mode=0o755)
                    self._copy_folder(sub, dest / name, path, state)
                finally:
                    os.close(sub)
                continue
            if not stat.S_ISREG(info.st_mode):
                raise SubmissionError(f"{path} is a link or a special file; refused")
            if info.st_nlink > 1:
                raise SubmissionError(f"{path} is hard-linked elsewhere; refused")
            include = coursedir.include
            if include and not any(fnmatch.fnmatch(name, glob) for glob in include):
                continue
            if coursedir.max_file_size and info.st_size > 1000 * coursedir.max_file_size:
                state.skipped.append(str(path))
                continue
            limit = int(self.budgets.max_submission_mb * 1e6) - state.bytes
            data = read_file(Path(name), limit, dir_fd=fd)
            after = os.stat(name, dir_fd=fd, follow_symlinks=False)
            state.arrived_ns = max(state.arrived_ns, after.st_ctime_ns)  # written meanwhile
            state.files += 1
            state.bytes += len(data)
            if state.files > self.budgets.max_submission_files:
                raise SubmissionError(
                    f"more than {self.budgets.max_submission_files} files "
                    "(c.Budgets.max_submission_files); refused"
                )
            target = dest / name
            target.write_bytes(data)
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
