"""Benchmark: how far one grading machine goes. Notebooks per second per core, the
recording ceiling, and the largest class graded in an hour.

Grades a class of N students x every assignment (the sample class's submissions copied
round-robin) with `autograder grade` twice in this run: with one worker (the baseline)
and with one worker per core. Recording (nbgrader writing autograded/ and the gradebook)
happens in one thread whatever the number of workers, so its time per notebook is the
ceiling on throughput however many cores execute; it is timed around `Grader.record`.

    python benchmarks/class_scale.py --students 12
    python benchmarks/class_scale.py --students 12 --db-url postgresql://...  (a server)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.runner import Grader, Submission  # noqa: E402
from autograder.sample_class import make_course, submit_class_of  # noqa: E402


class TimedGrader(Grader):
    """A Grader that also times nbgrader's recording step (nothing else changes)."""

    recording: list[float]

    def record(self, sub: Submission) -> tuple[float, float]:
        started = time.perf_counter()
        try:
            return super().record(sub)
        finally:
            self.recording.append(time.perf_counter() - started)


def grade(course: Path, jobs: int) -> dict[str, Any]:
    shutil.rmtree(course / ".autograder", ignore_errors=True)
    grader = TimedGrader(course, jobs=jobs, force=True)
    grader.recording = []
    started = time.perf_counter()
    outcomes = list(grader.run())
    wall = time.perf_counter() - started
    failed = [o.submission.key for o in outcomes if o.status != "graded"]
    if failed:
        sys.exit(f"grading failed for {failed}")
    return {"wall": wall, "notebooks": len(outcomes), "recording": grader.recording}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--db-url", help="gradebook URL (default: SQLite in the course)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    assignments = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="class-scale-") as tmp:
        extra = f'c.CourseDirectory.db_url = "{args.db_url}"\n' if args.db_url else ""
        course = make_course(Path(tmp) / "course", assignments, extra_config=extra)
        notebooks = submit_class_of(course, assignments, args.students)
        print(f"class: {args.students} students x {len(assignments)} assignments = "
              f"{notebooks} notebooks; {cores} cores; gradebook "
              f"{'PostgreSQL' if args.db_url else 'SQLite'}")  # fmt: skip
        one = grade(course, 1)
        many = grade(course, cores)
    for label, run in (("1 worker (baseline)", one), (f"{cores} workers", many)):
        rate = run["notebooks"] / run["wall"]
        print(f"{label:>20}: {run['wall']:6.1f} s, {rate:5.2f} notebooks/s")
    per_core = one["notebooks"] / one["wall"]
    record = sorted(many["recording"])
    record_mean = sum(record) / len(record)
    ceiling = 1 / record_mean
    speedup = one["wall"] / many["wall"]
    print(f"speed-up with {cores} workers: {speedup:.2f}x the baseline")
    print(f"notebooks per second per core: {per_core:.2f} (one worker, recording included)")
    print(f"recording: {record_mean * 1000:.0f} ms per notebook (median "
          f"{record[len(record) // 2] * 1000:.0f} ms): ceiling {ceiling:.1f} notebooks/s "
          f"= {ceiling * 3600:.0f} per hour, however many cores execute")  # fmt: skip
    measured = round(many["notebooks"] / many["wall"] * 3600)
    print(f"this machine: {measured} notebooks per hour: a class of {measured} "
          "students handing in one notebook each is graded within the hour")  # fmt: skip


if __name__ == "__main__":
    main()
