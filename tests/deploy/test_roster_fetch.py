"""Only the roster fetches what is released: the exchange's `outbound/` as `make class` lays
it out (class_privacy.exchange_layout with the roster's group), tried with real accounts.

Run as root, as `make class` is: an instructor, a student on the roster and an account
that is not; an assignment released into outbound/ as nbgrader does (folders 0755, files
0644). The member lists and reads it; the outsider can do neither (before, outbound/ was
0755: any account on the machine fetched it). Taken off the roster, the member is refused.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from class_privacy import exchange_layout, roster_group, roster_group_name

pytestmark = pytest.mark.processes  # makes accounts, runs commands as them

ASSIGNMENT = "01_what_a_gradient_is"


@pytest.fixture
def accounts() -> Iterator[tuple[str, str, str, str]]:
    """(instructor, member, outsider, course id), fresh accounts deleted afterwards with
    the roster's group."""
    if os.geteuid() != 0:
        pytest.fail("this test runs as root, as `make class` does")
    tag = secrets.token_hex(3)
    logins = [f"rfi{tag}", f"rfm{tag}", f"rfo{tag}"]
    course_id = f"Roster Course {tag}"
    made = []
    try:
        for login in logins:
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", login], check=True)
            made.append(login)
        yield logins[0], logins[1], logins[2], course_id
    finally:
        for login in made:
            subprocess.run(["userdel", "-r", login], capture_output=True)
        subprocess.run(["groupdel", roster_group_name(course_id)], capture_output=True)


def as_user(user: str, *command: str) -> subprocess.CompletedProcess[str]:
    """`command` as `user` with their groups (runuser: initgroups, as JupyterHub's spawner)."""
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, text=True)


def release(outbound: Path, instructor: str) -> Path:
    """An assignment released as `nbgrader release_assignment` leaves it."""
    account = pwd.getpwnam(instructor)
    folder = outbound / ASSIGNMENT
    folder.mkdir(mode=0o755)
    notebook = folder / f"{ASSIGNMENT}.ipynb"
    notebook.write_text('{"cells": []}')
    notebook.chmod(0o644)
    for path in (folder, notebook):
        os.chown(path, account.pw_uid, account.pw_gid)
    return notebook


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder every account reaches (pytest's own tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="roster-fetch-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_only_the_roster_fetches(place: Path, accounts: tuple[str, str, str, str]) -> None:
    instructor, member, outsider, course_id = accounts
    root = place / "exchange"
    gid = roster_group(course_id, [member, instructor])
    exchange_layout(root, course_id, instructor, gid)
    outbound = root / course_id / "outbound"
    assert (outbound.stat().st_mode & 0o777, outbound.stat().st_gid) == (0o750, gid)
    notebook = release(outbound, instructor)

    assert as_user(member, "ls", str(outbound)).stdout.split() == [ASSIGNMENT]
    assert as_user(member, "cat", str(notebook)).stdout == '{"cells": []}'
    for attempt in (["ls", str(outbound)], ["cat", str(notebook)]):
        refused = as_user(outsider, *attempt)
        assert refused.returncode != 0 and "Permission denied" in refused.stderr
    assert as_user(instructor, "cat", str(notebook)).returncode == 0

    # taken off the roster (make class run again without them): refused too
    exchange_layout(root, course_id, instructor, roster_group(course_id, [instructor]))
    refused = as_user(member, "cat", str(notebook))
    assert refused.returncode != 0 and "Permission denied" in refused.stderr
