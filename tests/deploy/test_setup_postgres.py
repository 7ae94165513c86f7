"""`sudo make postgres` (tools/setup_postgres.sh): each course its own role and database.

Run as root, as the target is, against a real PostgreSQL server (tests/pg_server.py,
password authentication, as Debian's pg_hba.conf asks over 127.0.0.1), for a real
instructor account: two courses on one machine get a role and a database named from
each course id, the passwords in the instructor's ~/.pgpass; setting up one again never
resets the other's password; neither role opens the other's database; a role made for
another course id that maps to the same name is refused; nbgrader opens the gradebook
through the URL the script writes into site_config.py.
"""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import running_postgres

pytestmark = pytest.mark.processes  # runs the script, accounts, a server

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "setup_postgres.sh"
SUPERUSER_PASSWORD = secrets.token_urlsafe(12)


@pytest.fixture
def instructor() -> Iterator[str]:
    """A fresh local account with a home (deleted afterwards)."""
    if os.geteuid() != 0:
        pytest.fail("this test runs as root, as `sudo make postgres` does")
    login = f"pgt{secrets.token_hex(3)}"
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", login], check=True)
    try:
        yield login
    finally:
        subprocess.run(["userdel", "-r", login], capture_output=True)


def course(root: Path, course_id: str) -> Path:
    folder = root / course_id.replace(" ", "_")
    folder.mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {course_id!r}\n"
    )
    return folder


def set_up(folder: Path, instructor: str, port: int) -> subprocess.CompletedProcess[str]:
    """The script as `make postgres` runs it, against the test's server."""
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(port), "PGUSER": "grader",
           "PGPASSWORD": SUPERUSER_PASSWORD, "PG_ACCOUNT": "nobody"}  # fmt: skip
    command = ["bash", str(SCRIPT), instructor, str(folder), sys.executable]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)


def db_url(folder: Path) -> str:
    line = (folder / "site_config.py").read_text().split("db_url = ")[1]
    return line.split('"')[1]


def opens(url: str, pgpass: Path, password: str | None = None) -> str:
    """'OPENED', or the error, when `url` is opened with the passwords in `pgpass` (or
    `password`)."""
    import psycopg

    try:
        with psycopg.connect(url, passfile=str(pgpass), password=password):
            return "OPENED"
    except psycopg.OperationalError as error:
        return str(error)


def test_each_course_its_own_role_and_database(tmp_path: Path, instructor: str) -> None:
    with running_postgres(password=SUPERUSER_PASSWORD) as server:
        port = int(server.split(":")[2].split("/")[0])
        first, second = course(tmp_path, "backward-course"), course(tmp_path, "Course B")
        for folder in (first, second):
            done = set_up(folder, instructor, port)
            assert done.returncode == 0, done.stdout + done.stderr
        url_a, url_b = db_url(first), db_url(second)
        assert (
            url_a
            == f"postgresql://grader_backward_course@127.0.0.1:{port}/gradebook_backward_course"
        )
        assert url_b == f"postgresql://grader_course_b@127.0.0.1:{port}/gradebook_course_b"
        pgpass = Path(pwd.getpwnam(instructor).pw_dir) / ".pgpass"
        assert pgpass.stat().st_mode & 0o777 == 0o600
        assert pgpass.stat().st_uid == pwd.getpwnam(instructor).pw_uid
        assert opens(url_a, pgpass) == opens(url_b, pgpass) == "OPENED"

        lines_before = pgpass.read_text().splitlines()
        again = set_up(first, instructor, port)  # the first course's password reset
        assert again.returncode == 0, again.stderr
        assert "sets a db_url already" in again.stdout
        lines_after = pgpass.read_text().splitlines()
        assert [x for x in lines_after if "course_b" in x] == [
            x for x in lines_before if "course_b" in x
        ]  # the other course untouched
        assert opens(url_a, pgpass) == opens(url_b, pgpass) == "OPENED"
        password_a = next(x for x in lines_after if "backward" in x).rsplit(":", 1)[1]
        crossed = url_a.replace("gradebook_backward_course", "gradebook_course_b")
        assert "permission denied" in opens(crossed, pgpass, password_a)  # nor each other's

        clash = course(tmp_path / "other", "backward_course")  # maps to the same name
        refused = set_up(clash, instructor, port)
        assert refused.returncode == 2
        assert "made for course backward-course, not course backward_course" in refused.stderr

        from nbgrader.api import Gradebook

        from autograder.grading.recording import use_this_environment

        use_this_environment()  # nbgrader's gradebook runs `alembic` by name
        os.environ["PGPASSFILE"] = str(pgpass)
        try:
            with Gradebook(url_b, "Course B") as gb:
                gb.add_student("ada")
                assert [s.id for s in gb.students] == ["ada"]
        finally:
            del os.environ["PGPASSFILE"]
