"""Test courses generated once per test process and copied for each test that asks.

`make_course(root, assignments, extra_config)` is `autograder.authoring.sample_class`'s
(nbgrader's generate_assignment: a gradebook and a release, about half a CPU-second an
assignment), but a second course of the same assignments and configuration is a copy of
the first one made (its gradebook's rows, with their ids, included; the config finds its
own folder, so a copy works where it lands). Made for real, never copied, when what the
course depends on is outside it: `root` already holds files (a site_config.py that
nbgrader_config.py loads), the extra configuration names a gradebook URL (a database
server), or NBGRADER_SITE_CONFIG is set.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from autograder.authoring import sample_class
from autograder.core.givens import COURSE_ID, SECRET_FILE, Site, create_secret, read_secret

_TEMPLATES: dict[tuple[tuple[str, ...], str], Path] = {}
_FOLDER: list[Path] = []  # made on first use, removed when the process ends


def _folder() -> Path:
    if not _FOLDER:
        _FOLDER.append(Path(tempfile.mkdtemp(prefix="course-templates-")))
        atexit.register(shutil.rmtree, _FOLDER[0], True)
    return _FOLDER[0]


def copyable(root: Path, extra_config: str) -> bool:
    """Whether a course at `root` is all in its folder, so a copy of another is the same."""
    occupied = root.exists() and any(root.iterdir())
    return not (occupied or "db_url" in extra_config or os.environ.get("NBGRADER_SITE_CONFIG"))


def make_course(root: Path, assignments: list[str], extra_config: str = "") -> Path:
    """A course directory with `assignments` generated (gradebook and release): a copy of
    one made earlier in this process with the same arguments, when `copyable`."""
    if not copyable(root, extra_config):
        return sample_class.make_course(root, assignments, extra_config)
    key = (tuple(assignments), extra_config)
    if key not in _TEMPLATES:
        template = _folder() / f"course{len(_TEMPLATES)}"
        _TEMPLATES[key] = sample_class.make_course(template, assignments, extra_config)
    shutil.copytree(_TEMPLATES[key], root, symlinks=True, dirs_exist_ok=True)
    return root


def templates_made() -> int:
    """How many courses were generated for real to be copied (for the tests of this)."""
    return len(_TEMPLATES)


def site_where(course: Path, accept: Callable[[Site], bool]) -> Site:
    """A new secret for `course`, drawn again until `accept` holds for its site (say, a
    class whose learners draw more than one structure, which a random secret need not give);
    the site."""
    while True:
        create_secret(course)
        site = Site(COURSE_ID, read_secret(course))
        if accept(site):
            return site
        (course / SECRET_FILE).unlink()
