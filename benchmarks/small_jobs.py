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

Every round checks that both tools exported the same grades (`nbgrader export`); a
difference fails the benchmark (exit 1). The goals are issue 28's: cold at most 0.35 of
nbgrader's time, a resubmission at most 0.25, the user-guide course at least 4x.

    python benchmarks/small_jobs.py --rounds 3
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


def command(args: list[str], cwd: Path) -> float:
    """Run one command in `cwd`; its wall seconds (exits with its output if it failed)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
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


def ours(assignment: str) -> list[str]:
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
    args = parser.parse_args()
    times: dict[str, dict[str, list[float]]] = {
        job: {"autograder": [], "nbgrader": []} for job in GOALS
    }
    differences = 0
    with tempfile.TemporaryDirectory(prefix="small-jobs-") as tmp:
        root = Path(tmp)
        sample = sample_course(root / "sample")
        guide = guide_course(root / "guide")
        for round_number in range(args.rounds):
            for tool in ("autograder", "nbgrader"):
                course = root / f"{tool}-{round_number}"
                shutil.copytree(sample, course)
                cold = ours(ASSIGNMENT) if tool == "autograder" else theirs(ASSIGNMENT)
                times["cold"][tool].append(command(cold, course))
                resubmit(course)
                again = ours(ASSIGNMENT) if tool == "autograder" else theirs(ASSIGNMENT, True)
                times["resubmission"][tool].append(command(again, course))
                course_101 = root / f"{tool}-guide-{round_number}"
                shutil.copytree(guide, course_101)
                graded = ours("ps1") if tool == "autograder" else theirs("ps1")
                times["user-guide course"][tool].append(command(graded, course_101))
            for kind in ("", "-guide"):
                mine = exported(root / f"autograder{kind}-{round_number}")
                if mine != exported(root / f"nbgrader{kind}-{round_number}"):
                    differences += 1
                    print(f"round {round_number + 1}{kind}: the exported grades differ")
    with open("/proc/loadavg") as load:
        print(f"{args.rounds} rounds, alternating; load average {load.read()[:14]}")
    for job, goal in GOALS.items():
        mine = statistics.median(times[job]["autograder"])
        base = statistics.median(times[job]["nbgrader"])
        ratio = mine / base
        print(
            f"{job:18} autograder {mine:5.2f} s, nbgrader {base:5.2f} s: ratio {ratio:.2f} "
            f"({base / mine:.1f}x; goal: at most {goal}) {'met' if ratio <= goal else 'NOT met'}"
        )
    print(f"grades identical in every round: {differences == 0}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
