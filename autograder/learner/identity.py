"""Whose numbers: the learner's identity, as the notebook's kernel can tell it.

In order:
1. under `nbgrader autograde` (NBGRADER_EXECUTION=autograde), the student whose folder
   the notebook runs in: nbgrader runs each submission with its working directory in
   `autograded/<student>/<assignment>/`, so the folder, not the notebook, says who it is;
2. `JUPYTERHUB_USER`, JupyterHub's name for the logged-in user;
3. nbgrader's configured student id (`CourseDirectory.student_id` in an nbgrader_config.py
   of the working directory or of Jupyter's config path), when it names one student;
4. the local user name.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from pathlib import Path

FALLBACK = "learner"


def _configured_student_id(cwd: Path) -> str | None:
    """CourseDirectory.student_id from nbgrader_config.py files, if one names a student."""
    try:
        from jupyter_core.paths import jupyter_config_path
        from traitlets.config.loader import PyFileConfigLoader
    except ImportError:
        return None
    found: str | None = None
    for folder in [*reversed(jupyter_config_path()), str(cwd)]:
        if not (Path(folder) / "nbgrader_config.py").is_file():
            continue
        try:
            config = PyFileConfigLoader("nbgrader_config.py", path=folder).load_config()
        except Exception:
            continue
        value = config.get("CourseDirectory", {}).get("student_id")
        if isinstance(value, str) and value.strip() not in ("", "*", "."):
            found = value.strip()
    return found


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
