"""`make grade`: grade the sample class with the real nbgrader pipeline and print the scores.

Builds a throwaway course from solutions/, submits instructor/sample_class/, runs
`nbgrader autograde` for every assignment, and prints a student x assignment table
next to the expected scores. `--keep DIR` keeps the course to explore (formgrader, feedback).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from autograder.authoring.sample_class import (
    REPO,
    expected_scores,
    gradebook_scores,
    make_course,
    submit_sample_class,
)
from autograder.grading.recording import use_this_environment


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="build the course here and keep it")
    args = parser.parse_args()
    use_this_environment()
    assignments = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="sample-class-") as tmp:
        course = (args.keep or Path(tmp) / "course").resolve()
        if course.exists() and any(course.iterdir()):
            sys.exit(f"error: {course} is not empty")
        make_course(course, assignments)
        submit_sample_class(course, assignments)
        for name in tqdm(assignments, desc="nbgrader autograde", unit="assignment"):
            result = subprocess.run(
                ["nbgrader", "autograde", name], cwd=course, capture_output=True, text=True
            )
            if result.returncode != 0:
                print(result.stderr[-3000:], file=sys.stderr)
                return 1
        scores = gradebook_scores(course)
        expected = expected_scores()
        students = sorted({s for s, _ in expected})
        print(f"\n{'student':10s}" + "".join(f"{a[:2]:>8s}" for a in assignments) + "   total")
        mismatches = 0
        for student in students:
            row, total = "", 0.0
            for name in assignments:
                got = scores.get((student, name))
                want = expected.get((student, name))
                # No submission: nbgrader exports 0 for it, the table shows "-".
                mark = "" if (got if got is not None else 0.0) == want else "!"
                mismatches += bool(mark)
                row += f"{'-' if got is None else f'{got:g}'}{mark}".rjust(8)
                total += got or 0.0
            print(f"{student:10s}{row}{total:8g}")
        print(
            "\ncolumns are assignments 01-07; '-' is no submission (exported as 0); "
            "'!' marks a score that differs from instructor/sample_class/expected_grades.csv"
        )
        if args.keep:
            print(f"course kept in {course}: try `nbgrader formgrader` or `nbgrader export` there")
        return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
