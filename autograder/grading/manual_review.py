"""A changed written answer needs the teacher again, in the gradebook, so every reader agrees.

On a resubmission nbgrader's autograde keeps each manual score and marks every manually
graded part (a graded answer cell, or a task) as needing a grade again, changed or not:
formgrader, `nbgrader export` and the report counted the old score for a new answer, and
asked the teacher again about answers that had not changed. `ManualReview`, run right
after nbgrader's SaveAutoGrades, compares each such part that has a manual score with the
text the teacher graded (in the previous autograded copy, which formgrader shows):
- unchanged: the grade stands, not marked as needing a grade;
- changed: the score is taken out of the gradebook and the part marked as needing a
  manual grade, so formgrader lists it to
  grade, `nbgrader export` names it under `needs_review` and leaves it out of the score,
  the report counts it as not yet graded and the feedback says "awaiting review (changed
  since it was graded)". The score and comment taken out are kept, with the graded
  text's hash, in `kept_path` (nothing the teacher wrote is lost).
Without a previous autograded copy (it was deleted), the text last seen graded when
feedback was made (`seen_path`, what the feedback's ManualGrades remembers) is compared
instead; with neither, nothing shows the answer changed since it was graded: a score
typed in formgrader while this very hand-in was being recorded stands.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

KEPT_SUFFIX = ".kept.json"


def answer_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def manually_graded(cell: Any) -> bool:
    """A part whose points come from the teacher: a graded answer cell, or a task."""
    meta = cell.metadata.get("nbgrader", {})
    return bool((meta.get("grade") and meta.get("solution")) or meta.get("task"))


def kept_path(reviewed_dir: Path, student: str, assignment: str) -> Path:
    """Where the manual grades taken out of `student`'s `assignment` are kept:
    `notebook/grade_id` -> {score, comment, graded_answer}."""
    return reviewed_dir / student / f"{assignment}{KEPT_SUFFIX}"


def seen_path(reviewed_dir: Path, student: str, assignment: str) -> Path:
    """Where the feedback remembers the text each manual grade was seen given to:
    `notebook/grade_id` -> the answer's hash."""
    return reviewed_dir / student / f"{assignment}.json"


def read_kept(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text())) if path.is_file() else {}


def graded_sources(previous: Path | None, notebook: str) -> dict[str, str] | None:
    """grade_id -> source of the previous autograded copy's cells (None: no copy)."""
    if previous is None or not (previous / f"{notebook}.ipynb").is_file():
        return None
    graded = nbformat.read(previous / f"{notebook}.ipynb", as_version=4)
    return {
        str(cell.metadata.nbgrader["grade_id"]): str(cell.source)
        for cell in graded.cells
        if "grade_id" in cell.metadata.get("nbgrader", {})
    }


class ManualReview(NbGraderPreprocessor):  # type: ignore[misc]
    """After SaveAutoGrades: a manual grade stands for the text it was given to only."""

    def __init__(self, previous: Path | None, reviewed_dir: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.previous = previous  # the previous autograded copy, set aside
        self.reviewed_dir = reviewed_dir

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        info = resources["nbgrader"]
        student, assignment, notebook = info["student"], info["assignment"], info["notebook"]
        graded = graded_sources(self.previous, notebook)
        seen = read_kept(seen_path(self.reviewed_dir, student, assignment))
        path = kept_path(self.reviewed_dir, student, assignment)
        kept = read_kept(path)
        changed = False
        with Gradebook(info["db_url"]) as gradebook:
            for cell in nb.cells:
                if not manually_graded(cell):
                    continue
                grade_id = cell.metadata.nbgrader["grade_id"]
                grade = gradebook.find_grade(grade_id, notebook, assignment, student)
                if grade.manual_score is None:
                    continue
                key = f"{notebook}/{grade_id}"
                before = graded.get(grade_id) if graded is not None else None
                graded_hash = answer_hash(before) if before is not None else seen.get(key)
                if graded_hash is None or graded_hash == answer_hash(cell.source):
                    grade.needs_manual_grade = False  # graded as it stands
                    continue
                comment = gradebook.find_comment(grade_id, notebook, assignment, student)
                kept[key] = {
                    "score": grade.manual_score,
                    "comment": comment.manual_comment,
                    "graded_answer": graded_hash,
                }
                grade.manual_score = None
                grade.needs_manual_grade = True
                comment.manual_comment = None
                changed = True
            if changed:  # kept before the gradebook forgets it
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                partial = path.with_name(f".{path.name}.{os.getpid()}")
                partial.write_text(json.dumps(kept, sort_keys=True))
                partial.replace(path)
            gradebook.db.commit()
        return nb, resources
