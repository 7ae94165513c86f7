"""`nbgrader export` of released assignments only (the course config sets this plugin).

`make assign` records every assignment of the course in the gradebook, released or not;
nbgrader's CSV export would give every student a zero for each one not yet released.
Released means: in the exchange's outbound folder (`nbgrader release_assignment`), or
handed in at least once (e.g. collected from an LMS with `nbgrader zip_collect`).
`nbgrader export --assignment=...` still exports exactly what it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbgrader.plugins import CsvExportPlugin

DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"


def released_assignments(gradebook: Any, exchange_root: str, course_id: str) -> list[str]:
    """The gradebook's assignments that were released or handed in, by name."""
    outbound = Path(exchange_root) / course_id / "outbound"
    return [
        a.name
        for a in gradebook.assignments
        if (outbound / a.name).is_dir() or a.num_submissions > 0
    ]


class ReleasedExport(CsvExportPlugin):  # type: ignore[misc]
    """nbgrader's CSV export, of the released assignments unless told which."""

    def export(self, gradebook: Any) -> None:
        named: list[str] = list(getattr(self, "assignment"))  # noqa: B009 (an untyped trait)
        if not named:
            exchange = str(self.config.Exchange.get("root", DEFAULT_EXCHANGE))
            course_id = str(self.config.CourseDirectory.get("course_id", ""))
            released = released_assignments(gradebook, exchange, course_id)
            unreleased = sorted({a.name for a in gradebook.assignments} - set(released))
            if unreleased:
                self.log.info("Not released, not exported: %s", ", ".join(unreleased))
            if not released:
                self.log.warning("No assignment is released yet: nothing to export")
                released = ["(no assignment released)"]  # matches none
            self.assignment = released
        super().export(gradebook)
