"""Benchmark: the small jobs, `autograder grade` against `nbgrader autograde`, side by side.

Three jobs an instructor runs every day, each timed as a whole command for both tools
(interpreter start included), in alternating rounds on fresh copies of the same course,
and reported as medians and the ratio of the medians:

- **cold**: one notebook (the sample class's ada, `03_a_neuron_by_hand`) in a course
  never graded before;
- **resubmission**: the same notebook handed in again and graded again (`--force` for
  nbgrader), in the course the cold run left;
- **nbgrader's user-guide course**: the `ps1` of `course101` that ships inside nbgrader
  (`nbgrader/docs/source/user_guide`: 2 students x 2 notebooks, plain Python, no torch).

A goal is met only when both the ratio of the medians and that of the fastest runs meet it
(nbgrader's own time varies: its kernels sometimes wait about 2 s before they end). Every
round checks that both tools exported the same grades (`nbgrader export`); a
difference fails the benchmark (exit 1). The goals are issue 28's: cold at most 0.35 of
nbgrader's time, a resubmission at most 0.25, the user-guide course at least 4x.
`--against COMMIT` times that commit's `autograder grade` too (a git worktree, run with
this environment), in the same rounds, so a change is measured against its base under
the same load.

    python benchmarks/small_jobs.py --rounds 3 [--against 225fe2b]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"
GUIDE_CONFIG = """c = get_config()
c.CourseDirectory.course_id = "course101"
c.CourseDirectory.db_students = [dict(id="bitdiddle"), dict(id="hacker")]
c.CourseDirectory.db_assignments = [dict(name="ps1")]
"""
GOALS = {"cold": 0.35, "resubmission": 0.25, "user-guide course": 0.25}


def command(args: list[str], cwd: Path, checkout: Path | None = None) -> float:
    """Run one command in `cwd` (with `checkout`'s code first on the path); its wall
    seconds (exits with its output if it failed)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    started = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed in {cwd}:\n{(result.stdout + result.stderr)[-3000:]}")
    return elapsed


def exported(course: Path) -> list[dict[str, str]]:
    """The course's grades as `nbgrader export` writes them, sorted."""
    command([str(BIN / "nbgrader"), "export", "--to", "grades.csv"], course)
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return sorted(rows, key=lambda r: (r["assignment"], r["student_id"]))


def ours(assignment: str, checkout: Path | None = None) -> list[str]:
    if checkout is not None:  # that checkout's command, as `python -m` finds it first
        return [sys.executable, "-m", "autograder.cli", "grade", "--quiet", assignment]
    return [str(BIN / "autograder"), "grade", "--quiet", assignment]


def theirs(assignment: str, force: bool = False) -> list[str]:
    return [str(BIN / "nbgrader"), "autograde", assignment, *(["--force"] if force else [])]


def sample_course(root: Path) -> Path:
    """A course of the one assignment, with ada's notebook submitted."""
    from autograder.authoring.sample_class import SAMPLE_CLASS, make_course

    course = make_course(root, [ASSIGNMENT])
    shutil.copytree(SAMPLE_CLASS / "ada" / ASSIGNMENT, course / "submitted" / "ada" / ASSIGNMENT)
    return course


def guide_course(root: Path) -> Path:
    """nbgrader's own user-guide course: its source and its two students' submissions,
    the assignment generated (so the gradebook knows it) as its guide does."""
    import nbgrader

    guide = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"
    if not (guide / "submitted").is_dir():
        sys.exit(f"nbgrader's user-guide course is not installed with nbgrader ({guide})")
    root.mkdir(parents=True)
    shutil.copytree(guide / "source", root / "source")
    shutil.copytree(guide / "submitted", root / "submitted")
    (root / "nbgrader_config.py").write_text(GUIDE_CONFIG)
    command([str(BIN / "nbgrader"), "generate_assignment", "ps1", "--force"], root)
    return root


def resubmit(course: Path) -> None:
    """Hand ada's notebook in again (a changed file: graded again)."""
    notebook = course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook.write_text(notebook.read_text() + " ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--against", help="a commit whose `autograder grade` is timed too")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="small-jobs-") as tmp:
        root = Path(tmp)
        checkouts: dict[str, Path | None] = {"autograder": None, "nbgrader": None}
        if args.against:
            from diagnosis_cost import worktree

            checkouts[f"autograder@{args.against}"] = worktree(args.against, root)
        try:
            return compare(root, checkouts, args.rounds)
        finally:
            if args.against:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(root / "before")],
                    capture_output=True,
                )  # fmt: skip


def compare(root: Path, checkouts: dict[str, Path | None], rounds: int) -> int:
    """The alternating rounds of every tool of `checkouts` (the name: where its code is,
    None for this environment's); the report, and 1 if any exported other grades."""
    times: dict[str, dict[str, list[float]]] = {job: {t: [] for t in checkouts} for job in GOALS}
    differences = 0
    sample = sample_course(root / "sample")
    guide = guide_course(root / "guide")
    for round_number in range(rounds):
        for tool, checkout in checkouts.items():
            course = root / f"{tool}-{round_number}"
            shutil.copytree(sample, course)
            mine = tool != "nbgrader"
            cold = ours(ASSIGNMENT, checkout) if mine else theirs(ASSIGNMENT)
            times["cold"][tool].append(command(cold, course, checkout))
            resubmit(course)
            again = ours(ASSIGNMENT, checkout) if mine else theirs(ASSIGNMENT, True)
            times["resubmission"][tool].append(command(again, course, checkout))
            course_101 = root / f"{tool}-guide-{round_number}"
            shutil.copytree(guide, course_101)
            graded = ours("ps1", checkout) if mine else theirs("ps1")
            times["user-guide course"][tool].append(command(graded, course_101, checkout))
        for kind in ("", "-guide"):
            reference = exported(root / f"nbgrader{kind}-{round_number}")
            for tool in [tool for tool in checkouts if tool != "nbgrader"]:
                if exported(root / f"{tool}{kind}-{round_number}") != reference:
                    differences += 1
                    print(f"round {round_number + 1}{kind}: {tool} exported other grades")
    with open("/proc/loadavg") as load:
        print(f"{rounds} rounds, alternating; load average {load.read()[:14]}")
    for job, goal in GOALS.items():
        theirs_ = times[job]["nbgrader"]
        base, fastest = statistics.median(theirs_), min(theirs_)
        print(f"{job}: nbgrader {base:.2f} s (median; {fastest:.2f}-{max(theirs_):.2f} s)")
        for tool in [tool for tool in checkouts if tool != "nbgrader"]:
            mine = statistics.median(times[job][tool])
            ratio, best = mine / base, min(times[job][tool]) / fastest
            verdict = "met" if max(ratio, best) <= goal else "NOT met"
            print(
                f"  {tool:22} {mine:5.2f} s: ratio {ratio:.2f} of the medians ({base / mine:.1f}x),"
                f" {best:.2f} of the fastest runs; goal at most {goal}: {verdict}"
            )
    print(f"grades identical in every round: {differences == 0}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
