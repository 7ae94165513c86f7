"""What a submission folder may hold, checked before anything in it is read or copied.

nbgrader copies a whole submission folder into autograded/ and feedback/ and builds
glob patterns from student ids, so a folder is refused, for that student alone and with
the reason, when its student id has glob or path syntax, or when it holds a symbolic
link, a special file (device, FIFO, socket), a file name with glob syntax, or more
files or bytes than the budgets allow. Files are then opened with O_NOFOLLOW and
checked to be regular files as opened: nothing outside the submission is read.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Protocol

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
UNSAFE_NAME = re.compile(r"[*?\[\]{}\\\n\r\t\x00]")
MAX_DEPTH = 8


class SubmissionError(Exception):
    """A submission that cannot be graded; the message says why, for the instructor."""


class FolderBudgets(Protocol):
    max_submission_files: int
    max_submission_mb: float


def check_student_name(name: str) -> None:
    """Refuse a student id with glob or path syntax."""
    if not STUDENT_ID.fullmatch(name):
        raise SubmissionError(
            f"student id {name!r} refused: ids are letters, digits and . _ @ + - "
            "(no glob or path syntax), at most 64 characters"
        )


def check_student_id(student_dir: Path) -> None:
    """Refuse a student folder whose name is not a plain id, or that is not a real folder."""
    name = student_dir.name
    check_student_name(name)
    mode = os.lstat(student_dir).st_mode
    if not stat.S_ISDIR(mode):
        raise SubmissionError(f"submitted/{name} is not a folder (a link or a file); refused")


def check_folder(folder: Path, budgets: FolderBudgets) -> list[Path] | None:
    """The files of a submission folder, sorted; None when there is no such folder.

    Raises SubmissionError for links, special files, unsafe names, or a tree over budget.
    """
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(mode):
        raise SubmissionError(f"{folder.name} is not a folder (a link or a file); refused")
    files: list[Path] = []
    total = 0
    limit = int(budgets.max_submission_mb * 1e6)
    pending = [(folder, 0)]
    while pending:
        directory, depth = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                path = Path(entry.path)
                where = path.relative_to(folder)
                if UNSAFE_NAME.search(entry.name):
                    raise SubmissionError(f"file name {str(where)!r} has glob syntax; refused")
                if entry.is_symlink():
                    raise SubmissionError(f"{where} is a symbolic link; links are refused")
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 > MAX_DEPTH:
                        raise SubmissionError(f"{where}: folders nested over {MAX_DEPTH} deep")
                    pending.append((path, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    files.append(path)
                    total += entry.stat(follow_symlinks=False).st_size
                else:
                    raise SubmissionError(f"{where} is a special file (not a regular file)")
                if len(files) > budgets.max_submission_files:
                    raise SubmissionError(
                        f"more than {budgets.max_submission_files} files "
                        "(c.Budgets.max_submission_files); refused"
                    )
                if total > limit:
                    raise SubmissionError(
                        f"more than {budgets.max_submission_mb:g} MB of files "
                        "(c.Budgets.max_submission_mb); refused"
                    )
    return sorted(files)


def open_no_follow(path: Path | str, flags: int, refusal: str, dir_fd: int | None = None) -> int:
    """`os.open` never through a link (O_NOFOLLOW, O_CLOEXEC added); with `dir_fd`, `path` is
    a name in that open folder. SubmissionError "<refusal> (<why>)" when it cannot be."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        raise SubmissionError(f"{refusal} ({error.strerror})") from None


def read_file(path: Path, limit: int | None, dir_fd: int | None = None) -> bytes:
    """A submitted regular file's bytes, never through a link; SubmissionError past `limit`.
    With `dir_fd`, `path` is a name in that open folder."""
    flags = os.O_RDONLY | os.O_NONBLOCK
    fd = open_no_follow(path, flags, f"{path.name} cannot be read", dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError(f"{path.name} is not a regular file; refused")
        if limit is not None and info.st_size > limit:
            raise SubmissionError(
                f"{path.name} is {info.st_size / 1e6:.0f} MB, over the {limit / 1e6:.0f} MB limit"
            )
        chunks = []
        remaining = info.st_size if limit is None else limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise SubmissionError(f"{path.name} grew over the {limit / 1e6:.0f} MB limit")
    return data
