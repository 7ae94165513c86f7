"""`nbgrader export` (the course's config) counts only released assignments.

`make assign` records every assignment; before this, the export gave each student a zero
for the ones not released yet. Here two are recorded, one released through a real
exchange with `nbgrader release_assignment`: the CSV has rows of that one only, and
`--assignment=` still exports what it names.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.sample_class import make_course

pytestmark = [pytest.mark.nbgrader]

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
RELEASED, NOT_YET = "01_what_a_gradient_is", "03_a_neuron_by_hand"


def nbgrader(course: Path, *args: str) -> None:
    done = subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=course, env=ENV, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def exported(course: Path, *args: str) -> set[str]:
    nbgrader(course, "export", f"--to={course / 'grades.csv'}", *args)
    with open(course / "grades.csv") as handle:
        return {row["assignment"] for row in csv.DictReader(handle)}


def test_export_counts_only_released_assignments(tmp_path: Path) -> None:
    exchange = tmp_path / "exchange"
    config = f"c.Exchange.root = {str(exchange)!r}\n"
    course = make_course(tmp_path / "course", [RELEASED, NOT_YET], extra_config=config)
    nbgrader(course, "db", "student", "add", "ada")
    assert exported(course) == set()  # nothing released yet: no zeros for anything
    shutil.copytree(course / "exercises" / RELEASED, course / "release" / RELEASED)
    nbgrader(course, "release_assignment", RELEASED)
    assert exported(course) == {RELEASED}
    assert exported(course, f"--assignment={NOT_YET}") == {NOT_YET}
