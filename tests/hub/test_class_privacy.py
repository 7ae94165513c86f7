"""What a student may not reach in `make class`, tried as each real student account.

The class hands in first from students' shells (`nbgrader fetch_assignment` and `submit`
with the students' environment's own config: their terminals work), the instructor
collects, grades and generates feedback, so every private path below exists. Then each
student tries to read, list, write, rename and delete every path that is the instructor's
(the course folder and what is in it, the hub's files) or another student's (their home,
their hand-in in the exchange), first from a shell (a Python script run with `runuser`),
then through their own JupyterLab server's contents API (a symbolic link in their home to
each path): every attempt must be refused, and nothing changed. Hijacks of the exchange
(rename or replace the course's folder, plant in outbound, rename or delete another's
hand-in) must fail the same way. Runs after test_class_hub.py on the same hub (conftest).
"""

from __future__ import annotations

import grp
import hashlib
import json
import os
from pathlib import Path

import pytest
from class_hub import ASSIGNMENT, COURSE_ID, ClassHub, log_in
from class_privacy import roster_group_name
from playwright.sync_api import Browser

pytestmark = [pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.sandbox]

# Tried by each student as themselves: argv[1] is {path: [attempts]}; prints
# {path: {attempt: "refused" | "DONE"}}.
ATTEMPTS = r"""
import json, os, shutil, sys
results = {}
for path, attempts in json.loads(sys.argv[1]).items():
    tried = {}
    def read():
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
    def write():
        if os.path.isdir(path):
            with open(os.path.join(path, "planted-by-student"), "x") as f:
                f.write("planted")
        else:
            with open(path, "ab") as f:
                f.write(b"planted")
    actions = {
        "read": read,
        "write": write,
        "rename": lambda: os.rename(path, path + ".moved"),
        "delete": lambda: shutil.rmtree(path) if os.path.isdir(path) else os.remove(path),
    }
    for name in attempts:
        try:
            actions[name]()
        except OSError:
            tried[name] = "refused"
        else:
            tried[name] = "DONE"
    results[path] = tried
print(json.dumps(results))
"""
EVERYTHING = ["read", "write", "rename", "delete"]
CHANGES = ["write", "rename", "delete"]  # of what students may read (released files)
HAND_IN_BOX = ["read", "rename", "delete"]  # inbound/: they hand in (write) there


NEW_FILE = {"type": "file", "format": "text", "content": "planted"}


def fingerprint(path: Path) -> str:
    """What `path` holds (names, modes, owners and bytes of everything under it; of the
    hub's own live files, which the hub itself rewrites, only the mode and owner)."""
    live = "/state/hub" in str(path)
    digest = hashlib.sha256()
    for item in sorted([path, *path.rglob("*")] if path.is_dir() and not live else [path]):
        info = item.lstat()
        digest.update(f"{item}:{info.st_mode}:{info.st_uid}".encode())
        if item.is_file() and not item.is_symlink() and not live:
            digest.update(item.read_bytes())
    return digest.hexdigest()


def hand_in_from_shells(hub: ClassHub) -> None:
    """Each student fetches and submits in a terminal; the instructor collects, grades and
    generates feedback: every private path exists, with their work in it."""
    for student in hub.students:
        home = Path(f"/home/{student}")
        if not (home / ASSIGNMENT).exists():
            hub.check_as(student, "nbgrader", "fetch_assignment", ASSIGNMENT)
        hub.check_as(student, "nbgrader", "submit", ASSIGNMENT)
    teacher = hub.instructor
    hub.check_as(teacher, "nbgrader", "collect", "--update", ASSIGNMENT)
    hub.check_as(teacher, "autograder", "grade", ASSIGNMENT, "--quiet")
    hub.check_as(teacher, "nbgrader", "generate_feedback", ASSIGNMENT, "--force")


def private_paths(hub: ClassHub, student: str) -> dict[Path, list[str]]:
    """Everything `student` must not reach, with what they try on it (each exists:
    asserted): the instructor's, the hub's and other students' files, and the exchange's
    shared folders (which they may read, not change)."""
    course = hub.course
    others = [s for s in hub.students if s != student]
    notebook = f"{ASSIGNMENT}.ipynb"
    paths = [
        course,
        course / "solutions",
        course / "solutions" / ASSIGNMENT / notebook,
        course / "gradebook.db" if not hub.db_url else Path(f"/home/{hub.instructor}/.pgpass"),
        course / "site_config.py",
        course / "nbgrader_config.py",
        course / "release",
        course / "submitted",
        course / ".autograder",
        hub.root / "state" / "hub",
        hub.root / "state" / "hub" / "jupyterhub.sqlite",
        hub.root / "state" / "hub" / "jupyterhub_cookie_secret",
        hub.root / "state" / "instructor" / "nbgrader_config.py",
        hub.exchange / COURSE_ID / "feedback",
    ]
    for other in others:
        paths += [
            course / "submitted" / other / ASSIGNMENT / notebook,
            course / "submitted" / other / ASSIGNMENT / "submission_secret.txt",
            course / "autograded" / other / ASSIGNMENT / notebook,
            course / "feedback" / other / ASSIGNMENT / f"{ASSIGNMENT}.html",
            Path(f"/home/{other}"),
            Path(f"/home/{other}") / ASSIGNMENT / notebook,
            Path(f"/home/{other}") / ".local" / "share" / "jupyter" / "nbgrader_cache",
            *sorted((hub.exchange / COURSE_ID / "inbound").glob(f"{other}+*")),
        ]
    tried = {path: EVERYTHING for path in paths}
    tried[hub.exchange / COURSE_ID / "inbound"] = HAND_IN_BOX
    outbound = hub.exchange / COURSE_ID / "outbound"
    for shared in [hub.exchange / COURSE_ID, outbound, outbound / ASSIGNMENT,
                   outbound / ASSIGNMENT / notebook]:  # fmt: skip
        tried[shared] = CHANGES
    missing = [str(p) for p in tried if not p.exists()]
    assert not missing, f"the private paths to try must exist: {missing}"
    return tried


def test_students_reach_nothing_private_from_a_shell(hub: ClassHub) -> None:
    hand_in_from_shells(hub)
    for student in hub.students:
        targets = private_paths(hub, student)
        before = {p: fingerprint(p) for p in targets}
        paths = json.dumps({str(p): attempts for p, attempts in targets.items()})
        done = hub.as_user(student, "python3", "-c", ATTEMPTS, paths)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)
        allowed = {
            path: [name for name, outcome in tried.items() if outcome != "refused"]
            for path, tried in results.items()
        }
        allowed = {path: names for path, names in allowed.items() if names}
        assert not allowed, f"{student} could: {allowed}"
        changed = [str(p) for p in targets if not p.exists() or fingerprint(p) != before[p]]
        assert not changed, f"{student} changed {changed}"
        print(f"\n{student}: every attempt refused on {len(targets)} paths:")
        for path, attempts in targets.items():
            print(f"  {path}: {', '.join(attempts)}")


SQLITE_ATTEMPT = "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('select 1')"
GRADEBOOK_ATTEMPT = """
import sys, psycopg
try:
    psycopg.connect(sys.argv[1]).close()  # as long as it works: stall_guard.run
except psycopg.OperationalError as error:
    print("refused:", error)
else:
    print("CONNECTED")
"""


def test_students_cannot_open_the_gradebook(hub: ClassHub) -> None:
    """The PostgreSQL gradebook asks for the password only the instructor's .pgpass holds;
    the SQLite one is a file in the closed course folder."""
    if not hub.db_url:
        for student in hub.students:
            tried = hub.as_user(student, "python3", "-c", SQLITE_ATTEMPT, hub.root_db_url[10:])
            assert "unable to open" in tried.stderr, f"{student}: {tried.stdout}{tried.stderr}"
        return
    for student in hub.students:
        tried = hub.check_as(student, "python3", "-c", GRADEBOOK_ATTEMPT, hub.db_url)
        assert tried.startswith("refused:") and "password" in tried, f"{student}: {tried}"
    teacher = hub.check_as(hub.instructor, "python3", "-c", GRADEBOOK_ATTEMPT, hub.db_url)
    assert teacher.strip() == "CONNECTED", teacher  # the same attempt can succeed


def test_the_exchange_is_laid_out_as_nbgrader_intends(hub: ClassHub) -> None:
    course = hub.exchange / COURSE_ID
    teacher = os.stat(hub.course).st_uid
    modes = {
        hub.exchange: (0o1777, 0),
        course: (0o755, teacher),
        course / "outbound": (0o750, teacher),  # the roster's group alone reads it
        course / "inbound": (0o3733, teacher),
        course / "feedback": (0o711, teacher),
    }
    for path, (mode, owner) in modes.items():
        info = path.stat()
        assert (info.st_mode & 0o7777, info.st_uid) == (mode, owner), path
    roster = grp.getgrgid((course / "outbound").stat().st_gid)
    assert roster.gr_name == roster_group_name(COURSE_ID)
    assert sorted(roster.gr_mem) == sorted([*hub.students, hub.instructor])
    assert os.stat(hub.course).st_mode & 0o077 == 0, "the course folder is open to others"
    for student in hub.students:
        assert Path(f"/home/{student}").stat().st_mode & 0o077 == 0, student
    root_owned = [str(p) for p in [hub.course, *hub.course.rglob("*")] if p.lstat().st_uid == 0]
    assert not root_owned, f"root-owned files in the instructor's folder: {root_owned}"


def test_students_reach_nothing_private_through_their_server(
    hub: ClassHub, browser: Browser
) -> None:
    """Their JupyterLab's contents API (what its file browser uses), through links in
    their home to each private path: read, list, write, rename, delete all refused."""
    student = hub.students[0]
    targets = private_paths(hub, student)
    before = {p: fingerprint(p) for p in targets}
    home = Path(f"/home/{student}")
    links = {}
    for number, target in enumerate(targets):
        name = f"peek-{number}"
        hub.check_as(student, "ln", "-sfn", str(target), str(home / name))
        links[name] = target
    page = log_in(browser, hub, student)
    xsrf = next(c["value"] for c in page.context.cookies() if c["name"] == "_xsrf")
    api = f"{hub.url}/user/{student}/api/contents"
    headers = {"X-XSRFToken": xsrf}
    allowed = []
    for name, target in links.items():
        if targets[target] != EVERYTHING:
            continue  # the exchange: the shell's attempts cover it
        if target.is_dir():  # an entry in it, known to root (the student cannot list it)
            child = f"{name}/{next(iter(sorted(target.iterdir())), target / 'x').name}"
            answers = {
                "list": page.request.get(f"{api}/{name}?content=1", headers=headers),
                "write": page.request.put(
                    f"{api}/{name}/planted.txt", headers=headers, data=json.dumps(NEW_FILE)
                ),
                "rename": page.request.patch(
                    f"{api}/{child}", headers=headers, data=json.dumps({"path": f"{child}.moved"})
                ),
                "delete": page.request.delete(f"{api}/{child}", headers=headers),
            }
        else:  # renaming or deleting the link itself is the student's own business
            answers = {
                "read": page.request.get(f"{api}/{name}?content=1", headers=headers),
                "write": page.request.put(
                    f"{api}/{name}", headers=headers, data=json.dumps(NEW_FILE)
                ),
            }
        allowed += [f"{how} {target}: {a.status}" for how, a in answers.items() if a.ok]
    page.context.close()
    changed = [str(p) for p in targets if not p.exists() or fingerprint(p) != before[p]]
    assert not changed, f"{student} changed, through their server: {changed}"
    assert not allowed, f"{student}'s server let them: {allowed}"
