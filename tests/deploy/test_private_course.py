"""`make class` closes the course folder: an SQLite gradebook in it is the instructor's alone.

The class test (tests/hub) runs on a PostgreSQL gradebook; this is its SQLite counterpart,
cheap: a course folder with a real nbgrader gradebook.db, first open to others (another
account reads it: the attempt can succeed), then closed by `private_course` as `make
class` does, after which the same attempt, as the unprivileged `nobody`, is refused, and
the instructor's own account still opens it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import stall_guard
from class_privacy import ClassError, private_course, secret_problem
from nbgrader.api import Gradebook

from autograder.grading.recording import use_this_environment

OPEN_GRADEBOOK = """
import sqlite3, sys
try:
    names = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute(
        "select name from sqlite_master where type='table'").fetchall()
except sqlite3.Error as error:
    print("refused:", error)
else:
    print("OPENED", len(names))
"""
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: every account can run it


def open_as(user: str, gradebook: Path) -> str:
    done = stall_guard.run(
        ["runuser", "-u", user, "--", SYSTEM_PYTHON, "-c", OPEN_GRADEBOOK, str(gradebook)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def course() -> Iterator[Path]:
    """A course folder others can enter, with nbgrader's SQLite gradebook (mode 0644)."""
    if os.geteuid() != 0:
        pytest.fail("this test runs as root (it opens the gradebook as other accounts)")
    if not Path(SYSTEM_PYTHON).exists():
        pytest.fail(f"{SYSTEM_PYTHON} is missing: apt-get install python3")
    use_this_environment()  # nbgrader's gradebook runs `alembic` by name
    root = Path(tempfile.mkdtemp(prefix="private-course-"))
    try:
        root.chmod(0o755)
        folder = root / "course"
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
        with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", "private-course") as gb:
            gb.add_student("ada")
        (folder / "gradebook.db").chmod(0o644)
        yield folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.processes
def test_a_closed_course_folder_keeps_the_sqlite_gradebook_from_others(course: Path) -> None:
    gradebook = course / "gradebook.db"
    assert open_as("nobody", gradebook).startswith("OPENED"), "the attempt could not succeed"
    with pytest.raises(ClassError, match="not the instructor's"):
        private_course(course, owner=os.getuid() + 1)  # not the owner's: refused, unchanged
    assert course.stat().st_mode & 0o777 == 0o755
    said = private_course(course, owner=os.getuid())
    assert said == f"course folder {course}: mode 755 -> 700"
    assert course.stat().st_mode & 0o777 == 0o700
    assert open_as("nobody", gradebook).startswith("refused:")
    assert open_as("root", gradebook).startswith("OPENED")  # its owner still opens it
    assert private_course(course, owner=os.getuid()) is None  # closed already: nothing said


def test_a_secret_the_instructor_cannot_read_stops_the_class(tmp_path: Path) -> None:
    """The hub (root) reads any secret; the check service and the grader run as the
    instructor, so `make class` refuses a secret that is not theirs to read."""
    me = os.getuid()
    secret = tmp_path / ".autograder" / "givens_secret"
    assert secret_problem(tmp_path, me) is None  # no secret: public numbers
    secret.parent.mkdir()
    secret.write_text("0" * 64 + "\n")
    secret.chmod(0o600)
    assert secret_problem(tmp_path, me) is None
    problem = secret_problem(tmp_path, me + 1)
    assert problem is not None and f"owned by uid {me}, mode 600" in problem
    secret.chmod(0o200)
    assert secret_problem(tmp_path, me) is not None
    secret.unlink()
    secret.symlink_to(tmp_path / "elsewhere")
    assert secret_problem(tmp_path, me) is not None
