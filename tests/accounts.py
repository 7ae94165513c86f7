"""Running a command as another, unprivileged account from a test that runs as root."""

from __future__ import annotations

import sys
from pathlib import Path

LAUNCH = Path(__file__).resolve().parent.parent / "autograder" / "sandbox" / "launch.py"
NOBODY = 65534


def as_account(uid: int, gid: int, argv: list[str]) -> list[str]:
    """`argv` run as uid/gid, with Python's install made reachable if it sits in a folder
    that account cannot enter (pyenv's under /root)."""
    shown = sorted({str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())})
    return [
        sys.executable, "-I", str(LAUNCH), "--uid", str(uid), "--gid", str(gid),
        "--reveal", *shown, "--", *argv,
    ]  # fmt: skip
