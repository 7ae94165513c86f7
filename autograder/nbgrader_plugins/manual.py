"""Honest feedback on manually graded parts: pending, or awaiting review, never a stale score.

nbgrader's feedback shows a written answer nobody has graded yet as "0.0 / 1.0", and after
a resubmission that changed it, the score (and comment) given to the old text. The course
config (nbgrader_config.py) runs `ManualGrades` after nbgrader's GetGrades in every
`nbgrader generate_feedback` (and `autograder serve --release-feedback`), with the
template in templates/feedback (it shadows nbgrader's own "feedback" template, so
only feedback pages use it; formgrader's pages keep theirs), which shows each manually
graded part as:
- "pending review": no manual score yet (and no automatic one);
- "awaiting review (changed since it was graded)": a manual score exists, nbgrader marks
  the part as needing a grade again (it does after every autograde), and the answer's
  text is not the one last seen graded; its score and comment are left out;
- its score otherwise.
The notebook's total leaves those parts out and says how many points await review. What
was graded is remembered per part as a hash of the answer's text when feedback is made
while the grade is current (formgrader clears nbgrader's needs-manual-grade mark), in
`ManualGrades.reviewed_dir` (the grader's state folder). Without that memory a regraded
manual part shows as awaiting review: never a score it may not deserve.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

PENDING = "pending"
CHANGED = "changed"


def answer_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def manually_graded(cell: Any) -> bool:
    """A part whose points come from the teacher: a graded answer cell, or a task."""
    meta = cell.metadata.get("nbgrader", {})
    return bool((meta.get("grade") and meta.get("solution")) or meta.get("task"))


def status_of(grade: Any, source: str, reviewed: str | None) -> str | None:
    """PENDING, CHANGED, or None (the score stands) for one manually graded part."""
    if grade.manual_score is None:
        return PENDING if grade.auto_score is None else None
    if grade.needs_manual_grade and reviewed != answer_hash(source):
        return CHANGED
    return None


class ManualGrades(NbGraderPreprocessor):  # type: ignore[misc]
    """After GetGrades: mark pending and changed manual parts; fix the notebook's total."""

    reviewed_dir = Unicode(
        "", help="where hashes of answers as graded are kept (empty: nowhere)"
    ).tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        info = resources["nbgrader"]
        memory = self._memory(info["student"], info["assignment"])
        seen = json.loads(memory.read_text()) if memory and memory.is_file() else {}
        waiting = 0.0
        with Gradebook(info["db_url"]) as gradebook:
            for cell in nb.cells:
                if not manually_graded(cell):
                    continue
                meta = cell.metadata.nbgrader
                key = f"{info['notebook']}/{meta['grade_id']}"
                grade = gradebook.find_grade(
                    meta["grade_id"], info["notebook"], info["assignment"], info["student"]
                )
                status = status_of(grade, cell.source, seen.get(key))
                if status is None and grade.manual_score is not None:
                    if not grade.needs_manual_grade:
                        seen[key] = answer_hash(cell.source)  # graded as it stands
                    continue
                if status is None:
                    continue
                meta["manual_status"] = status
                waiting += float(grade.max_score)
                info["score"] -= float(grade.score)
                if status == CHANGED:
                    meta["comment"] = None  # it was about the old answer
        info["manual_waiting"] = waiting
        if memory:
            memory.parent.mkdir(parents=True, exist_ok=True)
            partial = memory.with_name(f".{memory.name}.{os.getpid()}")
            partial.write_text(json.dumps(seen, sort_keys=True))
            partial.replace(memory)
        return nb, resources

    def _memory(self, student: str, assignment: str) -> Path | None:
        if not self.reviewed_dir:
            return None
        return Path(self.reviewed_dir) / student / f"{assignment}.json"
