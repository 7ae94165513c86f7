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
for it, under xdist across workers too). So does one `autograder grade` of the sample class
(`shared_autograded_course`), for the tests that only read what it recorded. A test module
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

import csv
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CLASS = REPO_ROOT / "instructor" / "sample_class"
EXPECTED_GRADES = SAMPLE_CLASS / "expected_grades.csv"
VENV_BIN = Path(sys.executable).parent
COMMAND_TIMEOUT = 900  # seconds; a hung kernel fails the run instead of blocking CI

Key = tuple[str, str]  # (student, assignment)
T = TypeVar("T")


def nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader: it runs `alembic` and `jupyter` from PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_nbgrader_process(
    *args: str, cwd: Path, timeout: float = COMMAND_TIMEOUT, merge_output: bool = False
) -> subprocess.CompletedProcess[str]:
    """`nbgrader <args>` in `cwd`, its kernels on Unix sockets in a folder of their own;
    its output captured (with `merge_output`, stderr in stdout, in the order written).

    jupyter_client picks a kernel's TCP ports by asking for free ones and binding them a
    moment later; with tests, the hub's kernels and nbval side by side, another process
    can take one in between ("Address already in use", and the nbgrader run fails). One
    nbgrader run starts its kernels one at a time, so a private socket folder per run
    leaves nothing to race for.
    """
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        kernels = ["--KernelManager.transport=ipc", f"--KernelManager.ip={sockets}/k"]
        return subprocess.run(
            [str(VENV_BIN / "nbgrader"), *args, *kernels],
            cwd=cwd,
            env=nbgrader_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_output else subprocess.PIPE,
            text=True,
            timeout=timeout,
            check=False,
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


def assignment_names(source: Path = REPO_ROOT / "solutions") -> list[str]:
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
    """The outcome of grading the sample class: where everything landed, and how long it took."""

    shards: list[CourseShard]
    grades_csv: Path
    timings: dict[str, float]

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


def _prepare_shard(root: Path, assignments: list[str], sample_class: Path) -> _Plan:
    root.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    students = sorted(p for p in sample_class.iterdir() if p.is_dir())
    present: set[str] = set()
    for name in assignments:
        shutil.copytree(REPO_ROOT / "solutions" / name, root / "solutions" / name)
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
    workdir: Path, sample_class: Path = SAMPLE_CLASS, shards: int | None = None
) -> GradedCourse:
    """Grade `sample_class` with nbgrader under `workdir`; see the module docstring."""
    names = assignment_names()
    count = max(1, min(shards or os.cpu_count() or 1, len(names)))
    groups = [names[i::count] for i in range(count)]
    start = time.perf_counter()
    plans = [
        _prepare_shard(workdir / f"course{i}", group, sample_class)
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


def _save(course: GradedCourse) -> str:
    shards = [
        {"root": str(s.root), "assignments": s.assignments, "timings": s.timings}
        for s in course.shards
    ]
    record = {"shards": shards, "grades_csv": str(course.grades_csv), "timings": course.timings}
    return json.dumps(record)


def _load(text: str) -> GradedCourse:
    record = json.loads(text)
    shards = [
        CourseShard(Path(s["root"]), list(s["assignments"]), dict(s["timings"]))
        for s in record["shards"]
    ]
    return GradedCourse(shards, Path(record["grades_csv"]), dict(record["timings"]))


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
    for it; see `shared_once`)."""
    return shared_once(tmp_path_factory, "nbgrader_course", grade_sample_class, _save, _load)


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
    result = subprocess.run(
        command, cwd=course, env=nbgrader_env(), capture_output=True, text=True, check=False
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
