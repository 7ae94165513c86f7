"""The end of a term: `autograder archive` (`make archive`) keeps a class's work, then clears it.

What a term leaves (`TermPlaces`): the gradebook (SQLite or PostgreSQL: every student,
grade and manual comment), the course folder's `submitted/`, `autograded/`, `feedback/`,
`release/`, `downloaded/`, `reports/`, `grades.csv`, the grader's records in
`.autograder/` (all but the course's secret, which decides every learner's numbers), and
the exchange's `inbound/`, `outbound/` and `feedback/` for this course.

`archive` copies all of it into `archives/<course id>-<UTC time>/` in the course folder
(private to the instructor, as the course folder is): the gradebook as a SQLite file
nbgrader opens (`nbgrader export --CourseDirectory.db_url=sqlite:///.../gradebook.db`),
whichever database it was in, the folders as they are, and `MANIFEST.txt` saying what
came from where. Nothing is deleted unless asked (`--confirm`, `make archive CONFIRM=1`):
then, once the archive holds every file, `clear` deletes what the term left, the
exchange included, so the next `autograder serve` collects no old hand-in into the new
gradebook and students fetch no old feedback. `make clean-grades CONFIRM=1` is `clear`
without the archive.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.core.givens import SECRET_FILE
from autograder.grading.runner import load_config
from autograder.sandbox.settings import STATE_DIR, CourseConfigError

DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"
COURSE_FOLDERS = ("submitted", "autograded", "feedback", "release", "downloaded", "reports")
COURSE_FILES = ("grades.csv",)
EXCHANGE_FOLDERS = ("inbound", "outbound", "feedback")
ARCHIVES = "archives"


class TermError(Exception):
    """The term cannot be archived or cleared; the message says why."""


@dataclass(frozen=True)
class TermPlaces:
    """Where one course keeps a term's work."""

    course: Path
    course_id: str
    db_url: str
    exchange: Path  # <Exchange.root>/<course id>

    @property
    def sqlite_file(self) -> Path | None:
        if self.db_url.startswith("sqlite:///"):
            return Path(self.db_url.removeprefix("sqlite:///"))
        return None

    def local(self) -> list[Path]:
        """The course folder's term files and folders (those that exist)."""
        found = [self.course / n for n in (*COURSE_FOLDERS, *COURSE_FILES)]
        state = self.course / STATE_DIR
        if state.is_dir():
            found += sorted(p for p in state.iterdir() if p != self.course / SECRET_FILE)
        return [p for p in found if os.path.lexists(p)]

    def exchanged(self) -> list[Path]:
        """The exchange's folders of this course (those that exist; none without an id)."""
        if not self.course_id:
            return []
        return [self.exchange / n for n in EXCHANGE_FOLDERS if (self.exchange / n).is_dir()]


def places_of(course: Path) -> TermPlaces:
    """The course's term places, as its nbgrader config (with site settings) says."""
    config = load_config(course)
    course_id = str(config.CourseDirectory.get("course_id", ""))
    exchange = Path(str(config.Exchange.get("root", DEFAULT_EXCHANGE))) / course_id
    return TermPlaces(course, course_id, str(config.CourseDirectory.db_url), exchange)


def shown_url(url: str) -> str:
    """A database URL without its password."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}" if "@" in rest else url


def copy_gradebook(url: str, target: Path) -> int:
    """Copy nbgrader's tables (and alembic's version) from the database at `url` into a
    new SQLite file `target`; how many rows."""
    from nbgrader.api import Base
    from sqlalchemy import MetaData, create_engine, inspect

    source = create_engine(url)
    copy = create_engine(f"sqlite:///{target}")
    rows = 0
    try:
        present = set(inspect(source).get_table_names())
        if not present:
            return 0
        Base.metadata.create_all(copy)
        tables = [t for t in Base.metadata.sorted_tables if t.name in present]
        if "alembic_version" in present:
            version = MetaData()
            version.reflect(source, only=["alembic_version"])
            version.create_all(copy)
            tables.append(version.tables["alembic_version"])
        with source.connect() as reading, copy.begin() as writing:
            for table in tables:
                found = [dict(row._mapping) for row in reading.execute(table.select())]
                if found:
                    writing.execute(table.insert(), found)
                rows += len(found)
    finally:
        source.dispose()
        copy.dispose()
    return rows


def count_files(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return 1
    return sum(len(files) + len([d for d in dirs if (Path(top) / d).is_symlink()])
               for top, dirs, files in os.walk(path))  # fmt: skip


def copy_tree(source: Path, target: Path) -> None:
    """Copy a file or folder as it is (links kept as links, never followed)."""
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def archive(places: TermPlaces, into: Path) -> list[str]:
    """Copy the term into the new folder `into` (see the module's docstring); what was
    kept, as lines. Raises TermError when anything cannot be read or a copy is short."""
    into.mkdir(mode=0o700, parents=True)
    now = datetime.datetime.now(datetime.UTC)
    manifest = [f"course {places.course_id}, archived {now:%Y-%m-%d %H:%M:%S} UTC"]
    sqlite = places.sqlite_file
    if sqlite is not None and not sqlite.is_file():  # (opening it would create it)
        manifest.append(f"no gradebook: no {sqlite}")
    else:
        rows = copy_gradebook(places.db_url, into / "gradebook.db")
        manifest.append(f"gradebook.db: {rows} rows from {shown_url(places.db_url)}")
    sources = [(p, Path("course") / p.relative_to(places.course)) for p in places.local()]
    sources += [(p, Path("exchange") / p.name) for p in places.exchanged()]
    for source, name in sources:
        target = into / name
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            copy_tree(source, target)
        except (OSError, shutil.Error) as error:
            raise TermError(f"cannot archive {source}: {error}; nothing was deleted") from None
        files = count_files(source)
        if count_files(target) != files:
            raise TermError(f"the archive of {source} is incomplete; nothing was deleted")
        manifest.append(f"{name}: {files} files from {source}")
    (into / "MANIFEST.txt").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    return manifest[1:]


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


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


def clear(places: TermPlaces) -> list[str]:
    """Delete what the term left: the gradebook, the course folder's term files, the
    grader's records (not the secret) and what is in the exchange's folders of this
    course (the folders stay, as `make class` laid them out); what was deleted, as lines.
    Raises TermError with what could not be deleted."""
    said: list[str] = []
    sqlite = places.sqlite_file
    if sqlite is not None:
        files = [Path(f"{sqlite}{suffix}") for suffix in ("", "-journal", "-wal", "-shm")]
        removed = [f for f in files if f.exists()]
        for file in removed:
            file.unlink()
        if removed:
            said.append(f"removed the SQLite gradebook {sqlite}")
        else:
            said.append(f"no SQLite gradebook at {sqlite}: nothing to remove")
    else:
        dropped = drop_gradebook(places.db_url)
        where = shown_url(places.db_url)
        said.append(f"dropped the gradebook's tables in {where}: {', '.join(dropped) or 'none'}")
    failed: list[str] = []
    for path in places.local():
        try:
            remove(path)
            said.append(f"removed {path}")
        except OSError as error:
            failed.append(f"{path}: {error.strerror}")
    for folder in places.exchanged():
        entries = list(folder.iterdir())
        for entry in entries:
            try:
                remove(entry)
            except OSError as error:
                failed.append(f"{entry}: {error.strerror}")
        said.append(f"emptied {folder} ({len(entries)} entries)")
    if failed:
        raise TermError("could not delete: " + "; ".join(failed))
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--course-dir", type=Path, default=Path.cwd())
    parser.add_argument("--to", type=Path, help="the archive folder (default archives/<id>-<time>)")
    parser.add_argument("--confirm", action="store_true", help="then DELETE what was archived")
    args = parser.parse_args(argv)
    course = args.course_dir.resolve()
    try:
        places = places_of(course)
        if not places.course_id:
            raise TermError(f"{course}/nbgrader_config.py sets no CourseDirectory.course_id")
        stamp = f"{datetime.datetime.now(datetime.UTC):%Y%m%d-%H%M%S}"
        into = (args.to or course / ARCHIVES / f"{places.course_id}-{stamp}").absolute()
        if os.path.lexists(into):
            raise TermError(f"{into} exists already: name another with --to")
        for line in archive(places, into):
            print(f"archived {line}")
        print(f"the term of {places.course_id} is archived in {into}")
        if not args.confirm:
            print("nothing was deleted; to delete it all (gradebook, hand-ins, feedback, the "
                  "exchange's): make archive CONFIRM=1")  # fmt: skip
            return 0
        for line in clear(places):
            print(line)
    except (TermError, CourseConfigError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"the term of {places.course_id} is cleared; the course's secret is kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
