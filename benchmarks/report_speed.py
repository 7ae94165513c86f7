"""Benchmark: `autograder report` on the sample class, against `nbgrader export` in the same run.

Builds a course with every assignment, hands in the sample class (7 students; with
`--students N`, a class of N copying the sample class round-robin), grades it with
`autograder grade`, then times, on the same gradebook: `nbgrader export` (the baseline: one
pass over the gradebook), the report's gathering (gradebook and stored diagnoses), its
page (plots included) and its CSVs in process, and the whole `autograder report` command
(interpreter start and imports included). Prints seconds and the ratio to the export.

    python benchmarks/report_speed.py [--students N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from autograder.authoring.sample_class import (  # noqa: E402
    make_course,
    submit_class_of,
    submit_sample_class,
)
from autograder.grading.runner import Grader  # noqa: E402
from autograder.report import build, render_html, write_csvs  # noqa: E402
from autograder.specs import SPECS  # noqa: E402


def command(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    started = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return elapsed


def best(repeat: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=0, help="0: the sample class itself")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    assignments = sorted(SPECS)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "exchange").mkdir()
        config = f"c.Exchange.root = {str(root / 'exchange')!r}\n"
        course = make_course(root / "course", assignments, extra_config=config)
        if args.students:
            submit_class_of(course, assignments, args.students)
        else:
            submit_sample_class(course, assignments)
        started = time.perf_counter()
        outcomes = list(Grader(course).run())
        graded = sum(o.status == "graded" for o in outcomes)
        print(f"graded {graded} submissions in {time.perf_counter() - started:.1f} s")
        export = best(args.repeat, lambda: command([str(BIN / "nbgrader"), "export"], course))
        report = build(course)
        gather = best(args.repeat, lambda: build(course))
        page = best(args.repeat, lambda: render_html(report))
        out = root / "reports"
        out.mkdir()
        tables = best(args.repeat, lambda: write_csvs(report, out))
        whole = best(args.repeat, lambda: command([str(BIN / "autograder"), "report"], course))
    parts = sum(1 for p in report.parts if p.submitted)
    print(
        f"class: {len(report.progress)} students, {len(report.assignments)} released "
        f"assignments, {parts} parts, {sum(map(len, report.slips.values()))} root mistakes, "
        f"{sum(map(len, report.follow_ons.values()))} follow-ons (best of {args.repeat})"
    )
    for rank, m in enumerate(report.misconceptions, 1):
        print(f"  {rank}. {m.words}: {len(m.students)} ({', '.join(m.students)}), e.g. {m.example}")
    print(f"nbgrader export (baseline)      {export:7.2f} s")
    print(f"report: gather (in process)     {gather:7.2f} s   {gather / export:5.2f} x export")
    print(f"report: page with plots         {page:7.2f} s   {page / export:5.2f} x export")
    print(f"report: CSVs                    {tables:7.2f} s   {tables / export:5.2f} x export")
    print(f"`autograder report` (command)   {whole:7.2f} s   {whole / export:5.2f} x export")
    return 0


if __name__ == "__main__":
    sys.exit(main())
