"""`make clean-grades CONFIRM=1`: delete the course's gradebook, wherever it lives.

A SQLite gradebook is a file in the course folder (removed with the other runtime
folders by the Makefile); a PostgreSQL one (`c.CourseDirectory.db_url =
"postgresql://..."` in the site config) is a database the Makefile cannot `rm`: this
drops nbgrader's tables in it (every student, assignment, grade and manual comment) and
alembic's version table, and says which. Exit 0: nothing of the gradebook is left.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.grading.runner import load_config
from autograder.sandbox.settings import CourseConfigError


def drop_gradebook(url: str) -> list[str]:
    """Drop nbgrader's tables (and alembic's) in the database at `url`; their names."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine, inspect

    engine = create_engine(url)
    try:
        present = set(inspect(engine).get_table_names())
        ours = [t for t in Base.metadata.sorted_tables if t.name in present]
        Base.metadata.drop_all(engine, tables=ours)
        dropped = [t.name for t in ours]
        if "alembic_version" in present:
            with engine.begin() as connection:
                connection.exec_driver_sql("DROP TABLE alembic_version")
            dropped.append("alembic_version")
        left = set(inspect(engine).get_table_names()) & (present - {"alembic_version"})
        left &= {t.name for t in Base.metadata.sorted_tables}
        if left:
            raise RuntimeError(f"these gradebook tables are still there: {sorted(left)}")
        return dropped
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--course-dir", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    try:
        url = str(load_config(args.course_dir.resolve()).CourseDirectory.db_url)
    except CourseConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        files = [Path(f"{path}{suffix}") for suffix in ("", "-journal", "-wal", "-shm")]
        removed = [f for f in files if f.exists()]
        for file in removed:
            file.unlink()
        if removed:
            print(f"removed the SQLite gradebook {path}")
        else:
            print(f"no SQLite gradebook at {path}: nothing to remove")
        return 0
    shown = url.split("@")[-1]  # no password in the output
    dropped = drop_gradebook(url)
    if dropped:
        print(f"dropped the gradebook's tables in {shown}: {', '.join(dropped)}")
    else:
        print(f"no gradebook tables in {shown}: nothing to drop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
