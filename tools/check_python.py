"""Refuse, before pip runs, a Python the pinned stack cannot install on.

Run by tools/setup_venv.sh with the candidate interpreter (standard library only). The
supported range is pyproject.toml's `requires-python`, which tests/repository/test_environment.py
keeps at least as strict as every pinned package's own Requires-Python. Without this
check pip backtracks on, e.g., a Python 3.11 older than every pin admits and starts
downloading the 500 MB CUDA build of torch. Exit 0: supported; 1: refused, with the reason.
`--every-user` (run by `make class` before it builds anything) also refuses a Python that
some user cannot run: a folder on its way (the symbolic link's and the real file's) closed
to others, as a Python under /root is.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import stat
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
CLAUSE = re.compile(r"^\s*(>=|<=|==|<|>|!=)\s*([0-9]+(?:\.[0-9]+)*)\s*$")


def version_tuple(text: str) -> tuple[int, ...]:
    """'3.11.5' -> (3, 11, 5)."""
    return tuple(int(part) for part in text.split("."))


def problems(spec: str, version: str) -> list[str]:
    """The clauses of a `requires-python` spec that `version` breaks."""
    have = version_tuple(version)
    broken = []
    for clause in spec.split(","):
        match = CLAUSE.match(clause)
        if not match:
            raise ValueError(f"cannot read the requires-python clause {clause!r}")
        op, bound = match[1], version_tuple(match[2])
        width = max(len(have), len(bound))
        a = have + (0,) * (width - len(have))
        b = bound + (0,) * (width - len(bound))
        ok = {
            ">=": a >= b,
            "<=": a <= b,
            ">": a > b,
            "<": a < b,
            "==": a == b,
            "!=": a != b,
        }[op]
        if not ok:
            broken.append(clause.strip())
    return broken


def closed_to_others(path: Path) -> Path | None:
    """The first folder on the way to `path` (or `path`) others cannot enter or run.
    (deploy/hub/class_privacy.py checks the same as `make class` starts.)"""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def unreachable(python: Path) -> str | None:
    """Why some user cannot run `python`, or None."""
    for path in (python, Path(os.path.realpath(python))):
        blocked = closed_to_others(path)
        if blocked is not None:
            return f"{blocked} is closed to other users (on the way to {path})"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", help="judge this version instead of the running Python")
    parser.add_argument(
        "--every-user", action="store_true", help="also refuse a Python others cannot run"
    )
    args = parser.parse_args(argv)
    if args.every_user and (why := unreachable(Path(sys.executable))):
        print(
            f"error: the class's users cannot run this Python ({sys.executable}): {why}.\n"
            "       Use one every user can run, e.g. Debian's own: "
            "`make clean && sudo make class PYTHON=/usr/bin/python3 INSTRUCTOR=<login>`",
            file=sys.stderr,
        )
        return 1
    spec = tomllib.loads(PYPROJECT.read_text())["project"]["requires-python"]
    version = args.version or platform.python_version()
    broken = problems(spec, version)
    if broken:
        print(
            f"error: Python {version} ({sys.executable}) cannot install the course's pinned "
            f"packages: they need Python {spec} (fails {', '.join(broken)}).\n"
            "       Install a newer Python 3.11 (e.g. `uv python install 3.11`, pyenv, or "
            "conda: `conda env create -f environment.yml`)\n"
            "       and run `make lab PYTHON=/path/to/python3.11`.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
