"""nbgrader's reference run kept on disk (tests/nbgrader_course.py): reused while its
inputs are the same, run again when one changes, never left half-written.

The run here is real but small: one assignment, one student."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbgrader_course
import pytest
from nbgrader_course import (
    READS,
    RECORD,
    SAMPLE_CLASS,
    SOLUTIONS,
    cached_grade_sample_class,
    digest,
    disk_cached,
    nbgrader_run_key,
    read_expected_grades,
    reference_digest,
)

ASSIGNMENT = "01_what_a_gradient_is"


def small_inputs(root: Path) -> tuple[Path, Path]:
    """A source of one assignment and a class of one student (ada) who handed it in."""
    source, sample_class = root / "solutions", root / "class"
    shutil.copytree(SOLUTIONS / ASSIGNMENT, source / ASSIGNMENT)
    shutil.copytree(SAMPLE_CLASS / "ada" / ASSIGNMENT, sample_class / "ada" / ASSIGNMENT)
    return source, sample_class


@pytest.mark.nbgrader
def test_the_run_is_reused_while_its_inputs_stay_and_run_again_when_one_changes(
    tmp_path: Path,
) -> None:
    source, sample_class = small_inputs(tmp_path / "inputs")
    cache = tmp_path / "cache"
    expected = read_expected_grades()

    first = cached_grade_sample_class(tmp_path / "first", sample_class, source, cache)
    assert not first.reused
    assert first.grades() == {("ada", ASSIGNMENT): expected[("ada", ASSIGNMENT)]}

    again = cached_grade_sample_class(tmp_path / "again", sample_class, source, cache)
    assert again.reused
    assert again.grades() == first.grades()
    assert again.grades_csv.is_relative_to(tmp_path / "again")  # a copy, not the entry
    assert again.feedback_html("ada", ASSIGNMENT).read_text() == (
        first.feedback_html("ada", ASSIGNMENT).read_text()
    )

    # ada hands in ben's notebook instead: a new input, graded for real (ben's score).
    notebook = sample_class / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    shutil.copy(SAMPLE_CLASS / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", notebook)
    changed = cached_grade_sample_class(tmp_path / "changed", sample_class, source, cache)
    assert not changed.reused
    assert changed.grades() == {("ada", ASSIGNMENT): expected[("ben", ASSIGNMENT)]}
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2  # both runs kept

    # What the run read of the package: the kernel's learner package and nbgrader's
    # plugins, not our grader's run, sandbox or reference process (a change there keeps
    # the run).
    (entry,) = [p for p in cache.iterdir() if p.is_dir() and (p / READS).is_file()][:1]
    read = json.loads((entry / READS).read_text())
    assert "learner/check.py" in read and "nbgrader_plugins/__init__.py" in read, read
    assert "nbgrader_plugins/templates/feedback/index.html.j2" in read, "its templates"
    unread = ["grading/runner.py", "grading/recording.py", "diagnosis/prefetch.py", "cli.py"]
    assert not [name for name in read if name in unread or name.startswith("sandbox/")], read


def test_the_key_covers_every_input_file_and_fact(tmp_path: Path) -> None:
    source, sample_class = small_inputs(tmp_path)
    before = reference_digest(sample_class, source)
    assert reference_digest(sample_class, source) == before  # the same inputs, the same key
    cache_file = sample_class / "ada" / "__pycache__" / "x.pyc"
    cache_file.parent.mkdir()
    cache_file.write_bytes(b"not an input")
    assert reference_digest(sample_class, source) == before
    (sample_class / "dee").mkdir()
    (sample_class / "dee" / "notes.txt").write_text("a new student's file")
    assert reference_digest(sample_class, source) != before
    assert digest([source], ["nbgrader==0.9.6"]) != digest([source], ["nbgrader==0.9.7"])
    # a file's name counts, not only its bytes
    renamed = tmp_path / "renamed"
    shutil.copytree(source, renamed)
    (renamed / ASSIGNMENT).rename(renamed / "other")
    assert digest([renamed], []) != digest([source], [])


FAKE_PACKAGE = {
    "__init__.py": "",
    "read.py": "import pathlib\nTEXT = (pathlib.Path(__file__).parent / 'data.txt').read_text()\n",
    "data.txt": "read by read.py",
    "unread.py": "UNREAD = 1\n",
}


def fake_package(root: Path) -> Path:
    """A package `fakepkg` under `root`: read.py reads data.txt; nothing imports unread.py."""
    package = root / "fakepkg"
    package.mkdir(parents=True)
    for name, text in FAKE_PACKAGE.items():
        (package / name).write_text(text)
    return package


def run_python(package: Path, program: str, *flags: str) -> str:
    """`python <flags> -c program` with `package` importable: its output."""
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(package.parent)]))
    done = subprocess.run(
        [sys.executable, *flags, "-c", program],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.processes
def test_an_entry_is_kept_while_the_code_its_processes_read_stays(tmp_path: Path) -> None:
    """An entry kept with `code` is reused after a change to a file of the code that no
    process of its build read, and built again after a change to one that one read (a
    data file too); the list stays out of the copy."""
    package = fake_package(tmp_path / "code")
    cache = tmp_path / "cache"

    def build(folder: Path) -> None:
        folder.mkdir()
        out = run_python(package, "import fakepkg.read; print(fakepkg.read.TEXT)")
        (folder / "out.txt").write_text(out)

    def use(name: str) -> bool:
        return disk_cached(cache, "key", tmp_path / name, build, code=package, reader="fakepkg")

    assert use("first") is False
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    assert json.loads((entry / READS).read_text()) == ["__init__.py", "data.txt", "read.py"]
    assert (tmp_path / "first" / "out.txt").read_text() == "read by read.py\n"
    assert not (tmp_path / "first" / READS).exists()
    (package / "unread.py").write_text("UNREAD = 2\n")
    assert use("again") is True
    (package / "data.txt").write_text("changed")
    assert use("changed") is False
    assert (tmp_path / "changed" / "out.txt").read_text() == "changed\n"
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2
    (package / "data.txt").write_text("read by read.py")  # as it was: the first entry again
    assert use("restored") is True


@pytest.mark.processes
def test_a_build_whose_processes_were_not_recorded_is_not_kept(tmp_path: Path) -> None:
    """A process started isolated (`python -I` ignores PYTHONPATH, so the recorder never
    loads) reads code that no list would hold: the build fails, nothing is kept."""
    package = fake_package(tmp_path / "code")
    cache = tmp_path / "cache"

    def build(folder: Path) -> None:
        folder.mkdir()
        found = f"import sys; sys.path.insert(0, {str(package.parent)!r}); import fakepkg.read"
        run_python(package, found, "-I")  # it reads the package, unrecorded

    with pytest.raises(RuntimeError, match="no process of the run ran 'fakepkg'"):
        disk_cached(cache, "key", tmp_path / "one", build, code=package, reader="fakepkg")
    assert not [p for p in cache.iterdir() if p.is_dir()]


def test_the_key_names_the_packages_files_not_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nbgrader_run_key`: a file added to the package changes the key (what the run
    may find by looking); a file's bytes do not (those the run read are checked apart)."""
    source, _ = small_inputs(tmp_path)
    package = fake_package(tmp_path / "code")
    monkeypatch.setattr(nbgrader_course, "PACKAGE", package)
    before = nbgrader_run_key([source])
    (package / "unread.py").write_text("UNREAD = 2\n")
    assert nbgrader_run_key([source]) == before
    (package / "new.py").write_text("")
    assert nbgrader_run_key([source]) != before


def test_the_key_does_not_follow_what_a_test_puts_on_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed distributions are read from the environment's site-packages: a
    distribution a test's `sys.path` shows (tools/, a checkout) leaves the key as it was,
    so every kind of pytest run finds the same entries."""
    source, sample_class = small_inputs(tmp_path)
    before = reference_digest(sample_class, source)
    found = tmp_path / "elsewhere" / "lookalike-1.0.dist-info"
    found.mkdir(parents=True)
    (found / "METADATA").write_text("Metadata-Version: 2.1\nName: lookalike\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(found.parent))
    assert reference_digest(sample_class, source) == before


def test_an_input_that_is_not_there_is_an_error_not_an_empty_hash(tmp_path: Path) -> None:
    source, _ = small_inputs(tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        nbgrader_run_key([source, tmp_path / "nowhere"])


def test_the_variant_class_run_is_keyed_on_its_own_inputs_too(tmp_path: Path) -> None:
    """The variant class's nbgrader run (tests/grading/test_variant_grades.py) is kept under
    `nbgrader_run_key` of its inputs: a change to any of them is a new key."""
    from test_variant_grades import NBGRADER_INPUTS

    copies = []
    for number, path in enumerate(NBGRADER_INPUTS):
        copy = tmp_path / str(number) / path.name
        if path.is_dir():
            shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.parent.mkdir()
            shutil.copy(path, copy)
        copies.append(copy)
    before = nbgrader_run_key(copies)
    assert nbgrader_run_key(NBGRADER_INPUTS) == before  # the copies hash as the inputs
    for copy in copies:
        file = copy if copy.is_file() else sorted(p for p in copy.rglob("*") if p.is_file())[0]
        kept = file.read_bytes()
        file.write_bytes(kept + b"\n")
        assert nbgrader_run_key(copies) != before, file
        file.write_bytes(kept)


def test_a_build_that_fails_or_was_killed_leaves_no_entry(tmp_path: Path) -> None:
    cache = tmp_path / "cache"

    def failing(folder: Path) -> None:
        folder.mkdir()
        (folder / RECORD).write_text("half")
        raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError, match="the run failed"):
        disk_cached(cache, "key", tmp_path / "one", failing)
    assert [p.name for p in cache.iterdir()] == [".lock-key"]
    (cache / ".staging-key-killed").mkdir()  # what a killed run leaves: removed by the next

    def working(folder: Path) -> None:
        folder.mkdir()
        (folder / RECORD).write_text("whole")

    assert disk_cached(cache, "key", tmp_path / "two", working) is False
    assert sorted(p.name for p in cache.iterdir()) == [".lock-key", "key"]
    assert disk_cached(cache, "key", tmp_path / "three", failing) is True  # not built again
    assert (tmp_path / "three" / RECORD).read_text() == "whole"


def test_the_last_used_entries_are_kept_and_none_in_use_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setattr(nbgrader_course, "KEEP_ENTRIES", 3)

    def write(folder: Path) -> None:
        folder.mkdir()
        (folder / RECORD).write_text(folder.parent.name)

    for number, key in enumerate(["a", "b", "c"]):
        disk_cached(cache, key, tmp_path / f"use{number}", write)
    for key, used in (("a", 2), ("b", 0), ("c", 1)):  # last used: a, then c, then b
        os.utime(cache / key, (used, used))
    monkeypatch.setattr(nbgrader_course, "KEEP_ENTRIES", 2)
    with open(cache / ".lock-b", "a") as lock:  # b: in use by another session
        fcntl.flock(lock, fcntl.LOCK_EX)
        disk_cached(cache, "d", tmp_path / "use3", write)  # keeps d and a; c and b go
    entries = sorted(p.name for p in cache.iterdir() if not p.name.startswith(".staging"))
    locks = [".lock-a", ".lock-b", ".lock-c", ".lock-d"]
    assert entries == [*locks, "a", "b", "d"]  # b: left while in use
