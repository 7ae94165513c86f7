"""The end of a term (`make archive`, `service.term`), as a class runs it: a real exchange
(nbgrader release, submit, release_feedback), hand-ins collected and graded, the gradebook
in SQLite and in a PostgreSQL server (tests/pg_server.py).

Archived without CONFIRM: a copy holds the gradebook (opened by nbgrader, same scores), the
hand-ins, feedback and the exchange's folders, and nothing is deleted. With CONFIRM: all
of it is gone but the course's secret, and the next term's collector brings no old hand-in
back into the new gradebook (before, `make clean-grades` left the exchange: it did).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest
from accounts import as_account
from class_privacy import exchange_layout, roster_group, roster_group_name
from pg_server import running_postgres

from autograder.authoring.release import generate
from autograder.authoring.sample_class import SAMPLE_CLASS, make_course, released_through_exchange
from autograder.core.givens import SECRET_FILE
from autograder.grading.runner import Grader, load_config
from autograder.service.collect import ExchangeCollector

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

ASSIGNMENT = "01_what_a_gradient_is"
COURSE_ID = "backward-course"
BIN = Path(sys.executable).parent


def nbgrader(*args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def term(course: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "python"), "-m", "autograder.service.term", "--course-dir", str(course)]
    return subprocess.run([*command, *args], capture_output=True, text=True)


def submit(home: Path, exchange: Path, student: str) -> None:
    """`student` hands in the sample class's notebook with `nbgrader submit`."""
    (home / ASSIGNMENT).mkdir(parents=True)
    name = f"{ASSIGNMENT}.ipynb"
    shutil.copy(SAMPLE_CLASS / student / ASSIGNMENT / name, home / ASSIGNMENT / name)
    (home / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\nc.Exchange.cache = {str(home / 'cache')!r}\n"
    )
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / ".jupyter"), "JUPYTER_CONFIG_PATH": ""}
    nbgrader("submit", ASSIGNMENT, f"--student={student}", cwd=home, env=env)


def collect(course: Path) -> list[str]:
    """One look of the class service's collector; the lines it says."""
    collector = ExchangeCollector(load_config(course), lambda: {ASSIGNMENT})
    return collector.look() + collector.look()  # a folder is taken once seen unchanged


def scores(db_url: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(db_url, COURSE_ID) as gb:
        return {s.student.id: float(s.score) for s in gb.find_assignment(ASSIGNMENT).submissions}


@contextmanager
def class_term(root: Path, postgres: bool) -> Iterator[tuple[Path, Path, str]]:
    """A course graded through its exchange: (course, exchange, gradebook URL)."""
    with running_postgres() if postgres else nullcontext(None) as url:
        root.mkdir()
        if url:
            (root / "course").mkdir()
            (root / "course" / "site_config.py").write_text(
                f"c = get_config()\nc.CourseDirectory.db_url = {url!r}\n"
            )
        course, exchange = released_through_exchange(root, ASSIGNMENT)
        for student in ("ada", "ben"):
            submit(root / "homes" / student, exchange, student)
        assert sum(line.startswith("collected") for line in collect(course)) == 2
        outcomes = list(Grader(course, jobs=1).run())
        assert [o.status for o in outcomes] == ["graded"] * 2, [o.reasons for o in outcomes]
        nbgrader("generate_feedback", ASSIGNMENT, cwd=course)
        nbgrader("release_feedback", ASSIGNMENT, cwd=course)
        (course / SECRET_FILE).write_text("the course's secret")  # after grading: kept
        yield course, exchange, str(load_config(course).CourseDirectory.db_url)


@pytest.mark.parametrize("postgres", [False, True], ids=["sqlite", "postgresql"])
def test_archive_keeps_everything_and_clears_only_when_confirmed(
    tmp_path: Path, postgres: bool
) -> None:
    with class_term(tmp_path / "term", postgres) as (course, exchange, db_url):
        graded = scores(db_url)
        assert set(graded) == {"ada", "ben"}
        place = exchange / COURSE_ID
        handed_in = sorted(p.name for p in (place / "inbound").iterdir())
        pages = sorted(p.name for p in (place / "feedback").iterdir())
        assert len(handed_in) == 2 and len(pages) == 2

        kept = term(course, "--to", str(tmp_path / "kept"))
        assert kept.returncode == 0, kept.stderr
        assert "nothing was deleted" in kept.stdout
        archived = tmp_path / "kept"
        assert scores(f"sqlite:///{archived / 'gradebook.db'}") == graded  # nbgrader reads it
        assert sorted(p.name for p in (archived / "exchange" / "inbound").iterdir()) == handed_in
        assert sorted(p.name for p in (archived / "exchange" / "feedback").iterdir()) == pages
        assert (archived / "exchange" / "outbound" / ASSIGNMENT).is_dir()
        for folder in ("submitted/ada", "autograded/ben", "feedback/ada"):
            assert (archived / "course" / folder / ASSIGNMENT).is_dir()
        assert (archived / "course" / ".autograder" / "graded").is_dir()
        assert not (archived / "course" / SECRET_FILE).exists()  # the secret stays home
        assert "course backward-course" in (archived / "MANIFEST.txt").read_text()
        # nothing deleted
        assert scores(db_url) == graded
        assert sorted(p.name for p in (place / "inbound").iterdir()) == handed_in
        assert (course / "submitted" / "ada").is_dir()

        again = term(course, "--to", str(tmp_path / "kept"))
        assert again.returncode == 1 and "exists already" in again.stderr

        cleared = term(course, "--confirm")
        assert cleared.returncode == 0, cleared.stderr
        (second,) = (course / "archives").iterdir()
        assert second.name.startswith(f"{COURSE_ID}-")
        assert scores(f"sqlite:///{second / 'gradebook.db'}") == graded
        for name in ("inbound", "outbound", "feedback"):
            assert list((place / name).iterdir()) == []  # emptied, the folders kept
        for name in ("submitted", "autograded", "feedback", "release", "grades.csv"):
            assert not (course / name).exists()
        assert sorted(p.name for p in (course / ".autograder").iterdir()) == ["givens_secret"]
        assert (course / SECRET_FILE).read_text() == "the course's secret"

        # the next term: a new gradebook; the service's collector finds no old hand-in
        generate(course, [ASSIGNMENT])
        assert [line for line in collect(course) if "collected" in line] == []
        assert not (course / "submitted").exists()
        assert scores(db_url) == {}


def test_clean_grades_clears_the_exchange_too(tmp_path: Path) -> None:
    from autograder.service.clean_grades import main as clean_grades

    with class_term(tmp_path / "term", postgres=False) as (course, exchange, _):
        assert clean_grades(["--course-dir", str(course)]) == 0
        for name in ("inbound", "outbound", "feedback"):
            assert list((exchange / COURSE_ID / name).iterdir()) == []
        assert not (course / "gradebook.db").exists()
        generate(course, [ASSIGNMENT])
        assert [line for line in collect(course) if "collected" in line] == []


@pytest.fixture
def class_accounts() -> Iterator[tuple[pwd.struct_passwd, pwd.struct_passwd, Path]]:
    """(instructor, student, a folder every account reaches): fresh accounts, deleted
    afterwards with the roster's group."""
    if os.geteuid() != 0:
        pytest.fail("this test runs as root: it makes the class's accounts")
    tag = secrets.token_hex(3)
    made: list[str] = []
    place = Path(tempfile.mkdtemp(prefix="term-accounts-"))
    place.chmod(0o755)
    try:
        for login in (f"tti{tag}", f"tts{tag}"):
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", login], check=True)
            made.append(login)
        yield pwd.getpwnam(made[0]), pwd.getpwnam(made[1]), place
    finally:
        for login in made:
            subprocess.run(["userdel", "-r", login], capture_output=True)
        subprocess.run(["groupdel", roster_group_name(COURSE_ID)], capture_output=True)
        shutil.rmtree(place, ignore_errors=True)


def test_the_instructor_archives_and_clears_a_class_as_make_class_left_it(
    class_accounts: tuple[pwd.struct_passwd, pwd.struct_passwd, Path],
) -> None:
    """As the instructor's own account (not root), on an exchange laid out as `make class`
    lays it out (class_privacy), with a hand-in the student's account made as its private
    submit leaves it (the student's folder, mode 2770, the instructor's group): archived
    whole, then cleared, the student's hand-in included."""
    teacher, student, place = class_accounts
    exchange = place / "exchange"
    course = make_course(
        place / "course", [ASSIGNMENT], extra_config=f"c.Exchange.root = {str(exchange)!r}\n"
    )
    (course / "submitted" / student.pw_name / ASSIGNMENT).mkdir(parents=True)
    subprocess.run(["chown", "-R", teacher.pw_name, str(course)], check=True)
    roster = roster_group(COURSE_ID, [student.pw_name, teacher.pw_name])
    exchange_layout(exchange, COURSE_ID, teacher.pw_name, roster)
    place_of = exchange / COURSE_ID
    released = place_of / "outbound" / ASSIGNMENT
    released.mkdir()
    shutil.copy(course / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", released)
    subprocess.run(["chown", "-R", teacher.pw_name, str(released)], check=True)
    page = place_of / "feedback" / "0123abcd.html"
    page.write_text("feedback")
    os.chown(page, teacher.pw_uid, teacher.pw_gid)
    name = f"{student.pw_name}+{ASSIGNMENT}+2026-12-01 10:00:00.000000 UTC+ab12"
    notebook = SAMPLE_CLASS / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    hand_in = (
        'umask 022 && mkdir "$1" && cp "$2" "$1/" && echo stamp > "$1/timestamp.txt" '
        '&& chmod 2770 "$1"'
    )
    inbound = place_of / "inbound" / name
    made = subprocess.run(
        ["runuser", "-u", student.pw_name, "--", "sh", "-c", hand_in, "-", str(inbound),
         str(notebook)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (inbound.stat().st_uid, inbound.stat().st_gid) == (student.pw_uid, teacher.pw_gid)

    command = [str(BIN / "python"), "-m", "autograder.service.term", "--course-dir",
               str(course), "--confirm"]  # fmt: skip
    done = subprocess.run(
        as_account(teacher.pw_uid, teacher.pw_gid, command),
        capture_output=True, text=True, cwd=place,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (archived,) = (course / "archives").iterdir()
    assert (archived / "exchange" / "inbound" / name / f"{ASSIGNMENT}.ipynb").is_file()
    assert (archived / "exchange" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    assert (archived / "exchange" / "feedback" / page.name).read_text() == "feedback"
    assert (archived / "course" / "submitted" / student.pw_name / ASSIGNMENT).is_dir()
    assert archived.stat().st_uid == teacher.pw_uid
    assert archived.stat().st_mode & 0o077 == 0  # the instructor's alone
    for folder in ("inbound", "outbound", "feedback"):
        assert list((place_of / folder).iterdir()) == [], folder
    assert not (course / "submitted").exists() and not (course / "gradebook.db").exists()
