#!/usr/bin/env python3
"""exchange-gate: per-student identity for nbgrader's exchange when every pod is uid 1000.

On Zero to JupyterHub every user's pod runs as the same uid, so file ownership cannot tell
students apart, and nbgrader names a hand-in after whatever JUPYTERHUB_USER the pod (or
the student, in a terminal) says. Identity comes from the mounts instead: the student
profile (values.yaml) mounts, from the exchange volume,

    <course>/outbound/                  read-only, at the exchange's outbound/
    <course>/by-user/<login>/inbound/   at the exchange's inbound/   (subPath {username})
    <course>/by-user/<login>/feedback/  read-only, at its feedback/  (subPath {username})

so a student sees only the released assignments, their own hand-ins and their own
feedback. This gate (a Deployment with the whole exchange volume, never mounted in a
student's pod) is the only way between those folders and nbgrader's own flat ones:

- a hand-in in by-user/<login>/inbound/ whose name says student <login> is moved (one
  rename, same filesystem) into <course>/inbound/, where `autograder serve` or `nbgrader
  collect` take it, once nbgrader has written its timestamp.txt and submission_secret.txt
  (the last files `nbgrader submit` writes) and nothing in it changed for --settle seconds;
- a hand-in naming anyone else, or that is not a plain folder, is moved to
  <course>/refused/<login>/ with a line saying why, never to inbound/;
- feedback released by `nbgrader release_feedback` (<course>/feedback/<hash>.html) is
  copied to by-user/<student>/feedback/ for the student whose feedback folder in the
  course (mounted read-only) yields that hash, computed with nbgrader's own notebook_hash.

`--roster FILE` (one login per line) creates by-user/<login>/{inbound,feedback} for each
student before they log in. Logins must be what KubeSpawner's {username} leaves
unchanged (lowercase letters, digits, single hyphens); the hub's
Authenticator.username_pattern in values.yaml enforces it.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import time
from pathlib import Path

LOGIN = re.compile(r"^[a-z](?:[a-z0-9]|-(?!-)){0,30}[a-z0-9]$")
LAST_WRITTEN = ("timestamp.txt", "submission_secret.txt")


class Layout:
    """The exchange folders of one course."""

    def __init__(self, exchange: Path, course_id: str) -> None:
        self.course = exchange / course_id
        self.outbound = self.course / "outbound"
        self.inbound = self.course / "inbound"
        self.feedback = self.course / "feedback"
        self.by_user = self.course / "by-user"
        self.refused = self.course / "refused"

    def student_inbound(self, login: str) -> Path:
        return self.by_user / login / "inbound"

    def student_feedback(self, login: str) -> Path:
        return self.by_user / login / "feedback"

    def logins(self) -> list[str]:
        if not self.by_user.is_dir():
            return []
        return sorted(p.name for p in self.by_user.iterdir() if LOGIN.match(p.name))


def prepare(layout: Layout, roster: list[str]) -> list[str]:
    """nbgrader's folders and each rostered student's own; lines about bad logins."""
    lines = []
    for folder in (layout.outbound, layout.inbound, layout.feedback, layout.by_user):
        folder.mkdir(parents=True, exist_ok=True)
    for login in roster:
        if not LOGIN.match(login):
            lines.append(f"roster: {login!r} is not a login the exchange can name; skipped")
            continue
        layout.student_inbound(login).mkdir(parents=True, exist_ok=True)
        layout.student_feedback(login).mkdir(parents=True, exist_ok=True)
    return lines


def _settled(entry: Path, settle: float, now: float) -> bool:
    """nbgrader wrote its last files, and nothing in the folder changed for `settle` s."""
    newest = entry.lstat().st_mtime
    for name in LAST_WRITTEN:
        try:
            info = (entry / name).lstat()
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
    for child in entry.iterdir():
        newest = max(newest, child.lstat().st_mtime)
    return now - newest >= settle


def _refuse(layout: Layout, login: str, entry: Path, why: str) -> str:
    place = layout.refused / login
    place.mkdir(parents=True, exist_ok=True)
    os.rename(entry, place / entry.name)
    return f"REFUSED {login}: inbound/{entry.name}: {why}"


def forward_handins(layout: Layout, settle: float = 2.0, now: float | None = None) -> list[str]:
    """Move each student's complete, truthfully named hand-ins into nbgrader's inbound/."""
    now = time.time() if now is None else now
    lines = []
    for login in layout.logins():
        own = layout.student_inbound(login)
        if not own.is_dir():
            continue
        for entry in sorted(own.iterdir()):
            info = entry.lstat()
            if not stat.S_ISDIR(info.st_mode):
                lines.append(_refuse(layout, login, entry, "not a folder"))
                continue
            named = entry.name.split("+")
            if len(named) < 3:
                lines.append(_refuse(layout, login, entry, "not student+assignment+timestamp"))
                continue
            if named[0] != login:
                why = f"names student {named[0]!r}, handed in by {login!r}"
                lines.append(_refuse(layout, login, entry, why))
                continue
            if not _settled(entry, settle, now):
                continue
            target = layout.inbound / entry.name
            if target.exists():
                lines.append(f"exchange: inbound/{entry.name} exists; left in by-user/{login}")
                continue
            os.rename(entry, target)
            lines.append(f"forwarded {login}: {entry.name}")
    return lines


def forward_feedback(layout: Layout, course_feedback: Path) -> list[str]:
    """Copy released feedback (<course>/feedback/<hash>.html) to its student's folder."""
    from nbgrader.utils import notebook_hash

    lines = []
    if not course_feedback.is_dir():
        return lines
    known = set(layout.logins())
    for student_dir in sorted(course_feedback.iterdir()):
        if student_dir.name not in known:
            continue
        for assignment in sorted(p for p in student_dir.iterdir() if p.is_dir()):
            secret_file = assignment / "submission_secret.txt"
            if not secret_file.is_file():
                continue
            secret = secret_file.read_text()
            for page in sorted(assignment.glob("*.html")):
                checksum = notebook_hash(secret=secret, notebook_id=page.stem)
                released = layout.feedback / f"{checksum}.html"
                if not released.is_file():
                    continue  # generated, not released
                dest = layout.student_feedback(student_dir.name) / released.name
                content = released.read_bytes()
                if dest.is_file() and dest.read_bytes() == content:
                    continue
                partial = dest.with_name(f".{dest.name}.partial")
                partial.write_bytes(content)
                os.replace(partial, dest)
                lines.append(f"feedback {student_dir.name}/{assignment.name}/{page.stem}")
    return lines


def run_once(layout: Layout, course_feedback: Path, settle: float) -> list[str]:
    return forward_handins(layout, settle) + forward_feedback(layout, course_feedback)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchange", type=Path, default=Path("/srv/nbgrader/exchange"))
    parser.add_argument("--course-id", default=os.environ.get("COURSE_ID", "backward-course"))
    parser.add_argument("--course-feedback", type=Path, default=Path("/course/feedback"))
    parser.add_argument("--roster", type=Path, help="one login per line")
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--settle", type=float, default=2.0)
    parser.add_argument("--once", action="store_true", help="one pass, then exit")
    args = parser.parse_args(argv)
    layout = Layout(args.exchange, args.course_id)
    roster = []
    if args.roster:
        roster = [line.strip() for line in args.roster.read_text().splitlines() if line.strip()]
    for line in prepare(layout, roster):
        print(line, flush=True)
    if args.once:
        for line in run_once(layout, args.course_feedback, args.settle):
            print(line, flush=True)
        return 0
    while True:
        for line in run_once(layout, args.course_feedback, args.settle):
            print(line, flush=True)
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
