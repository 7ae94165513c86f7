"""Whose numbers: the learner's identity, as the notebook's kernel can tell it.

In order:
1. under `nbgrader autograde` (NBGRADER_EXECUTION=autograde), the student whose folder
   the notebook runs in: nbgrader runs each submission with its working directory in
   `autograded/<student>/<assignment>/`, so the folder, not the notebook, says who it is;
2. `JUPYTERHUB_USER`, JupyterHub's name for the logged-in user;
3. nbgrader's configured student id (`CourseDirectory.student_id` in an nbgrader_config.py
   of the working directory or of Jupyter's config path), when it names one student;
4. the local user name.

Whose installation (`learner_site`): the course id is nbgrader's `CourseDirectory.course_id`
from the same config files (the public one without any); the learner's key comes from
`AUTOGRADER_LEARNER_KEY` (`learner:key`, set by the instructor's side for that learner
alone); under `nbgrader autograde` on the instructor's side, the course's secret is read
from the course folder (`givens.read_secret`), so the numbers agree with the grader's.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from pathlib import Path

from autograder.core.givens import COURSE_ID, Site, read_secret

FALLBACK = "learner"


KEY_VARIABLE = "AUTOGRADER_LEARNER_KEY"
CONFIG = "nbgrader_config.py"
COURSE_DEPTH = 4  # how far above an autograded notebook nbgrader's course root may be


def _configured(cwd: Path, name: str) -> str | None:
    """CourseDirectory.<name> from nbgrader_config.py files (Jupyter's config path, then
    the working directory; the last that sets a real value wins)."""
    try:
        from jupyter_core.paths import jupyter_config_path
        from traitlets.config.loader import PyFileConfigLoader
    except ImportError:
        return None
    found: str | None = None
    for folder in [*reversed(jupyter_config_path()), str(cwd)]:
        if not (Path(folder) / CONFIG).is_file():
            continue
        try:
            config = PyFileConfigLoader(CONFIG, path=folder).load_config()
        except Exception:
            continue
        value = config.get("CourseDirectory", {}).get(name)
        if isinstance(value, str) and value.strip() not in ("", "*", "."):
            found = value.strip()
    return found


def _configured_student_id(cwd: Path) -> str | None:
    """CourseDirectory.student_id from nbgrader_config.py files, if one names a student."""
    return _configured(cwd, "student_id")


def _graded_course_root(cwd: Path) -> Path | None:
    """Under `nbgrader autograde`, the course folder above the notebook being graded."""
    for folder in list(cwd.parents)[1:COURSE_DEPTH]:
        if (folder / CONFIG).is_file():
            return folder
    return None


def learner_site(
    learner: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[Site, str | None]:
    """(the installation, the learner's key or None) for `learner`'s numbers."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    root = _graded_course_root(cwd) if grading(env) else None
    course_id = _configured(root or cwd, "course_id") or COURSE_ID
    secret = read_secret(root) if root is not None else ""
    owner, _, key = env.get(KEY_VARIABLE, "").partition(":")
    return Site(course_id, secret), (key.strip() or None) if owner == learner else None


def learner_identity(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[str, str]:
    """(learner id, where it came from)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    if env.get("NBGRADER_EXECUTION") == "autograde" and cwd.parent.name:
        return cwd.parent.name, "the folder nbgrader is grading"
    user = env.get("JUPYTERHUB_USER", "").strip()
    if user:
        return user, "JUPYTERHUB_USER"
    student = _configured_student_id(cwd)
    if student:
        return student, "nbgrader's student id"
    try:
        return getpass.getuser(), "the local user name"
    except (KeyError, OSError):
        return FALLBACK, "no user name found"


def grading(env: Mapping[str, str] | None = None) -> bool:
    """True while nbgrader autogrades (practice numbers are then off)."""
    env = os.environ if env is None else env
    return env.get("NBGRADER_EXECUTION") == "autograde"
