"""An instructor's installation: site settings, `make assign`, LMS zip_collect, `make clean`,
and the refusal of an unsupported Python. Real nbgrader commands on throwaway courses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from autograder.grading.runner import load_config
from autograder.sandbox.settings import CourseConfigError

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01_what_a_gradient_is"
BIN = Path(sys.executable).parent


def course_copy(tmp_path: Path) -> Path:
    """A course with one assignment's source and the tracked nbgrader_config.py."""
    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, course / "solutions" / ASSIGNMENT)
    shutil.copy(REPO / "nbgrader_config.py", course)
    return course


def run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=environment, capture_output=True, text=True
    )


def assign(course: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """`make assign` on `course`."""
    return run(
        sys.executable,
        "-m",
        "autograder.authoring.release",
        "--assign",
        "--repo",
        course,
        *names,
        cwd=REPO,
    )


@pytest.mark.processes
def test_python_older_than_the_pins_is_refused_before_pip() -> None:
    refused = run(sys.executable, REPO / "tools/check_python.py", "--version", "3.11.1", cwd=REPO)
    assert refused.returncode == 1
    assert "3.11.1" in refused.stderr and ">=3.11.2" in refused.stderr
    debian = run(sys.executable, REPO / "tools/check_python.py", "--version", "3.11.2", cwd=REPO)
    assert debian.returncode == 0, debian.stderr  # Debian 12's own python3
    too_new = run(sys.executable, REPO / "tools/check_python.py", "--version", "3.12.1", cwd=REPO)
    assert too_new.returncode == 1
    assert run(sys.executable, REPO / "tools/check_python.py", cwd=REPO).returncode == 0


@pytest.mark.processes
def test_setup_script_refuses_without_creating_a_venv(tmp_path: Path) -> None:
    """setup_venv.sh stops at the check: no venv, no pip (a fake 3.11.1 interpreter)."""
    fake = tmp_path / "python3.11.1"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in -c) exit 0;; esac\n'  # passes the script's 3.11 test
        f'exec {sys.executable} "$1" --version 3.11.1\n'
    )
    fake.chmod(0o755)
    result = run("bash", REPO / "tools/setup_venv.sh", fake, tmp_path / "venv", cwd=REPO)
    assert result.returncode == 1
    assert "cannot install the course's pinned packages" in result.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.processes
def test_site_settings_live_outside_the_tracked_config(tmp_path: Path) -> None:
    course = course_copy(tmp_path)
    default = load_config(course)
    assert default.CourseDirectory.course_id == "backward-course"
    (course / "site_config.py").write_text(
        "c = get_config()\n"
        'c.CourseDirectory.course_id = "autumn-2026"\n'
        'c.Exchange.root = "/srv/exchange"\n'
        'c.CourseDirectory.db_url = "postgresql://grader@localhost/autumn"\n'
    )
    site = load_config(course)
    assert site.CourseDirectory.course_id == "autumn-2026"
    assert site.Exchange.root == "/srv/exchange"
    assert site.CourseDirectory.db_url == "postgresql://grader@localhost/autumn"
    elsewhere = tmp_path / "other_site.py"
    elsewhere.write_text('c = get_config()\nc.CourseDirectory.course_id = "spring"\n')
    os.environ["NBGRADER_SITE_CONFIG"] = str(elsewhere)
    try:
        assert load_config(course).CourseDirectory.course_id == "spring"
        os.environ["NBGRADER_SITE_CONFIG"] = str(tmp_path / "missing.py")
        with pytest.raises(CourseConfigError, match="NBGRADER_SITE_CONFIG names .*missing.py"):
            load_config(course)
    finally:
        del os.environ["NBGRADER_SITE_CONFIG"]
    ignored = run("git", "check-ignore", "site_config.py", "grades.csv", "reports/x.html", cwd=REPO)
    assert ignored.stdout.split() == ["site_config.py", "grades.csv", "reports/x.html"]


def gradebook_cells(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "backward-course") as gb:
        notebook = gb.find_notebook(ASSIGNMENT, ASSIGNMENT)
        return {cell.name: float(cell.max_score) for cell in notebook.grade_cells}


@pytest.mark.nbgrader
def test_assign_fills_gradebook_and_release_without_touching_exercises(tmp_path: Path) -> None:
    course = course_copy(tmp_path)
    result = assign(course)
    assert result.returncode == 0, result.stderr
    cells = gradebook_cells(course)
    assert sum(cells.values()) == 7  # 6 hand answers + 1 written answer
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert released.read_bytes() == (REPO / "exercises" / ASSIGNMENT / released.name).read_bytes()
    assert not (course / "exercises").exists()
    bad = assign(course, "nope")
    assert bad.returncode == 2 and "no such assignment" in bad.stderr


def lms_notebook(course: Path, answer: str) -> bytes:
    nb = json.loads((course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    nb["metadata"]["lms_marker"] = answer  # tells the copies apart
    return json.dumps(nb).encode()


@pytest.mark.nbgrader
def test_zip_collect_takes_canvas_blackboard_and_moodle_names(tmp_path: Path) -> None:
    from nbgrader.api import Gradebook

    course = course_copy(tmp_path)
    assert assign(course).returncode == 0
    due = datetime(2026, 11, 30, 12, 0, 0)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "backward-course") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    names = {
        "ada": f"ada_4411_99101_{ASSIGNMENT}.ipynb",  # Canvas, on time
        "ben": f"ben_LATE_4412_99102_{ASSIGNMENT}-1.ipynb",  # Canvas, late, resubmitted
        "cyd": f"Week 1_cyd_attempt_2026-11-29-09-15-00_{ASSIGNMENT}.ipynb",  # Blackboard
        "dee": f"dee_5120_assignsubmission_file_{ASSIGNMENT}.ipynb",  # Moodle
    }
    with zipfile.ZipFile(archive / "submissions.zip", "w") as bundle:
        for student, name in names.items():
            bundle.writestr(name, lms_notebook(course, student))
        bundle.writestr("readme.txt", "not a notebook")
    result = run("nbgrader", "zip_collect", ASSIGNMENT, cwd=course)
    assert result.returncode == 0, result.stdout + result.stderr
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == sorted(names)
    for student in names:
        notebook = submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert json.loads(notebook.read_text())["metadata"]["lms_marker"] == student
    stamp = (submitted / "ben" / ASSIGNMENT / "timestamp.txt").read_text()
    assert stamp.startswith("2026-11-30 12:00:01")  # the LATE flag: after the due date
    assert (
        (submitted / "cyd" / ASSIGNMENT / "timestamp.txt")
        .read_text()
        .startswith("2026-11-29 09:15:00")
    )
    assert not (submitted / "ada" / ASSIGNMENT / "timestamp.txt").exists()


@pytest.mark.processes
def test_make_clean_keeps_instructor_data(tmp_path: Path) -> None:
    shutil.copy(REPO / "Makefile", tmp_path)
    data = ["gradebook.db", "submitted/ada/a.ipynb", "autograded/ada/a.ipynb", "grades.csv"]
    data += [".autograder/graded/a/ada.json", ".autograder/refused/x/reason.txt"]
    secret = tmp_path / ".autograder" / "givens_secret"
    for rel in [*data, ".venv/bin/python"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert run("make", "clean", cwd=tmp_path).returncode == 0
    assert not (tmp_path / ".venv").exists()
    assert all((tmp_path / rel).exists() for rel in data)
    refused = run("make", "clean-grades", cwd=tmp_path)
    assert refused.returncode != 0 and "CONFIRM=1" in refused.stdout
    assert all((tmp_path / rel).exists() for rel in data)
    secret.write_text("the course's secret")
    assert run("make", "clean-grades", "CONFIRM=1", cwd=tmp_path).returncode == 0
    assert not any((tmp_path / rel).exists() for rel in data)
    assert sorted(p.name for p in secret.parent.iterdir()) == ["givens_secret"]
    assert secret.read_text() == "the course's secret"  # every learner keeps their numbers


@pytest.mark.nbgrader
def test_nbgrader_generate_as_formgrader_runs_it_leaves_exercises_alone(tmp_path: Path) -> None:
    """Formgrader's Generate button runs `generate_assignment --force`: it writes release/
    and the gradebook, never the committed exercises/ (which only `make exercises` writes)."""
    course = course_copy(tmp_path)
    committed = REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    (course / "exercises" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(committed, course / "exercises" / ASSIGNMENT)
    result = run("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    assert result.returncode == 0, result.stderr
    assert (course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
    assert (
        course / "exercises" / ASSIGNMENT / committed.name
    ).read_bytes() == committed.read_bytes()
    assert sum(gradebook_cells(course).values()) == 7


@pytest.mark.processes
def test_class_server_refuses_clearly_what_it_cannot_run(tmp_path: Path) -> None:
    """`make class` stops with exit 2 and the reason, before starting JupyterHub."""
    serve = [sys.executable, REPO / "deploy" / "hub" / "start_class.py"]
    missing = run(*serve, "--instructor", "no-such-login-4711", cwd=tmp_path)
    assert missing.returncode == 2
    if os.geteuid() != 0:
        assert "runs as root" in missing.stderr
        return
    assert "no local account 'no-such-login-4711'" in missing.stderr
    course = course_copy(tmp_path)  # owned by root, not by the instructor
    foreign = run(*serve, "--instructor", "nobody", "--course-dir", course, cwd=tmp_path)
    assert foreign.returncode == 2 and "must own the course directory" in foreign.stderr
    assert not (course / ".class").exists()


@pytest.mark.processes
def test_class_refuses_a_python_some_user_cannot_run(tmp_path: Path) -> None:
    """`make class` checks first that every user can run the chosen Python: one reached
    only through a folder closed to others is refused, naming that folder."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (closed / "python3").symlink_to(os.path.realpath(sys.executable))
    refused = run(closed / "python3", REPO / "tools/check_python.py", "--every-user", cwd=REPO)
    assert refused.returncode == 1
    assert "is closed to other users" in refused.stderr, refused.stderr  # (pytest's own
    # temporary folder is closed too: the first closed folder on the way is named)
    if os.path.exists("/usr/bin/python3.11"):  # Debian 12's own: every user runs it
        debian = run(
            "/usr/bin/python3.11", REPO / "tools/check_python.py", "--every-user", cwd=REPO
        )
        assert debian.returncode == 0, debian.stderr
