"""Honest feedback on manually graded parts: pending, or awaiting review, never a stale score.

nbgrader's feedback shows a written answer nobody has graded yet as "0.0 / 1.0", and after
a resubmission that changed it, the score (and comment) given to the old text. The course
config (nbgrader_config.py) runs `ManualGrades` after nbgrader's GetGrades in every
`nbgrader generate_feedback` (and `autograder serve --release-feedback`), with the
template in templates/feedback (it shadows nbgrader's own "feedback" template, so
only feedback pages use it; formgrader's pages keep theirs), which shows each manually
graded part as:
- "pending review": no manual score yet (and no automatic one);
- "awaiting review (changed since it was graded)": `autograder grade` took the manual
  score out of the gradebook when the answer changed (grading/manual_review: formgrader,
  the export and the report then agree), or, after nbgrader's own autograde, a manual
  score exists, nbgrader marks the part as needing a grade again, and the answer's text
  is not the one last seen graded; its score and comment are left out;
- its score otherwise.
The notebook's total leaves those parts out and says how many points await review. What
was graded is remembered per part as a hash of the answer's text when feedback is made
while the grade is current (formgrader clears nbgrader's needs-manual-grade mark), in
`ManualGrades.reviewed_dir` (the grader's state folder). Without that memory a regraded
manual part shows as awaiting review: never a score it may not deserve.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder.grading.manual_review import (
    answer_hash,
    kept_path,
    manually_graded,
    read_kept,
    seen_path,
)

PENDING = "pending"
CHANGED = "changed"


def status_of(grade: Any, source: str, reviewed: str | None, taken_out: bool) -> str | None:
    """PENDING, CHANGED, or None (the score stands) for one manually graded part;
    `taken_out`: the grader took a manual score out when the answer changed."""
    if grade.manual_score is None:
        if grade.auto_score is not None:
            return None
        return CHANGED if taken_out and grade.needs_manual_grade else PENDING
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
        taken_out = (
            read_kept(kept_path(Path(self.reviewed_dir), info["student"], info["assignment"]))
            if self.reviewed_dir
            else {}
        )
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
                status = status_of(grade, cell.source, seen.get(key), key in taken_out)
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
        return seen_path(Path(self.reviewed_dir), student, assignment)
