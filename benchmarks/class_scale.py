"""Benchmark: how far one grading machine goes. Notebooks per second per core, the
recording ceiling, and the largest class graded in an hour.

Grades a class of N students x every assignment (the sample class's submissions copied
round-robin) with `autograder grade` twice in this run: with one worker (the baseline)
and with one worker per core. The grader's own work per notebook (preparing it with
nbgrader's sanitisers, judging it, recording it through nbgrader into autograded/ and the
gradebook) happens in one thread whatever the number of workers, so its time per notebook
is the ceiling on throughput however many cores execute; it is timed around
`Grader.prepare` and `Grader.grade_one`.

    python benchmarks/class_scale.py --students 12
    python benchmarks/class_scale.py --students 12 --db-url postgresql://...  (a server)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.authoring.sample_class import make_course, submit_class_of  # noqa: E402
from autograder.grading.runner import Grader, Outcome, Submission  # noqa: E402
from autograder.sandbox.workers import ExecutionResult  # noqa: E402


class TimedGrader(Grader):
    """A Grader that also times its own thread's work per submission (nothing else changes)."""

    serial: dict[str, float]

    def prepare(self, sub: Submission, notebook_ids: list[str]) -> None:
        started = time.perf_counter()
        try:
            super().prepare(sub, notebook_ids)
        finally:
            self.serial[sub.key] = self.serial.get(sub.key, 0.0) + time.perf_counter() - started

    def grade_one(self, sub: Submission, future: Future[list[ExecutionResult]]) -> Outcome:
        future.result()  # waiting for the worker is not the grader's work
        started = time.perf_counter()
        try:
            return super().grade_one(sub, future)
        finally:
            self.serial[sub.key] = self.serial.get(sub.key, 0.0) + time.perf_counter() - started


def grade(course: Path, jobs: int) -> dict[str, Any]:
    grader = TimedGrader(course, jobs=jobs)
    grader.serial = {}
    started = time.perf_counter()
    outcomes = list(grader.run())
    wall = time.perf_counter() - started
    failed = [o.submission.key for o in outcomes if o.status != "graded"]
    if failed:
        sys.exit(f"grading failed for {failed}")
    return {"wall": wall, "notebooks": len(outcomes), "serial": list(grader.serial.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument(
        "--db-url", help="gradebook URL (default: SQLite in each course; a server is shared)"
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    assignments = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="class-scale-") as tmp:
        extra = f'c.CourseDirectory.db_url = "{args.db_url}"\n' if args.db_url else ""
        runs = []
        for jobs in (1, cores):  # each in a fresh course: a regrade records more than a grade
            course = make_course(Path(tmp) / f"course-{jobs}", assignments, extra_config=extra)
            notebooks = submit_class_of(course, assignments, args.students)
            if not runs:
                print(f"class: {args.students} students x {len(assignments)} assignments = "
                      f"{notebooks} notebooks; {cores} cores; gradebook "
                      f"{'PostgreSQL' if args.db_url else 'SQLite'}")  # fmt: skip
            runs.append(grade(course, jobs))
        one, many = runs
    for label, run in (("1 worker (baseline)", one), (f"{cores} workers", many)):
        rate = run["notebooks"] / run["wall"]
        print(f"{label:>20}: {run['wall']:6.1f} s, {rate:5.2f} notebooks/s")
    per_core = one["notebooks"] / one["wall"]
    record = sorted(many["serial"])
    record_mean = sum(record) / len(record)
    ceiling = 1 / record_mean
    speedup = one["wall"] / many["wall"]
    print(f"speed-up with {cores} workers: {speedup:.2f}x the baseline")
    print(f"notebooks per second per core: {per_core:.2f} (one worker, recording included)")
    print(f"the grader's thread (prepare, judge, record): {record_mean * 1000:.0f} ms per "
          f"notebook (median "
          f"{record[len(record) // 2] * 1000:.0f} ms): ceiling {ceiling:.1f} notebooks/s "
          f"= {ceiling * 3600:.0f} per hour, however many cores execute")  # fmt: skip
    measured = round(many["notebooks"] / many["wall"] * 3600)
    print(f"this machine: {measured} notebooks per hour: a class of {measured} "
          "students handing in one notebook each is graded within the hour")  # fmt: skip


if __name__ == "__main__":
    main()
