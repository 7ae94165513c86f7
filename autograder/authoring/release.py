"""Generate `exercises/` (the learners' release) from `solutions/` with nbgrader, or check it.

`python -m autograder.authoring.release` regenerates every assignment; `--check` regenerates into a
temporary course and exits 1 naming every release notebook that differs (a stale release).
`--assign` (`make assign`) readies the course itself for a class: nbgrader records every
assignment in the course's gradebook and writes its release folder (`release/`, from which
`nbgrader release_assignment` and formgrader publish to the exchange); `exercises/` is
left alone. Generation runs nbgrader's own `generate_assignment`, then tidies the result:
metadata is cleaned and the cells that are meant to fail until answered carry nbval's
`raises-exception` tag.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat

from autograder.authoring.hygiene import clean
from autograder.grading.nbgrader_internals import shared_gradebook_work

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPECTED_FAILURE_TAG = "raises-exception"


def assignment_names(source_dir: Path) -> list[str]:
    """The assignments in an nbgrader source folder, in order."""
    return sorted(p.name for p in source_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def tag_expected_failures(nb: Any) -> Any:
    """Tag unanswered answer cells and their test cells: they fail until the learner answers."""
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        unanswered = "raise NotImplementedError" in cell.source
        is_test = bool(meta.get("grade")) and not meta.get("solution")
        if unanswered or is_test:
            tags = list(cell.metadata.get("tags", []))
            if EXPECTED_FAILURE_TAG not in tags:
                tags.append(EXPECTED_FAILURE_TAG)
            cell.metadata["tags"] = tags
    return nb


def generate(course_root: Path, names: list[str], release: str = "exercises") -> None:
    """Run nbgrader generate_assignment in `course_root` (which has an nbgrader_config.py),
    writing the release into `course_root/release`, and the course's gradebook (its
    configured `db_url`, else `gradebook.db` in `course_root`). A new gradebook is made
    without nbgrader's `alembic` process (`shared_gradebook_work`)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    config.CourseDirectory.root = str(course_root)
    config.CourseDirectory.release_directory = release
    if "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = f"sqlite:///{course_root / 'gradebook.db'}"
    coursedir = CourseDirectory(config=config)
    api = NbGraderAPI(coursedir=coursedir, config=config)
    with shared_gradebook_work():
        for name in names:
            result = api.generate_assignment(name, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(
                    f"nbgrader generate_assignment {name} failed:\n{result.get('error', '')}\n"
                    f"{result.get('log', '')}"
                )
            for path in sorted((course_root / release / name).glob("*.ipynb")):
                nb = nbformat.read(path, as_version=4)
                nbformat.write(tag_expected_failures(clean(nb)), path)


def build_in_temporary_course(repo: Path, names: list[str], workdir: Path) -> Path:
    """Copy the sources into a throwaway course, generate there, return its exercises/."""
    course = workdir / "course"
    course.mkdir()
    shutil.copytree(repo / "solutions", course / "solutions")
    shutil.copy(repo / "nbgrader_config.py", course / "nbgrader_config.py")
    generate(course, names)
    return course / "exercises"


def stale_files(generated: Path, committed: Path) -> list[str]:
    """Relative paths that differ between a fresh release and the committed one."""
    problems = []
    fresh = {p.relative_to(generated) for p in generated.rglob("*") if p.is_file()}
    stored = {p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
    for rel in sorted(fresh | stored):
        if rel not in stored:
            problems.append(f"{rel}: missing from exercises/")
        elif rel not in fresh:
            problems.append(f"{rel}: in exercises/ but not generated from solutions/")
        elif (generated / rel).read_bytes() != (committed / rel).read_bytes():
            problems.append(f"{rel}: differs from what solutions/ generates")
    return problems


def assign(repo: Path, wanted: list[str], known: list[str]) -> int:
    """`--assign`: nbgrader's gradebook entries and release/ for `wanted`, from solutions/."""
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        print(f"error: no such assignment in solutions/: {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        generate(repo, wanted, release="release")
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"assigned {len(wanted)}: gradebook filled and release/ written ({', '.join(wanted)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: regenerate exercises/ or check that it is up to date."""
    parser = argparse.ArgumentParser(
        prog="python -m autograder.authoring.release",
        description="Generate exercises/ from solutions/ with nbgrader (or --check it is current).",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    mode.add_argument(
        "--assign",
        action="store_true",
        help="fill the course's gradebook and release/ for the exchange (exercises/ untouched)",
    )
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help="course repository root")
    parser.add_argument("assignments", nargs="*", help="with --assign: only these (default: all)")
    args = parser.parse_args(argv)
    repo: Path = args.repo.resolve()
    if not (repo / "solutions").is_dir():
        print(f"error: {repo / 'solutions'} does not exist", file=sys.stderr)
        return 2
    names = assignment_names(repo / "solutions")
    if args.assign:
        return assign(repo, args.assignments or names, names)
    if args.assignments:
        parser.error("naming assignments needs --assign")
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        generated = build_in_temporary_course(repo, names, Path(tmp))
        if args.check:
            problems = stale_files(generated, repo / "exercises")
            for line in problems:
                print(f"stale: {line}")
            if problems:
                print("exercises/ is out of date: run `make exercises` and commit the result.")
                return 1
            print(f"exercises/ is up to date ({len(names)} assignments).")
            return 0
        target = repo / "exercises"
        staging = repo / ".exercises.new"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(generated, staging)
        # Swap in one step so a failure never leaves a half-written release behind.
        backup = repo / ".exercises.old"
        shutil.rmtree(backup, ignore_errors=True)
        if target.exists():
            target.rename(backup)
        staging.rename(target)
        shutil.rmtree(backup, ignore_errors=True)
        print(f"generated exercises/ for {len(names)} assignments: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
