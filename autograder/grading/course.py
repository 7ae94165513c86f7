"""Whether a folder is a course `autograder grade` and `serve` can grade, checked before
any worker starts: its configuration, its gradebook, its secret, and room for the grader's
records."""

from __future__ import annotations

from pathlib import Path

from autograder.core.givens import SecretError, read_secret
from autograder.sandbox.settings import load_config, worker_log_dir


def course_problem(course: Path) -> str | None:
    """Why `course` is not a course folder autograder can grade (None: it is one)."""
    if not (course / "nbgrader_config.py").is_file():
        return (
            f"{course} is not an nbgrader course folder (no nbgrader_config.py): run in the "
            "course folder or pass --course-dir"
        )
    url = str(load_config(course).CourseDirectory.db_url)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return (
            f"no gradebook at {url.removeprefix('sqlite:///')}: record the assignments first "
            "(`make assign`), then grade"
        )
    try:
        read_secret(course)  # before any worker starts: numbers without it are wrong ones
    except SecretError as error:
        return str(error)
    logs = worker_log_dir(course)
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return (
            f"cannot write the grader's records in {logs.parent} ({error.strerror}): grade as "
            "the course's owner"
        )
    return None
