"""Recording through nbgrader: its Autograde converter writes autograded/ and the gradebook.

nbgrader's sanitising pass is handed the notebook `preparation` sanitised (`UseSanitized`)
and its Execute step is replaced by `InjectOutputs`, so nbgrader itself records the grades
(LimitOutput, SaveAutoGrades, late penalties) exactly as `nbgrader autograde` would. What
they hand over travels in one explicit object, the grader's `RecordingRun`, given to each
preprocessor when it is made: no state lives on a class or a module.
`recording_caches` keeps nbgrader from computing the same things again and again; every
change it makes to nbgrader's own modules is in `autograder.grading.nbgrader_internals`.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import shutil
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    NbGraderPreprocessor,
    OverwriteKernelspec,
)
from traitlets.config import Config

from autograder.core.verdict import Verdict
from autograder.grading import trusted
from autograder.grading.budgets import Budgets
from autograder.grading.checked_cells import OverwriteCellsAtOnce
from autograder.grading.inert import safe_count, safe_output
from autograder.grading.manual_review import ManualReview
from autograder.grading.nbgrader_internals import GradebookWork
from autograder.grading.submissions import SubmissionError
from autograder.grading.work import PreparedNotebook, Submission
from autograder.sandbox.settings import STATE_DIR
from autograder.sandbox.workers import ExecutionResult


def use_this_environment() -> None:
    """Put this interpreter's bin/ first on PATH: nbgrader runs `alembic` by name."""
    bin_dir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def import_recorder() -> None:
    """Import nbgrader's Autograde converter (in a background thread while the first
    notebooks run)."""
    import nbgrader.converters  # noqa: F401


Key = tuple[str, str, str]
"""A notebook of a hand-in: (student, assignment, notebook id)."""


@dataclass
class RecordingRun:
    """What the grader hands nbgrader's preprocessors, explicitly (each is made with it):
    the notebooks `preparation` sanitised, the outputs the sandbox produced, judged, and
    (within `recording_caches`) the instructor's cells read once per grading run."""

    sanitized: dict[Key, Any] = field(default_factory=dict)
    executed: dict[Key, dict[str, Any]] = field(default_factory=dict)
    instructor_cells: dict[tuple[str, str, str, str], dict[str, Any]] | None = None

    def hand_over(self, key: Key, notebook: Any, record: dict[str, Any]) -> None:
        """Give nbgrader the sanitised `notebook` and its judged outputs `record`."""
        self.sanitized[key] = notebook
        self.executed[key] = record

    def take_back(self, key: Key) -> None:
        """Forget what `hand_over` gave for `key` (recorded, or failed)."""
        self.sanitized.pop(key, None)
        self.executed.pop(key, None)

    def source_cells(
        self, db_url: str, course_id: str, assignment: str, notebook_id: str
    ) -> dict[str, Any]:
        """grade_id -> the instructor's source and nbgrader flags for that cell (read once
        per grading run; the caller must not change what it gets)."""
        key = (db_url, course_id, assignment, notebook_id)
        if self.instructor_cells is not None and key in self.instructor_cells:
            return self.instructor_cells[key]
        cells = read_source_cells(db_url, course_id, assignment, notebook_id)
        if self.instructor_cells is not None:
            self.instructor_cells[key] = cells
        return cells


@contextlib.contextmanager
def recording_caches(
    run: RecordingRun, kept: GradebookWork | None = None
) -> Iterator[RecordingRun]:
    """Within one grading run, compute once what nbgrader computes again and again
    (`nbgrader_internals.shared_gradebook_work`), and read the instructor's cells once
    (`run`). None of these changes a query's or a check's result, only what is done twice.
    `kept`: the gradebook work a lasting grader keeps from one run to the next.
    (And nbgrader's harmless SQLAlchemy warnings on a regrade are kept off the output.)"""
    from autograder.grading.nbgrader_internals import shared_gradebook_work

    run.instructor_cells = {}
    try:
        with shared_gradebook_work(kept), warnings.catch_warnings():
            # nbgrader's regrade path warns on every notebook that SQLAlchemy will not
            # cascade an object it removed itself: harmless, and it buried the real output.
            warnings.filterwarnings(
                "ignore", message=r"Object of type <Submitted\w+> not in session"
            )
            yield run
    finally:
        run.instructor_cells = None


FLAG_KEYS = ("grade", "solution", "locked", "task", "points")
OUTPUT_BUDGET_NOTE = {
    "output_type": "stream",
    "name": "stderr",
    "text": "[output budget reached (c.Budgets.max_outputs): further outputs are not recorded]\n",
}


def read_source_cells(
    db_url: str, course_id: str, assignment: str, notebook_id: str
) -> dict[str, Any]:
    """grade_id -> the instructor's source and nbgrader flags for that cell, from the
    gradebook (`RecordingRun.source_cells` reads each notebook's once per run). Read as
    plain columns, one query per kind of cell, in the order nbgrader's own relationships
    give them (the same statements, without building an object per cell)."""
    from nbgrader.api import GradeCell, SolutionCell, SourceCell, TaskCell

    cells: dict[str, Any] = {}
    with Gradebook(db_url, course_id) as gb:
        notebook = gb.find_notebook(notebook_id, assignment).id
        plain = {"source": None, "grade": False, "solution": False, "locked": False, "task": False}
        sources = gb.db.query(
            SourceCell.name, SourceCell.source, SourceCell.locked, SourceCell.cell_type
        ).filter(SourceCell.notebook_id == notebook)
        for name, source, locked, cell_type in sources:
            cells[name] = {
                **plain,
                "source": source,
                "locked": bool(locked),
                "cell_type": cell_type,
            }
        for kind, flag in ((GradeCell, "grade"), (TaskCell, "task")):
            rows = gb.db.query(kind.name, kind.max_score).filter(kind.notebook_id == notebook)
            for name, max_score in rows:
                cells.setdefault(name, dict(plain)).update({flag: True, "points": max_score})
        solutions = gb.db.query(SolutionCell.name).filter(SolutionCell.notebook_id == notebook)
        for (name,) in solutions:
            cells.setdefault(name, dict(plain))["solution"] = True
    return cells


def uses_torch(instructor_cells: dict[str, Any]) -> bool:
    """Whether the instructor's locked code (the setup every learner runs) names torch:
    the worker's template then imports torch once for all of the assignment's notebooks.
    Said from the gradebook alone, never from a learner's notebook (what a template holds
    must not tell one learner anything of another)."""
    return any(
        cell["locked"] and cell.get("cell_type") == "code" and "torch" in (cell["source"] or "")
        for cell in instructor_cells.values()
    )


def reviewed_dir(config: Config) -> Path:
    """Where the course keeps what its manual grades were given to (the course config's
    ManualGrades.reviewed_dir, else `.autograder/reviewed`)."""
    named = str(config.ManualGrades.get("reviewed_dir", ""))
    return Path(named or Path(str(config.CourseDirectory.root)) / STATE_DIR / "reviewed")


def set_aside(target: Path) -> Path | None:
    """Move the previous autograded copy of a submission beside it (hidden) before nbgrader
    records a new one, which starts by deleting it: a recording that fails puts it back
    (`put_back`). A first recording sets aside an empty folder (there was no copy), so a
    copy half-written by a run killed while recording is never taken for a previous one:
    the folder set aside by the killed run is the one kept. None where no folder can be
    made there: nbgrader, which cannot write there either, then says why."""
    aside = target.with_name(f".{target.name}.previous")
    if aside.is_dir():
        if target.exists():
            shutil.rmtree(target)  # what the killed run had begun to write
        return aside
    if target.is_dir():
        os.replace(target, aside)
        return aside
    try:
        aside.mkdir(parents=True)
    except OSError:
        return None
    return aside


def put_back(target: Path, previous: Path | None) -> None:
    """Undo a failed recording's autograded copy: the previous one, or none, as before."""
    if target.exists():
        shutil.rmtree(target)
    if previous is None:
        return
    if any(previous.iterdir()):
        os.replace(previous, target)
    else:
        previous.rmdir()


MAX_ERROR_LINES = 5


class ErrorLines(logging.Handler):
    """The last line of each error nbgrader logs (a traceback's is the exception), kept
    to say why a recording failed; at most MAX_ERROR_LINES of them."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip().splitlines()
        line = text[-1][:300] if text else ""
        pointers = ("above traceback", "see the error log")
        if any(p in line for p in pointers) or line.startswith("There was an error processing"):
            return  # nbgrader's pointers to the lines kept here
        if line and line not in self.lines and len(self.lines) < MAX_ERROR_LINES:
            self.lines.append(line)


class RepairGradedCells(NbGraderPreprocessor):  # type: ignore[misc]
    """Undo metadata tampering before nbgrader sees it (the changes are reported).

    Later copies of a graded cell are dropped (nbgrader's DeduplicateIds would strip their
    metadata and then fail the whole submission), and each known cell gets back the
    grade/solution/locked/points flags of the instructor's source, so a learner cannot
    turn a test off or give it 1000 points, and nbgrader's checksum check still passes.
    Made with the notebook's instructor cells (`RecordingRun.source_cells`).
    """

    def __init__(self, instructor_cells: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.instructor_cells = instructor_cells

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        flags = self.instructor_cells
        seen: set[str] = set()
        kept = []
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str):
                grade_id = None  # a list, a number: no id the assignment has
            if grade_id and grade_id in seen:
                continue
            if grade_id:
                seen.add(grade_id)
            if grade_id in flags:
                meta.update({k: v for k, v in flags[grade_id].items() if k in FLAG_KEYS})
                if not (flags[grade_id]["grade"] or flags[grade_id]["task"]):
                    meta.pop("points", None)
            elif "nbgrader" in cell.metadata:
                # Not a cell of the assignment (a new "task" or graded cell, or one without
                # an id): an ordinary learner cell. nbgrader would otherwise record it, or
                # fail halfway through recording with the grades before it already saved.
                del cell.metadata["nbgrader"]
            kept.append(cell)
        nb.cells = kept
        return nb, resources


SANITIZERS = [
    RepairGradedCells,
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCellsAtOnce,
    CheckCellMetadata,
]


def notebook_resources(student: str, assignment: str, notebook: str, db_url: str) -> Any:
    """What nbgrader's preprocessors read of the hand-in whose notebook they convert (the
    resources its converters start from; `notebook_key` reads it back)."""
    info = {"student": student, "assignment": assignment, "notebook": notebook, "db_url": db_url}
    return ResourcesDict(nbgrader=info)


def notebook_key(resources: ResourcesDict) -> Key:
    """Which hand-in's notebook nbgrader is converting."""
    info = resources["nbgrader"]
    return (info["student"], info["assignment"], info["notebook"])


class UseSanitized(NbGraderPreprocessor):  # type: ignore[misc]
    """nbgrader's sanitising pass, already done: hand over the notebook `prepare` sanitised
    with the very same preprocessors (`SANITIZERS`), instead of repeating their queries.
    (Handed over, not copied: judging is done by then, and the entry is dropped after.)"""

    def __init__(self, run: RecordingRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        key = notebook_key(resources)
        if key not in self.run.sanitized:
            raise SubmissionError(f"no sanitised notebook recorded for {'/'.join(key)}")
        return self.run.sanitized[key], resources


class InjectOutputs(NbGraderPreprocessor):  # type: ignore[misc]
    """nbgrader's Execute step, replaced: put in the outputs the sandbox produced."""

    def __init__(self, run: RecordingRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        key = notebook_key(resources)
        record = self.run.executed.get(key)
        if record is None:
            raise SubmissionError(f"no execution recorded for {'/'.join(key)}")
        sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
        if hashlib.sha256(json.dumps(sources).encode()).hexdigest() != record["sources"]:
            raise SubmissionError("the notebook changed between execution and recording")
        code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
        for cell, executed in zip(code_cells, record["cells"], strict=True):
            cell.outputs = [nbformat.from_dict(output) for output in executed["outputs"]]
            cell.execution_count = executed["execution_count"]
        return nb, resources


class Recorder:
    """Judged outputs in place of the test cells' outputs, then nbgrader records."""

    def __init__(
        self, config: Config, coursedir: CourseDirectory, budgets: Budgets, run: RecordingRun
    ) -> None:
        self.config = config
        self.coursedir = coursedir
        self.budgets = budgets
        self.run = run

    def judged_cells(
        self,
        prepared: PreparedNotebook,
        result: ExecutionResult,
        verdicts: dict[int, list[Verdict]],
    ) -> list[Any]:
        """Outputs per code cell: executed outputs, failures made explicit, and `verdicts`
        (the trusted ones, by cell index) in place of the test cells' outputs."""
        cells = []
        stopped = False
        budget_used, budget_over = 0, False
        for position, index in enumerate(prepared.code_cells):
            frame = result.cells.get(position)
            if frame is not None and not stopped:
                outputs = [o for o in map(safe_output, frame.get("outputs", [])) if o]
                room = max(0, self.budgets.max_outputs - budget_used)
                if len(outputs) > room:
                    outputs = outputs[:room] + ([] if budget_over else [OUTPUT_BUDGET_NOTE])
                    budget_over = True
                budget_used += len(outputs)
                count = safe_count(frame.get("execution_count"))
            else:
                stopped = True
                reason = result.detail or "the notebook stopped before this cell"
                outputs = [
                    {
                        "output_type": "error",
                        "ename": "NotExecuted",
                        "evalue": f"this cell did not run: {reason}",
                        "traceback": [f"NotExecuted: this cell did not run: {reason}"],
                    }
                ]
                count = None
            cells.append({"index": index, "outputs": outputs, "execution_count": count})
        for entry in cells:
            if entry["index"] in verdicts:
                entry["outputs"] = trusted.verdict_outputs(verdicts[entry["index"]])
        return cells

    def record(self, sub: Submission) -> tuple[float, float]:
        """Let nbgrader's Autograde converter write autograded/ and the gradebook."""
        from nbconvert.preprocessors import ClearMetadataPreprocessor
        from nbgrader.converters import Autograde
        from nbgrader.preprocessors import AssignLatePenalties, IgnorePattern, LimitOutput

        from autograder.grading.saved_grades import SaveAutoGradesAtOnce

        config = copy.deepcopy(self.config)
        config.CourseDirectory.assignment_id = sub.assignment
        config.CourseDirectory.student_id = sub.student
        # nbconvert validates the notebook after each preprocessor; once, after the last,
        # still refuses an invalid one before anything is written (nbconvert's option)
        config.Exporter.optimistic_validation = True
        coursedir = CourseDirectory(config=config)
        converter = Autograde(coursedir=coursedir, config=config)
        target = Path(
            coursedir.format_path(coursedir.autograded_directory, sub.student, sub.assignment)
        )
        previous = set_aside(target)
        # made here with the run they read (nbgrader registers an instance as it is)
        converter.sanitize_preprocessors = [UseSanitized(self.run, parent=converter)]
        converter.autograde_preprocessors = [
            InjectOutputs(self.run, parent=converter),
            IgnorePattern,
            ClearMetadataPreprocessor,
            LimitOutput,
            SaveAutoGradesAtOnce,
            ManualReview(previous, reviewed_dir(config), parent=converter),
            AssignLatePenalties,
            CheckCellMetadata,
        ]
        converter.force = True
        converter.log.setLevel(logging.WARNING)
        said = ErrorLines()
        converter.log.addHandler(said)
        try:
            converter.start()
        except Exception as error:  # nbgrader logged why, and raises "see the above traceback"
            put_back(target, previous)
            raise SubmissionError(
                f"nbgrader could not record it: {'; '.join(said.lines) or error}"
            ) from None
        finally:
            converter.log.removeHandler(said)
        if previous is not None:
            shutil.rmtree(previous)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            submission = gb.find_submission(sub.assignment, sub.student)
            return float(submission.score), float(submission.max_score)
