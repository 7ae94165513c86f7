"""nbgrader's reference run kept on disk (tests/nbgrader_course.py): reused while its
inputs are the same, run again when one changes, never left half-written.

The run here is real but small: one assignment, one student."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import nbgrader_course
import pytest
from nbgrader_course import (
    RECORD,
    SAMPLE_CLASS,
    SOLUTIONS,
    cached_grade_sample_class,
    digest,
    disk_cached,
    nbgrader_run_digest,
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


def test_an_input_that_is_not_there_is_an_error_not_an_empty_hash(tmp_path: Path) -> None:
    source, _ = small_inputs(tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        nbgrader_run_digest([source, tmp_path / "nowhere"])


def test_the_variant_class_run_is_keyed_on_its_own_inputs_too(tmp_path: Path) -> None:
    """The variant class's nbgrader run (tests/grading/test_variant_grades.py) is kept under
    `nbgrader_run_digest` of its inputs: a change to any of them is a new key."""
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
    before = nbgrader_run_digest(copies)
    assert nbgrader_run_digest(NBGRADER_INPUTS) == before  # the copies hash as the inputs
    for copy in copies:
        file = copy if copy.is_file() else sorted(p for p in copy.rglob("*") if p.is_file())[0]
        kept = file.read_bytes()
        file.write_bytes(kept + b"\n")
        assert nbgrader_run_digest(copies) != before, file
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
