"""The grader's own state in the course folder (`.autograder/`): files written atomically,
and the marker that says a submission version was graded (or failed), so a killed run
resumes where it stopped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nbgrader.coursedir import CourseDirectory

from autograder.grading.work import Submission
from autograder.sandbox.workers import STATE_DIR

__all__ = ["STATE_DIR", "GradedMarkers", "atomic_write_json"]


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON so a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


class GradedMarkers:
    """`.autograder/graded/<assignment>/<student>.json`: the version graded, or why it failed.

    Written only after nbgrader recorded the submission, so what is not marked is graded
    again on the next run, and recording again overwrites: nothing counts twice."""

    def __init__(self, state: Path, coursedir: CourseDirectory) -> None:
        self.state = state
        self.coursedir = coursedir

    def path(self, sub: Submission) -> Path:
        return self.state / "graded" / sub.assignment / f"{sub.student}.json"

    def already_graded(self, sub: Submission) -> bool:
        """This very version was graded and its autograded/ folder is still there."""
        autograded = Path(
            self.coursedir.format_path(
                self.coursedir.autograded_directory, sub.student, sub.assignment
            )
        )
        try:
            record = json.loads(self.path(sub).read_text())
        except (OSError, ValueError):
            return False
        return bool(
            record.get("status") == "graded"
            and record.get("fingerprint") == sub.fingerprint
            and autograded.is_dir()
        )

    def graded(self, sub: Submission, score: float, max_score: float) -> None:
        atomic_write_json(
            self.path(sub),
            {
                "status": "graded",
                "fingerprint": sub.fingerprint,
                "score": score,
                "max_score": max_score,
                "notes": sub.notes,
            },
        )

    def failed(self, sub: Submission, reasons: list[str]) -> None:
        atomic_write_json(
            self.path(sub),
            {"status": "failed", "fingerprint": sub.fingerprint, "reasons": reasons},
        )
