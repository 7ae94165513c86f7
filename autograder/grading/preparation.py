"""Preparing a submission in the grader's process: every notebook read defensively, its
tampering noted, metadata tampering undone and nbgrader's own sanitising preprocessors
run, learner content made inert, and the trusted plan (which exercise, which test cells)
made from the instructor's cells."""

from __future__ import annotations

import copy
import json
import random
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from autograder.diagnosis import references
from autograder.grading import trusted
from autograder.grading.budgets import BudgetExceeded, Budgets
from autograder.grading.inert import make_inert
from autograder.grading.recording import (
    FLAG_KEYS,
    SANITIZERS,
    RecordingRun,
    RepairGradedCells,
    notebook_resources,
    uses_torch,
)
from autograder.grading.submissions import SubmissionError, read_file
from autograder.grading.work import PreparedNotebook, Submission

if TYPE_CHECKING:
    from autograder.diagnosis.prefetch import Prefetch


def import_torch() -> None:
    """Import PyTorch, which the judge needs for reference values not stored yet and for
    code exercises (in a background thread, when `prepare` finds it will be needed)."""
    import torch  # noqa: F401


def read_submitted_notebook(path: Path, budgets: Budgets) -> Any:
    """Read a submitted notebook, or raise SubmissionError saying plainly what is wrong."""
    limit = int(budgets.max_notebook_mb * 1e6)
    raw = read_file(path, limit)
    if not raw:
        raise SubmissionError(f"{path.name} is an empty file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SubmissionError(f"{path.name} is not a notebook (binary data, not text)") from None
    except json.JSONDecodeError as error:
        raise SubmissionError(f"{path.name} is not valid JSON ({error})") from None
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        raise SubmissionError(f"{path.name} is JSON but not a notebook")
    budgets.check_values(path.name, data)
    major = data.get("nbformat")
    if major != 4:
        raise SubmissionError(
            f"{path.name} is in notebook format {major}; the course needs format 4 "
            "(open and save it in JupyterLab to convert it)"
        )
    cells = data.get("cells")
    if isinstance(cells, list):
        budgets.check_cells(path.name, [c for c in cells if isinstance(c, dict)])
    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
    except Exception as error:
        raise SubmissionError(f"{path.name} is not a valid notebook: {error}") from None
    return notebook


def tampering_notes(submitted: Any, source_cells: dict[str, Any], notebook_id: str) -> list[str]:
    """What the learner changed that they should not have (nbgrader restores most of it)."""
    notes = []
    seen: dict[str, int] = {}
    for cell in submitted.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            continue
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if not isinstance(grade_id, str) or not grade_id:
            notes.append(f"{notebook_id}: nbgrader metadata on a cell without an id (ignored)")
            continue
        seen[grade_id] = seen.get(grade_id, 0) + 1
        original = source_cells.get(grade_id)
        if original is None:
            notes.append(f"{notebook_id}: unknown graded cell id {grade_id!r} (ignored)")
            continue
        if original["locked"] and cell.get("source", "") != original["source"]:
            notes.append(f"{notebook_id}: edited locked cell {grade_id!r} (restored)")
        for key in FLAG_KEYS:  # a flag an older notebook leaves out is false
            if (
                key in original
                and meta.get(key, None if key == "points" else False) != original[key]
            ):
                notes.append(f"{notebook_id}: changed nbgrader metadata {key!r} of {grade_id!r}")
                break
    for grade_id, count in seen.items():
        if count > 1:
            notes.append(f"{notebook_id}: cell {grade_id!r} appears {count} times (first kept)")
    for grade_id, original in source_cells.items():
        if grade_id not in seen and (original["grade"] or original["locked"]):
            notes.append(f"{notebook_id}: deleted cell {grade_id!r} (its points are lost)")
    kernel = submitted.metadata.get("kernelspec", {}).get("name")
    if kernel not in (None, "python3"):
        notes.append(f"{notebook_id}: kernelspec changed to {kernel!r} (reset)")
    return notes


def check_timestamp(folder: Path) -> None:
    """A timestamp.txt nbgrader cannot read would fail the recording, after the notebooks
    ran: refused before, with what it holds."""
    from nbgrader.utils import parse_utc

    path = folder / "timestamp.txt"
    if not path.is_file():
        return
    held = "over 1000 bytes"
    try:
        text = read_file(path, 1000).decode("utf-8", errors="replace").strip()
        held = repr(text[:60])
        if text:  # nbgrader reads an empty one as no time: not late
            parse_utc(text)
    except (SubmissionError, ValueError, OverflowError, TypeError):
        raise SubmissionError(
            f"timestamp.txt holds {held}, not a time nbgrader can read: write the hand-in "
            "time as `nbgrader submit` does (2026-11-30 12:00:01.000000 UTC), or delete the "
            "file (then it is not late)"
        ) from None


class Preparation:
    """Reads, checks and sanitises each notebook of a submission (raises SubmissionError)."""

    def __init__(
        self,
        config: Config,
        coursedir: CourseDirectory,
        budgets: Budgets,
        rng: random.Random,
        run: RecordingRun,
        prefetch: Prefetch | None = None,
    ) -> None:
        """`prefetch`: where reference values not stored yet are asked for (else PyTorch
        is imported here, in the background, to compute them)."""
        self.prefetch = prefetch
        self.config = config
        self.run = run
        self.coursedir = coursedir
        self.budgets = budgets
        self.rng = rng
        self.site = trusted.course_site(coursedir)  # whose numbers: this installation's
        self.torch_imported = "torch" in sys.modules  # or being imported

    def source_cells(self, assignment: str, notebook_id: str) -> dict[str, Any]:
        """The instructor's version of each graded or locked cell."""
        db_url, course_id = self.coursedir.db_url, self.coursedir.course_id
        return self.run.source_cells(db_url, course_id, assignment, notebook_id)

    def sanitize(
        self, notebook: Any, sub: Submission, notebook_id: str, instructor: dict[str, Any]
    ) -> Any:
        """nbgrader's own sanitising preprocessors (after dropping duplicated graded cells)."""
        resources = notebook_resources(
            sub.student, sub.assignment, notebook_id, self.coursedir.db_url
        )
        for cls in SANITIZERS:
            made = (
                RepairGradedCells(instructor, config=self.config)
                if cls is RepairGradedCells
                else cls(config=self.config)
            )
            notebook, resources = made(notebook, resources)
        return notebook

    def prepare(self, sub: Submission, notebook_ids: list[str]) -> None:
        """Read and sanitise every notebook of a submission (raises SubmissionError)."""
        check_timestamp(sub.path)
        present = {p.stem: p for p in sub.path.glob("*.ipynb")}
        for extra in sorted(set(present) - set(notebook_ids)):
            sub.notes.append(f"{extra}.ipynb is not part of {sub.assignment} (ignored)")
        for notebook_id in notebook_ids:
            path = present.get(notebook_id)
            if path is None:
                sub.notes.append(f"{notebook_id}.ipynb was not submitted (scores zero)")
                continue
            raw = read_submitted_notebook(path, self.budgets)
            instructor = self.source_cells(sub.assignment, notebook_id)
            sub.notes += tampering_notes(raw, instructor, notebook_id)
            try:
                notebook = self.sanitize(copy.deepcopy(raw), sub, notebook_id, instructor)
            except Exception as error:
                raise SubmissionError(
                    f"{path.name}: nbgrader could not sanitise it: {error}"
                ) from None
            make_inert(notebook, instructor)
            code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
            try:
                self.budgets.check_parses(path.name, [notebook.cells[i].source for i in code])
            except BudgetExceeded as error:
                raise SubmissionError(str(error)) from None
            plan = trusted.instructor_plan(instructor, notebook.cells, self.rng)
            givens = trusted.givens_for(plan.exercise, sub.student, self.site)
            plan.problem = trusted.problem_for(plan.exercise, sub.student, self.site)
            if plan.problem and not self.torch_imported:
                needed = plan.function_checks or plan.class_checks
                missing = not references.is_stored(plan.problem, givens)
                asked = (
                    missing
                    and not needed
                    and self.prefetch is not None
                    and self.prefetch.ask(plan.problem, givens)
                )
                if (needed or missing) and not asked:
                    threading.Thread(target=import_torch, name="torch", daemon=True).start()
                    self.torch_imported = True
            sub.notebooks.append(
                PreparedNotebook(
                    notebook_id, notebook, plan, code, givens, with_torch=uses_torch(instructor)
                )
            )
        if not sub.notebooks:
            found = ", ".join(sorted(p.name for p in present.values())) or "no notebook"
            expected = ", ".join(f"{n}.ipynb" for n in notebook_ids)
            raise SubmissionError(
                f"none of the assignment's notebooks was submitted: expected {expected}, "
                f"found {found} (rename the notebook and run again)"
            )
