"""Test courses generated once a process and copied (tests/courses.py)."""

from __future__ import annotations

import filecmp
import sqlite3
from pathlib import Path

import courses
import pytest

ASSIGNMENT = "01_what_a_gradient_is"
UNIQUE = "# a configuration no other test of this process uses\n"

pytestmark = pytest.mark.nbgrader  # nbgrader's generate_assignment (tests/tiers.py)


def gradebook_rows(course: Path) -> list[str]:
    with sqlite3.connect(course / "gradebook.db") as connection:
        return list(connection.iterdump())


def same_tree(one: Path, other: Path) -> bool:
    compared = filecmp.dircmp(one, other)
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(one, other, compared.common_files, shallow=False)
    return not (mismatch or errors) and all(
        same_tree(one / name, other / name) for name in compared.common_dirs
    )


def test_a_second_course_alike_is_a_copy_of_the_first_and_independent(tmp_path: Path) -> None:
    made = courses.templates_made()
    first = courses.make_course(tmp_path / "first", [ASSIGNMENT], UNIQUE)
    assert courses.templates_made() == made + 1  # generated once
    second = courses.make_course(tmp_path / "second", [ASSIGNMENT], UNIQUE)
    assert courses.templates_made() == made + 1  # then copied
    assert same_tree(first, second)
    assert gradebook_rows(first) == gradebook_rows(second)
    assert (second / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    (first / "exercises" / ASSIGNMENT / "scratch.txt").write_text("only in the first")
    assert not (second / "exercises" / ASSIGNMENT / "scratch.txt").exists()
    courses.make_course(tmp_path / "third", [ASSIGNMENT], UNIQUE)
    assert courses.templates_made() == made + 1
    assert not (tmp_path / "third" / "exercises" / ASSIGNMENT / "scratch.txt").exists()


def test_a_course_that_depends_on_what_is_outside_it_is_made_for_real(tmp_path: Path) -> None:
    other_id = "c = get_config()\nc.CourseDirectory.course_id = 'elsewhere-2026'\n"
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "site_config.py").write_text(other_id)  # read by nbgrader_config.py
    assert not courses.copyable(occupied, "")
    assert not courses.copyable(tmp_path / "free", "c.CourseDirectory.db_url = 'postgresql://x'")
    assert courses.copyable(tmp_path / "free", "")
    made = courses.make_course(occupied, [ASSIGNMENT])
    assert any("elsewhere-2026" in row for row in gradebook_rows(made))
