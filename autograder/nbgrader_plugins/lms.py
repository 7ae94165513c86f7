"""`nbgrader zip_collect` for the file names learning-management systems give downloads.

nbgrader's own collector matches one `named_regexp` against the whole path of every
extracted file, so out of the box it collects nothing. `LmsFileNames` matches the file
name alone against a list of patterns (Canvas, Blackboard and Moodle by default; change
`c.LmsFileNames.patterns` in the site config for another LMS):

    ada_LATE_1234_56789_01_what_a_gradient_is-1.ipynb           Canvas (late, resubmitted)
    Week 1_ada_attempt_2026-11-30-09-15-00_01_what_a_gradient_is.ipynb   Blackboard
    ada_1234_assignsubmission_file_01_what_a_gradient_is.ipynb  Moodle (login in the name)

Canvas marks a late submission with `LATE` but gives no time. The flag is kept as the
only timestamp it implies: one second after the assignment's due date in the gradebook,
so formgrader and `nbgrader export` show the submission late (a late-penalty plugin then
applies its minimum). Without a due date the flag cannot be recorded and a warning says so.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from typing import Any

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import List, Unicode

CANVAS = (
    r"^(?P<student_id>[A-Za-z0-9.-]+)_(?:(?P<late>LATE|late)_)?\d+_\d+_"
    r"(?P<file_id>.+?)(?:-\d+)?\.ipynb$"
)
BLACKBOARD = (
    r"^.*?_(?P<student_id>[A-Za-z0-9.-]+)_attempt_"
    r"(?P<timestamp>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)_(?P<file_id>.+?)\.ipynb$"
)
MOODLE = r"^(?P<student_id>[A-Za-z0-9.-]+)_\d+_assignsubmission_file_(?P<file_id>.+?)\.ipynb$"


def blackboard_time(text: str) -> str:
    """Blackboard's `2026-11-30-09-15-00` as the ISO time nbgrader parses."""
    day, clock = text[:10], text[11:].replace("-", ":")
    return f"{day} {clock}"


class LmsFileNames(FileNameCollectorPlugin):  # type: ignore[misc]
    """Collect LMS downloads by file name; see the module docstring."""

    patterns = List(
        Unicode(),
        default_value=[CANVAS, BLACKBOARD, MOODLE],
        help="Regular expressions tried in order on each file's name (not its path); each "
        "names the groups student_id and file_id, and optionally timestamp and late.",
    ).tag(config=True)

    def collect(self, submitted_file: str) -> dict[str, Any] | None:
        """student_id, file_id and (when the name tells) timestamp; None skips the file."""
        name = os.path.basename(submitted_file)
        if os.path.splitext(name)[1] not in self.valid_ext:
            return None
        for pattern in self.patterns:
            match = re.match(pattern, name)
            if match:
                break
        else:
            self.log.warning("No LMS file-name pattern matches %s: skipped", name)
            return None
        found = {k: v for k, v in match.groupdict().items() if v is not None}
        info: dict[str, Any] = {"student_id": found["student_id"], "file_id": found["file_id"]}
        if "timestamp" in found:
            info["timestamp"] = blackboard_time(found["timestamp"])
        elif "late" in found:
            late = self.late_timestamp()
            if late is None:
                self.log.warning(
                    "%s is marked late, but the assignment has no due date in the gradebook: "
                    "the late flag cannot be recorded",
                    name,
                )
            else:
                info["timestamp"] = late
        return info

    def late_timestamp(self) -> str | None:
        """One second after the current assignment's due date (None without one)."""
        from nbgrader.api import Gradebook, MissingEntry

        coursedir = self.parent.coursedir  # the running ZipCollectApp's
        try:
            with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
                due = gb.find_assignment(coursedir.assignment_id).duedate
        except MissingEntry:
            return None
        if due is None:
            return None
        return str((due + timedelta(seconds=1)).isoformat(sep=" "))
