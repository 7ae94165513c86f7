"""Benchmark: `autograder grade` against `nbgrader autograde` on the same class, same run.

Builds a class of N students (default 40) x every assignment from the sample class
submissions, grades one copy with `nbgrader autograde` (one call per assignment, as an
instructor would) and another with `autograder grade`, checks the exported grades are
identical, and prints both wall times, the ratio, seconds per notebook, the floor a fresh
kernel pays (kernel start + `import torch`) and the sandbox's overhead per notebook.

    python benchmarks/grading_speed.py --students 40
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from autograder.authoring.sample_class import make_course, submit_class_of  # noqa: E402
from autograder.sandbox.workers import default_jobs  # noqa: E402


def run(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    started = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return elapsed


def grades(course: Path) -> list[dict[str, str]]:
    run([str(BIN / "nbgrader"), "export", "--to", "grades.csv"], course)
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return sorted(rows, key=lambda r: (r["assignment"], r["student_id"]))


def floor_seconds() -> float:
    """A bare kernel start plus `import torch`: what every notebook costs nbgrader."""
    code = (
        "import time, jupyter_client\n"
        "t = time.perf_counter()\n"
        "km, kc = jupyter_client.manager.start_new_kernel(kernel_name='python3')\n"
        "kc.execute_interactive('import torch', timeout=60)\n"
        "print(time.perf_counter() - t)\n"
        "kc.stop_channels(); km.shutdown_kernel(now=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40, help="class size (default 40)")
    parser.add_argument(
        "--jobs", type=int, default=default_jobs(), help="grader workers (default: as grade's)"
    )
    parser.add_argument(
        "--skip-nbgrader", action="store_true", help="only time autograder (no baseline)"
    )
    args = parser.parse_args()
    assignments = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        root = Path(tmp)
        ours = make_course(root / "ours", assignments)
        notebooks = submit_class_of(ours, assignments, args.students)
        print(
            f"class: {args.students} students x {len(assignments)} assignments = {notebooks} notebooks"
        )
        ours_s = run([str(BIN / "autograder"), "grade", "--quiet", "-j", str(args.jobs)], ours)
        print(
            f"autograder grade (sandboxed, {args.jobs} workers): {ours_s:7.1f} s "
            f"= {ours_s / notebooks:.3f} s/notebook"
        )
        open_course = make_course(root / "open", assignments)
        submit_class_of(open_course, assignments, args.students)
        open_s = run(
            [str(BIN / "autograder"), "grade", "--quiet", "--no-sandbox", "-j", str(args.jobs)],
            open_course,
        )
        overhead = (ours_s - open_s) / notebooks
        print(
            f"autograder grade --no-sandbox:               {open_s:7.1f} s "
            f"(sandbox overhead {overhead * 1000:+.0f} ms/notebook)"
        )
        floor = floor_seconds()
        print(f"floor per notebook for nbgrader (kernel start + import torch): {floor:.2f} s")
        if args.skip_nbgrader:
            return 0
        theirs = make_course(root / "nbgrader", assignments)
        submit_class_of(theirs, assignments, args.students)
        started = time.perf_counter()
        for name in assignments:
            run([str(BIN / "nbgrader"), "autograde", name], theirs)
        theirs_s = time.perf_counter() - started
        print(
            f"nbgrader autograde:                          {theirs_s:7.1f} s "
            f"= {theirs_s / notebooks:.3f} s/notebook"
        )
        same = grades(theirs) == grades(ours)
        print(f"speed-up: {theirs_s / ours_s:.1f}x  (goal: 10x)   identical grades.csv: {same}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
