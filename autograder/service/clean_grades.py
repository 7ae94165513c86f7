"""`make clean-grades CONFIRM=1`: delete what a term left, without archiving it.

The gradebook wherever it lives (a SQLite file, or nbgrader's tables in PostgreSQL), the
course folder's hand-ins, grades, feedback and reports, the grader's records (not the
course's secret) and what is in the exchange's folders of this course, so nothing
handed in before comes back (`service.term.clear`; `make archive` keeps a copy first).
Exit 0: nothing of it is left.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.sandbox.settings import CourseConfigError
from autograder.service.term import TermError, clear, places_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--course-dir", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    try:
        for line in clear(places_of(args.course_dir.resolve())):
            print(line)
    except CourseConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (TermError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
