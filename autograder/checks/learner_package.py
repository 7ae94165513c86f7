"""The `autograder` package of a class's students' environment: answer-free, by list.

`autograder_client/__init__.py` becomes `autograder/__init__.py`, beside the few modules
of the real package it uses, which hold no answer, chain or known mistake: how verdicts
and numbers are shown (`core.verdict`), building a graph with any `Value` class
(`core.value_build`, also mounted in the grading sandbox), the kernel's side of a check
(`learner.kernel`) and the wire format of a value (`learner.wire`). The lessons' own
package (`autograd_lessons`) is installed beside it unchanged.

`python -m autograder.checks.learner_package DEST` writes both into DEST (a
folder on the students' Python path, e.g. their environment's site-packages).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent
CLIENT = REPO / "autograder_client" / "__init__.py"
LESSONS = REPO / "autograd_lessons"
SHIPPED = (  # modules of the real package the client imports: answer-free
    "py.typed",
    "core/__init__.py",
    "core/verdict.py",
    "core/value_build.py",
    "learner/__init__.py",
    "learner/kernel.py",
    "learner/wire.py",
)


def learner_files() -> dict[str, Path]:
    """Path inside DEST -> file of this repository, for the whole students' package set."""
    files = {"autograder/__init__.py": CLIENT}
    files.update({f"autograder/{name}": PACKAGE / name for name in SHIPPED})
    for source in sorted(LESSONS.rglob("*")):
        if source.is_dir() or "__pycache__" in source.parts:
            continue
        files[f"autograd_lessons/{source.relative_to(LESSONS)}"] = source
    return files


def install(dest: Path) -> list[Path]:
    """Write the students' `autograder` and `autograd_lessons` into `dest` (replacing
    earlier copies of both); the files written."""
    for name in ("autograder", "autograd_lessons"):
        shutil.rmtree(dest / name, ignore_errors=True)
    written = []
    for inside, source in learner_files().items():
        target = dest / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(0o644)
        written.append(target)
    for folder in {p.parent for p in written}:
        folder.chmod(0o755)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="a folder on the students' Python path")
    args = parser.parse_args(argv)
    written = install(args.dest)
    print(f"{len(written)} files of the students' packages in {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
