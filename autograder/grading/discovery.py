"""Finding what to grade: every `submitted/<student>/<assignment>/` checked, fingerprinted
(the submitted files and the source version), and compared with what was graded."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from autograder.grading.budgets import Budgets
from autograder.grading.state import GradedMarkers
from autograder.grading.submissions import (
    SubmissionError,
    check_folder,
    check_student_id,
    read_file,
)
from autograder.grading.work import Outcome, Submission


def stat_signature(files: list[Path], source: Path) -> tuple[tuple[str, int, int, int, int], ...]:
    """What changes whenever a submitted or source file changes (size, inode, modification
    and status-change times: the ctime cannot be set back), read without opening them."""
    paths = [*files, *(p for p in source.rglob("*") if p.is_file())]
    signature = []
    for path in paths:
        info = os.lstat(path)
        signature.append((str(path), info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(signature)


def fingerprint(files: list[Path], folder: Path, source: Path) -> str:
    """A hash of every submitted file (checked: `check_folder`) and of the source version."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(read_file(path, None))
    digest.update(b"\1")
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def listing(submitted: Path) -> list[Path]:
    """The entries of submitted/; SubmissionError naming it when it cannot be listed."""
    try:
        return list(submitted.iterdir())
    except OSError as error:
        raise SubmissionError(f"cannot list {submitted}: {error.strerror or error}") from None


class Discovery:
    """The submissions to grade now, and the ones skipped (graded already, or refused).

    `persistent` (a grading service looking every fraction of a second): a folder is hashed
    again only when a file's status changed, and a version tried once is not tried again."""

    def __init__(
        self,
        coursedir: CourseDirectory,
        budgets: Budgets,
        markers: GradedMarkers,
        *,
        assignments: list[str] | None,
        students: list[str] | None,
        force: bool,
        persistent: bool,
    ) -> None:
        self.coursedir = coursedir
        self.budgets = budgets
        self.markers = markers
        self.assignments = assignments
        self.students = students
        self.force = force
        self.persistent = persistent
        self.attempted: dict[str, str] = {}  # persistent: submission -> fingerprint tried
        self._fingerprints: dict[str, tuple[Any, str]] = {}  # persistent: (stat, fingerprint)

    def known_assignments(self) -> dict[str, list[str]]:
        """Assignments in the gradebook, with their notebooks."""
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            return {a.name: [n.name for n in a.notebooks] for a in gb.assignments}

    def wanted(self, known: dict[str, list[str]] | None = None) -> list[str]:
        """The assignments to grade; SubmissionError naming any not in the gradebook."""
        known = self.known_assignments() if known is None else known
        unknown = [a for a in self.assignments or [] if a not in known]
        if unknown:
            raise SubmissionError(
                f"not in the gradebook: {', '.join(unknown)}. Run `make assign` first (it "
                "records every assignment from solutions/ without touching exercises/). "
                f"Known: {', '.join(sorted(known)) or 'none'}"
            )
        return self.assignments or sorted(known)

    def discover(self, only: set[str] | None = None) -> tuple[list[Submission], list[Outcome]]:
        """Submissions to grade now, and the ones skipped as already graded (`only`: look
        at these `student/assignment` folders alone, so a look costs what is new)."""
        if only is not None and not only:
            return [], []
        submitted = Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", "."))
        known = self.known_assignments()
        wanted = self.wanted(known)
        todo: list[Submission] = []
        skipped: list[Outcome] = []
        listed = self.students and submitted.is_dir()
        present = sorted(p.name for p in listing(submitted)) if listed else []
        absent = [s for s in self.students or [] if s not in present]
        if absent:
            raise SubmissionError(
                f"no submission from {', '.join(map(repr, absent))} in {submitted}"
                + (f" (students there: {', '.join(present[:20])})" if present else " (empty)")
            )
        if not submitted.is_dir():
            return todo, skipped
        if only is None:
            student_dirs = sorted(listing(submitted))
        else:
            student_dirs = sorted({submitted / key.split("/")[0] for key in only})
        for student_dir in student_dirs:
            if self.students and student_dir.name not in self.students:
                continue
            try:
                check_student_id(student_dir)
                refused: SubmissionError | OSError | None = None
            except (SubmissionError, OSError) as error:
                refused = error  # each of the student's submissions fails with it
            if only is None and self.assignments is None and refused is None:
                skipped += self.strays(student_dir, known)
            for assignment in wanted:
                if only is not None and f"{student_dir.name}/{assignment}" not in only:
                    continue
                folder = student_dir / assignment
                sub = Submission(student_dir.name, assignment, folder, "", known[assignment])
                try:
                    if refused is not None:
                        raise refused
                    files = check_folder(folder, self.budgets)
                except SubmissionError as error:
                    skipped.append(Outcome(sub, "failed", [str(error)]))
                    continue
                except OSError as error:  # unreadable, or removed while looked at
                    reason = f"cannot read submitted/{sub.key}: {error.strerror or error}"
                    skipped.append(Outcome(sub, "failed", [reason]))
                    continue
                if files is None:
                    continue
                source = Path(
                    self.coursedir.format_path(self.coursedir.source_directory, ".", assignment)
                )
                try:
                    sub.fingerprint = self.fingerprint(sub, files, source)
                except (SubmissionError, OSError) as error:
                    skipped.append(Outcome(sub, "failed", [str(error)]))
                    continue
                if self.persistent and self.attempted.get(sub.key) == sub.fingerprint:
                    continue  # tried in this service already: only a new version is tried
                if not self.force and self.markers.already_graded(sub):
                    skipped.append(Outcome(sub, "skipped"))
                else:
                    todo.append(sub)
        return todo, skipped

    def strays(self, student_dir: Path, known: dict[str, list[str]]) -> list[Outcome]:
        """A folder in `student_dir` named after no assignment: a hand-in nobody would
        grade, failed with the reason so it is not lost (a file or hidden folder is left)."""
        try:
            with os.scandir(student_dir) as scan:
                entries = [e for e in scan if not e.name.startswith(".")]
        except OSError:
            return []  # the student's own folders fail with the reason below
        strays = sorted(
            e.name for e in entries if e.is_dir(follow_symlinks=False) and e.name not in known
        )
        reason = (
            "{name} is not an assignment in the gradebook, so it is not graded: rename the "
            "folder to its assignment's name ({known}), or record it with `make assign`"
        )
        names = ", ".join(sorted(known)) or "none recorded"
        return [
            Outcome(
                Submission(student_dir.name, name, student_dir / name),
                "failed",
                [reason.format(name=name, known=names)],
            )
            for name in strays
        ]

    def fingerprint(self, sub: Submission, files: list[Path], source: Path) -> str:
        """The submission's fingerprint; a service hashes a folder again only when a file's
        status changed since its last look (looking every fraction of a second)."""
        if not self.persistent:
            return fingerprint(files, sub.path, source)
        signature = stat_signature(files, source)
        known = self._fingerprints.get(sub.key)
        if known is None or known[0] != signature:
            known = (signature, fingerprint(files, sub.path, source))
            self._fingerprints[sub.key] = known
        return known[1]
