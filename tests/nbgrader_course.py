"""Grade the sample class with the real nbgrader commands, in throwaway course directories.

`grade_sample_class(workdir)` copies `solutions/` and `nbgrader_config.py` into a temporary
course (the config sets the course root to its own folder, and every command also gets
`--CourseDirectory.root=`), then runs, as a learner's teacher would:

    nbgrader generate_assignment "*" --force
    (instructor/sample_class/ copied to submitted/)
    nbgrader autograde "*"
    nbgrader generate_feedback "*"
    nbgrader export --to=grades.csv

Autograding costs a fresh kernel and an `import torch` per notebook (about 3 s of CPU
each), so the assignments are split round-robin over `shards` course directories
(one per core by default) that run side by side, each with its own gradebook: nbgrader's
SQLite gradebook is not safe for concurrent writers. Their exports are concatenated into
one `grades.csv` with nbgrader's own columns. `shards=1` is the plain one-course run.

One grading run serves the whole test session (`shared_once`: the first test to ask pays
for it, under xdist across workers too), and it is kept on disk between sessions, under the
hash of everything it depends on (`cached_grade_sample_class`, `reference_digest`; of
the autograder package, the files its processes read, recorded as they run:
`disk_cached`'s `code`): a session whose inputs are those of an earlier one copies that
run's result instead of grading again. `disk_cached` keeps `nbgrader validate` of every
notebook and the variant class's nbgrader run the same way
(tests/authoring/test_solutions.py, tests/grading/test_variant_grades.py). One
`autograder grade` of the sample class
(`shared_autograded_course`) serves every test that only reads what it recorded (it is
the grader under test: graded every session, never kept). A test module
gets nbgrader's run with a fixture (the result is cached here, so every module shares the
same run):

    from nbgrader_course import GradedCourse, shared_graded_course

    @pytest.fixture(scope="session")
    def graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
        return shared_graded_course(tmp_path_factory)

or registers this module as a plugin (`pytest_plugins = ["nbgrader_course"]` in the root
conftest.py) and uses its `graded_course` fixture directly.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest
import stall_guard

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CLASS = REPO_ROOT / "instructor" / "sample_class"
EXPECTED_GRADES = SAMPLE_CLASS / "expected_grades.csv"
SOLUTIONS = REPO_ROOT / "solutions"
VENV_BIN = Path(sys.executable).parent

Key = tuple[str, str]  # (student, assignment)
T = TypeVar("T")


def nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader: it runs `alembic` and `jupyter` from PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_nbgrader_process(
    *args: str, cwd: Path, merge_output: bool = False
) -> subprocess.CompletedProcess[str]:
    """`nbgrader <args>` in `cwd`, its kernels on Unix sockets in a folder of their own;
    its output captured (with `merge_output`, stderr in stdout, in the order written).
    No time limit: it is stopped only when it (its kernels included) makes no progress
    for `stall_guard.STALL_SECONDS` (a hung kernel; a slow machine is not one).

    jupyter_client picks a kernel's TCP ports by asking for free ones and binding them a
    moment later; with tests, the hub's kernels and nbval side by side, another process
    can take one in between ("Address already in use", and the nbgrader run fails). One
    nbgrader run starts its kernels one at a time, so a private socket folder per run
    leaves nothing to race for.
    """
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        kernels = ["--KernelManager.transport=ipc", f"--KernelManager.ip={sockets}/k"]
        return stall_guard.run(
            [str(VENV_BIN / "nbgrader"), *args, *kernels],
            what=f"`nbgrader {' '.join(args)}` in {cwd}",
            cwd=cwd,
            env=nbgrader_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_output else subprocess.PIPE,
            text=True,
        )


def run_nbgrader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `nbgrader <args>` in `cwd`; fail with its full log when it exits non-zero."""
    result = run_nbgrader_process(*args, cwd=cwd)
    if result.returncode != 0:
        raise RuntimeError(
            f"`nbgrader {' '.join(args)}` exited {result.returncode} in {cwd}\n"
            f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-8000:]}"
        )
    return result


def assignment_names(source: Path = SOLUTIONS) -> list[str]:
    """Assignments of the nbgrader source folder, in order."""
    return sorted(p.name for p in source.iterdir() if (p / f"{p.name}.ipynb").is_file())


def read_grades(path: Path) -> dict[Key, tuple[float, float]]:
    """(student, assignment) -> (score, max_score) from nbgrader's grades.csv or ours."""
    grades: dict[Key, tuple[float, float]] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            student = row.get("student_id") or row["student"]
            key = (student, row["assignment"])
            if key in grades:
                raise ValueError(f"{path}: {key} appears twice")
            grades[key] = (float(row["score"]), float(row["max_score"]))
    return grades


def read_expected_grades(path: Path = EXPECTED_GRADES) -> dict[Key, tuple[float, float]]:
    """The grades the sample class should get, reasoned from its profiles."""
    return read_grades(path)


@dataclass
class CourseShard:
    """One temporary nbgrader course holding some of the assignments."""

    root: Path
    assignments: list[str]
    timings: dict[str, float] = field(default_factory=dict)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        start = time.perf_counter()
        result = run_nbgrader(*args, f"--CourseDirectory.root={self.root}", cwd=self.root)
        self.timings[args[0]] = self.timings.get(args[0], 0.0) + time.perf_counter() - start
        return result


@dataclass
class GradedCourse:
    """The outcome of grading the sample class: where everything landed, and how long it
    took (`reused`: the run was an earlier session's, copied from the cache)."""

    shards: list[CourseShard]
    grades_csv: Path
    timings: dict[str, float]
    reused: bool = False

    def grades(self) -> dict[Key, tuple[float, float]]:
        return read_grades(self.grades_csv)

    def shard_of(self, assignment: str) -> CourseShard:
        for shard in self.shards:
            if assignment in shard.assignments:
                return shard
        raise KeyError(assignment)

    def feedback_html(self, student: str, assignment: str) -> Path:
        root = self.shard_of(assignment).root
        return root / "feedback" / student / assignment / f"{assignment}.html"

    def autograded_notebook(self, student: str, assignment: str) -> Path:
        root = self.shard_of(assignment).root
        return root / "autograded" / student / assignment / f"{assignment}.ipynb"


@dataclass
class _Plan:
    shard: CourseShard
    absent: list[str]  # students with no submission in this shard: added to its gradebook


def _prepare_shard(root: Path, assignments: list[str], sample_class: Path, source: Path) -> _Plan:
    root.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    students = sorted(p for p in sample_class.iterdir() if p.is_dir())
    present: set[str] = set()
    for name in assignments:
        shutil.copytree(source / name, root / "solutions" / name)
        for student in students:
            if (student / name).is_dir():
                shutil.copytree(student / name, root / "submitted" / student.name / name)
                present.add(student.name)
    return _Plan(
        CourseShard(root, assignments), [s.name for s in students if s.name not in present]
    )


def _grade_shard(plan: _Plan) -> Path:
    shard = plan.shard
    shard.run("generate_assignment", "*", "--force")
    if plan.absent:
        # Export lists the students of the gradebook: one who submitted nothing here
        # still gets a row (score 0), as in a single course.
        roster = shard.root / "students.csv"
        roster.write_text("id\n" + "".join(f"{s}\n" for s in plan.absent))
        shard.run("db", "student", "import", str(roster))
    shard.run("autograde", "*")
    shard.run("generate_feedback", "*")
    grades = shard.root / "grades.csv"
    shard.run("export", f"--to={grades}")
    return grades


def _concatenate(parts: list[Path], target: Path) -> None:
    header: str | None = None
    rows: list[str] = []
    for part in parts:
        lines = part.read_text().splitlines()
        if header is not None and lines[0] != header:
            raise ValueError(f"{part}: header {lines[0]!r} differs from {header!r}")
        header = lines[0]
        rows += lines[1:]
    columns = (header or "").split(",")
    assignment, student = columns.index("assignment"), columns.index("student_id")
    rows.sort(key=lambda row: (row.split(",")[assignment], row.split(",")[student]))
    target.write_text("\n".join([header or "", *rows]) + "\n")


def grade_sample_class(
    workdir: Path,
    sample_class: Path = SAMPLE_CLASS,
    shards: int | None = None,
    source: Path = SOLUTIONS,
) -> GradedCourse:
    """Grade `sample_class` on the assignments of `source` with nbgrader under `workdir`;
    see the module docstring."""
    names = assignment_names(source)
    count = max(1, min(shards or os.cpu_count() or 1, len(names)))
    groups = [names[i::count] for i in range(count)]
    start = time.perf_counter()
    plans = [
        _prepare_shard(workdir / f"course{i}", group, sample_class, source)
        for i, group in enumerate(groups)
    ]
    with ThreadPoolExecutor(max_workers=count) as pool:
        parts = list(pool.map(_grade_shard, plans))
    course_shards = [plan.shard for plan in plans]
    grades = workdir / "grades.csv"
    _concatenate(parts, grades)
    timings = {"total": time.perf_counter() - start}
    for shard in course_shards:
        for step, seconds in shard.timings.items():
            timings[step] = max(timings.get(step, 0.0), seconds)
    return GradedCourse(course_shards, grades, timings)


_CACHE: dict[str, object] = {}


def _save(course: GradedCourse, base: Path | None = None) -> str:
    """`course` as JSON, its paths relative to `base` when given (a cache entry's)."""

    def where(path: Path) -> str:
        return str(path.relative_to(base) if base else path)

    shards = [
        {"root": where(s.root), "assignments": s.assignments, "timings": s.timings}
        for s in course.shards
    ]
    record = {
        "shards": shards,
        "grades_csv": where(course.grades_csv),
        "timings": course.timings,
        "reused": course.reused,
    }
    return json.dumps(record)


def _load(text: str, base: Path | None = None) -> GradedCourse:
    """The course `_save` wrote, its relative paths taken from `base`."""
    record = json.loads(text)

    def where(path: str) -> Path:
        return base / path if base else Path(path)

    shards = [
        CourseShard(where(s["root"]), list(s["assignments"]), dict(s["timings"]))
        for s in record["shards"]
    ]
    return GradedCourse(
        shards, where(record["grades_csv"]), dict(record["timings"]), bool(record["reused"])
    )


# ------------------------------------------------------------ the reference run, on disk

CACHE_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "backward-course"
REFERENCE_CACHE = CACHE_ROOT / "nbgrader-reference"
KEEP_ENTRIES = 6  # the most recently used runs kept (other branches, other worktrees)
RECORD = "graded_course.json"
SKIPPED = {"__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache"}


def digest(paths: Iterable[Path], facts: Iterable[str]) -> str:
    """SHA-256 of `facts` and of every file under `paths` (name within its path, and
    bytes), caches of Python and Jupyter left out."""
    hasher = hashlib.sha256()
    for fact in facts:
        hasher.update(f"fact {fact}\0".encode())
    for index, path in enumerate(paths):
        for file in [path] if path.is_file() else _files_under(path):
            data = file.read_bytes()
            name = file.relative_to(path) if file != path else file.name
            hasher.update(f"file {index} {name} {len(data)}\0".encode())
            hasher.update(data)
    return hasher.hexdigest()


def environment_facts() -> list[str]:
    """Python's version and every distribution installed in its environment, by name and
    version (nbgrader, nbconvert, nbclient, jupyter_client, ipykernel, torch, numpy, ...
    all of them: read from its site-packages, so a test's change to `sys.path` changes
    nothing), and the site config nbgrader_config.py would load."""
    installed = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    distributions = sorted(
        f"{d.metadata['Name']}=={d.version}"
        for d in importlib.metadata.distributions(path=installed)
    )
    site = os.environ.get("NBGRADER_SITE_CONFIG", "")
    site_text = Path(site).read_text() if site and Path(site).is_file() else ""
    return [sys.version, *distributions, f"NBGRADER_SITE_CONFIG={site}", site_text]


PACKAGE = REPO_ROOT / "autograder"
RECORDER = Path(__file__).resolve().parent / "record_reads"  # its sitecustomize.py
READS = ".reads.json"  # in an entry kept with `code`: the files of `code` its run read


def _existing(paths: list[Path]) -> list[Path]:
    if missing := [str(path) for path in paths if not path.exists()]:
        raise FileNotFoundError(f"an input of the nbgrader run is missing: {missing}")
    return paths


def nbgrader_run_key(inputs: Iterable[Path]) -> str:
    """What a run of nbgrader over notebooks of this repository depends on, hashed, but
    for the bytes of the `autograder` package's files, which `disk_cached(...,
    code=PACKAGE)` checks (the files its processes read, recorded as they run):

    - `inputs`: the run's own (the solutions it generates from, the submissions, the code
      that writes them);
    - nbgrader_config.py (preprocessors, plugins, the cell timeout);
    - the names of every file of the `autograder` package (which files there are: a run
      may find one by looking);
    - this module (the commands run and how a class is split) and the recorder;
    - Python and every installed distribution's version (`environment_facts`).
    Anything else that could change the run (the kernel's machine, the clock) does not
    change its grades or pages, which the tests compare. The package code a run runs in
    this process is not recorded (imported long before): a build runs it in a process
    of its own."""
    common = [REPO_ROOT / "nbgrader_config.py", RECORDER, Path(__file__).resolve()]
    names = [f"code {p.relative_to(PACKAGE).as_posix()}" for p in _files_under(PACKAGE)]
    return digest(_existing([*inputs, *common]), [*environment_facts(), *names])


def _files_under(folder: Path) -> list[Path]:
    """Every file under `folder`, sorted, caches of Python and Jupyter left out."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not SKIPPED & set(p.parts) and p.suffix != ".pyc"
    )


@contextlib.contextmanager
def reads_recorded(code: Path, log: Path) -> Iterator[None]:
    """Meanwhile, every Python process this one starts notes in `log` each file under
    `code` it opens (tests/record_reads/sitecustomize.py, first on its PYTHONPATH)."""
    names = ("PYTHONPATH", "BACKWARD_COURSE_READS", "BACKWARD_COURSE_READS_UNDER")
    saved = {name: os.environ.get(name) for name in names}
    path = [str(RECORDER), *filter(None, [saved["PYTHONPATH"]])]
    os.environ.update(
        PYTHONPATH=os.pathsep.join(path),
        BACKWARD_COURSE_READS=str(log),
        BACKWARD_COURSE_READS_UNDER=str(code.resolve()),
    )
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def files_read(log: Path, code: Path, reader: str) -> list[str]:
    """The files under `code` that the processes of `log` (`reads_recorded`) opened,
    relative and sorted (a module's compiled file counts as its source). RuntimeError
    when no process whose command line holds `reader` recorded anything: processes
    that were not recorded would leave out what they read."""
    lines = log.read_text().splitlines() if log.is_file() else []
    if not any(line.startswith("process ") and reader in line for line in lines):
        raise RuntimeError(f"no process of the run ran {reader!r} with the recorder: {log}")
    found, root = set(), code.resolve()
    for line in lines:
        if line.startswith("read "):
            path = Path(line.removeprefix("read "))
            if path.parent.name == "__pycache__" and path.suffix == ".pyc":
                path = path.parent.parent / f"{path.name.partition('.')[0]}.py"
            found.add(path.relative_to(root).as_posix())
    return sorted(found)


def code_digest(code: Path, files: list[str]) -> str:
    """A hash of `files` (relative to `code`) as they are now: names and bytes."""
    hasher = hashlib.sha256()
    for name in files:
        path = code / name
        data = path.read_bytes() if path.is_file() else None
        size = "missing" if data is None else len(data)
        hasher.update(f"file {name} {size}\0".encode())
        hasher.update(data or b"")
    return hasher.hexdigest()[:20]


def reference_digest(sample_class: Path = SAMPLE_CLASS, source: Path = SOLUTIONS) -> str:
    """What nbgrader's reference run depends on, hashed (`nbgrader_run_key`: the package's
    files it reads are checked when its entry is looked up): `source` (the solutions:
    generate_assignment makes the release from them) and `sample_class` (every
    submission, and the roster)."""
    return nbgrader_run_key([source, sample_class])


def disk_cached(
    cache: Path,
    key: str,
    workdir: Path,
    build: Callable[[Path], None],
    code: Path | None = None,
    reader: str = "ipykernel",
) -> bool:
    """Fill `workdir` (not yet there) with what `build(folder)` writes into a new folder,
    kept in `cache` under `key`: built once, copied after. True when it was copied.

    With `code` (the autograder package), the processes the build starts record the files
    of `code` they read (`reads_recorded`; `reader`: a word of the command line of a
    process that must be among them, a kernel by default). The entry is kept as
    `<key>-<hash of those files>` with their list, and an entry of `key` is reused while
    the files it lists hold the same bytes: a change to the package that the run never
    read keeps it (`key` should name the package's files: `nbgrader_run_key`).

    An entry appears whole or not at all: built in a hidden staging folder and renamed into
    place; one leaves the same way (renamed, then removed). A key's lock is held while its
    entry is built or copied, so two sessions never build the same key at once, a hidden
    folder of the key seen under its lock is a killed run's (removed), and an entry in use
    is never pruned. Other keys build side by side. The `KEEP_ENTRIES` last used are kept.
    """
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".lock-{key}", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        for stale in [*cache.glob(f".staging-{key}-*"), *cache.glob(f".removed-{key}-*")]:
            shutil.rmtree(stale, ignore_errors=True)
        entry = _valid_entry(cache, key, code)
        reused = entry is not None
        if entry is None:
            staging = Path(tempfile.mkdtemp(prefix=f".staging-{key}-", dir=cache))
            try:
                built = staging / "entry"
                if code is None:
                    build(built)
                    entry = cache / key
                else:
                    with reads_recorded(code, staging / "reads.log"):
                        build(built)
                    files = files_read(staging / "reads.log", code, reader)
                    (built / READS).write_text(json.dumps(files))
                    entry = cache / f"{key}-{code_digest(code, files)}"
                built.rename(entry)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        os.utime(entry)  # last used: kept longest
        shutil.copytree(entry, workdir, symlinks=True, ignore=shutil.ignore_patterns(READS))
    _prune(cache)
    return reused


def _valid_entry(cache: Path, key: str, code: Path | None) -> Path | None:
    """The entry of `key` that may be reused now, if any (see `disk_cached`)."""
    if code is None:
        return cache / key if (cache / key).is_dir() else None
    for entry in sorted(cache.glob(f"{key}-*")):
        try:
            files = json.loads((entry / READS).read_text())
        except (OSError, ValueError):
            continue  # not an entry kept whole: never reused
        if entry.name == f"{key}-{code_digest(code, files)}":
            return entry
    return None


def _prune(cache: Path) -> None:
    """Remove the entries beyond the `KEEP_ENTRIES` last used, but none in use."""
    entries = sorted(
        (p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in entries[KEEP_ENTRIES:]:
        key = old.name.partition("-")[0]  # `<key>` or `<key>-<files read>`
        with open(cache / f".lock-{key}", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # being built or copied
            leaving = Path(tempfile.mkdtemp(prefix=f".removed-{key}-", dir=cache))
            old.rename(leaving / "entry")
            shutil.rmtree(leaving, ignore_errors=True)
        # its lock file stays (empty): removing it could let two sessions lock the key at once


def cached_grade_sample_class(
    workdir: Path,
    sample_class: Path = SAMPLE_CLASS,
    source: Path = SOLUTIONS,
    cache: Path = REFERENCE_CACHE,
) -> GradedCourse:
    """`grade_sample_class` into `workdir`, reusing an earlier run of the same inputs
    (`reference_digest`) kept in `cache`, else grading and keeping it there."""

    def build(folder: Path) -> None:
        course = grade_sample_class(folder, sample_class, source=source)
        (folder / RECORD).write_text(_save(course, folder))

    key = reference_digest(sample_class, source)
    reused = disk_cached(cache, key, workdir, build, code=PACKAGE)
    course = _load((workdir / RECORD).read_text(), workdir)
    course.reused = reused
    return course


def shared_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], T],
    save: Callable[[T], str],
    load: Callable[[str], T],
) -> T:
    """`build(workdir)` run once per test session, its result shared by every test that asks.

    Under pytest-xdist the workers of one run share it too: the first to ask builds it in
    the run's common temporary folder under a file lock, and records `save(result)`; the
    others wait on the lock and `load` that record. A build that failed is not recorded:
    the next worker to ask builds again (and fails with the same log)."""
    if name in _CACHE:
        return _CACHE[name]  # type: ignore[return-value]
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        _CACHE[name] = build(tmp_path_factory.mktemp(name))
        return _CACHE[name]  # type: ignore[return-value]
    common = tmp_path_factory.getbasetemp().parent  # one per run, shared by its workers
    record = common / f"{name}.json"
    with open(common / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not record.exists():
            workdir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=common))
            record.write_text(save(build(workdir)))
        _CACHE[name] = load(record.read_text())
    return _CACHE[name]  # type: ignore[return-value]


def shared_graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
    """The sample class graded by nbgrader once per test session (the first caller pays
    for it, see `shared_once`; or copies an earlier session's run, see
    `cached_grade_sample_class`)."""
    return shared_once(
        tmp_path_factory,
        "nbgrader_course",
        lambda w: cached_grade_sample_class(w / "course"),
        _save,
        _load,
    )


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory: pytest.TempPathFactory) -> GradedCourse:
    """The sample class graded by the real nbgrader pipeline, shared by the session."""
    return shared_graded_course(tmp_path_factory)


AUTOGRADE_SEED = "7"


def autograde_sample_class(workdir: Path) -> Path:
    """A course of every assignment with the sample class submitted and graded by
    `autograder grade --seed 7` (the sandboxed grader, not nbgrader); its directory."""
    from autograder.authoring.sample_class import make_course, submit_sample_class

    names = assignment_names()
    course = make_course(workdir / "course", names)
    submit_sample_class(course, names)
    command = [str(VENV_BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED]
    result = stall_guard.run(
        command, cwd=course, env=nbgrader_env(), capture_output=True, text=True
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"`autograder grade` exited {result.returncode} in {course}\n"
            f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-8000:]}"
        )
    return course


def shared_autograded_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample class graded by `autograder grade` once per test session, for the tests
    that only read what it recorded (copy it before writing into it; see `shared_once`)."""
    return shared_once(tmp_path_factory, "autograded_course", autograde_sample_class, str, Path)
