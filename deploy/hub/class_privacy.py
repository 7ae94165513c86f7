"""What `make class` closes and opens: the course folder, homes, nbgrader's exchange.

Run as root by serve.py before the hub starts. The course folder (solutions, gradebook,
submissions, autograded, feedback, site settings, grader state) is the instructor's alone
(mode 0700); every class member's home is theirs alone (0700); the exchange is laid out
as nbgrader intends, with the sticky bits that keep one student from renaming or
replacing what another (or the instructor) put there:

    <root>                 1777 root        anyone creates, only owners rename or delete
    <root>/<course>        0755 instructor  only the instructor changes what is in it
        outbound/          0755 instructor  released assignments: read-only to students
        inbound/           3733 instructor  hand-ins: write-only, not listable, sticky
        feedback/          0711 instructor  feedback pages, each under a secret name
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from autograder.core.givens import SECRET_FILE

EXCHANGE_MODES = {"": 0o755, "outbound": 0o755, "inbound": 0o3733, "feedback": 0o711}
ROOT_MODE = 0o1777
PRIVATE = 0o700


class ClassError(Exception):
    """A requirement of the class server is not met."""


def closed_to_others(path: Path) -> Path | None:
    """The first folder on the way to `path` that other users cannot enter, or `path`
    itself when they cannot run it; None: every user reaches and runs it."""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def home_of(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def private_homes(users: list[str]) -> list[str]:
    """Make each user's home 0700 (only where others could enter or read it); what was
    changed, as lines to print. Refuses a home its user does not own."""
    changed = []
    for user in users:
        account = pwd.getpwnam(user)
        home = Path(account.pw_dir)
        if not home.is_dir():
            continue  # no home yet: JupyterHub's spawner refuses to start them anyway
        info = home.stat()
        if info.st_uid != account.pw_uid:
            raise ClassError(f"{user}'s home {home} is not theirs: `chown {user} {home}`")
        if info.st_mode & 0o077:
            home.chmod(PRIVATE)
            changed.append(f"{user}'s home {home}: mode {info.st_mode & 0o777:o} -> 700")
    return changed


def private_course(course: Path, owner: int) -> str | None:
    """The course folder closed to everyone but its owner (the instructor)."""
    info = course.stat()
    if info.st_uid != owner:
        raise ClassError(f"{course} is not the instructor's")
    if info.st_mode & 0o077:
        course.chmod(PRIVATE)
        return f"course folder {course}: mode {info.st_mode & 0o777:o} -> 700"
    return None


def secret_problem(course: Path, owner: int) -> str | None:
    """Why the instructor (`owner`), as whom the check service and the grader run, could
    not read the course's secret (None: they can, or there is none). The hub, as root,
    always could: a secret only root may read would give students keys that the check
    service cannot match."""
    path = course / SECRET_FILE
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != owner or not info.st_mode & 0o400:
        return (
            f"the course's secret {path} must be a file the instructor owns and may read "
            f"(it is owned by uid {info.st_uid}, mode {info.st_mode & 0o7777:o})"
        )
    return None


def exchange_layout(root: Path, course_id: str, instructor: str) -> None:
    """Create or repair the exchange for `course_id` (see the module's table).

    A course folder in the exchange that the instructor does not own was made by someone
    else (perhaps to plant what students fetch): refused, with what to check."""
    account = pwd.getpwnam(instructor)
    root.mkdir(parents=True, exist_ok=True)
    if root.stat().st_uid != 0:
        raise ClassError(f"the exchange root {root} must belong to root: `chown root {root}`")
    root.chmod(ROOT_MODE)
    course = root / course_id
    for name, mode in EXCHANGE_MODES.items():
        folder = course / name if name else course
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise ClassError(f"{folder} is not a folder: remove it (`rm {folder}`)")
        if not folder.exists():
            folder.mkdir()
            os.chown(folder, account.pw_uid, account.pw_gid)
        elif folder.stat().st_uid != account.pw_uid:
            raise ClassError(
                f"{folder} belongs to uid {folder.stat().st_uid}, not the instructor "
                f"{instructor}: someone else made it. Check what it holds, then "
                f"`rm -r {folder}` and start again"
            )
        folder.chmod(mode)
