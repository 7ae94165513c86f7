"""`autograder grade`: grade a class in parallel, resumably, into nbgrader's own gradebook.

For every submission under `submitted/<student>/<assignment>/`:
1. prepare (grader process): read each notebook defensively, note any tampering, undo
   metadata tampering (`RepairGradedCells`) and sanitise it with nbgrader's own
   preprocessors (ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells,
   CheckCellMetadata);
2. execute (parallel, sandboxed workers, see `sandbox` and `execution`);
3. judge: test cells the grader can verify itself get their outputs from `trusted`;
4. record (grader process, one at a time): nbgrader's Autograde converter runs with its
   sanitising pass handed the notebook of step 1 (`UseSanitized`) and its Execute step
   replaced by `InjectOutputs`, so nbgrader itself writes `autograded/` and the gradebook
   (LimitOutput, SaveAutoGrades, late penalties) exactly as `nbgrader autograde` would.
A submission is marked graded in `.autograder/graded/` only after nbgrader recorded it
(written atomically), so a killed run resumes where it stopped: what was not marked is
executed and recorded again, and recording again overwrites, so nothing counts twice.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import queue
import random
import secrets
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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
    OverwriteCells,
    OverwriteKernelspec,
)

from autograder import diagnoses, references, trusted
from autograder.budgets import BudgetExceeded, Budgets
from autograder.diagnose import Verdict
from autograder.hygiene import use_this_environment
from autograder.inert import make_inert, safe_output
from autograder.sandbox import STATE_DIR as STATE_DIR  # re-exported for older callers
from autograder.sandbox import ExecutionResult, Sandbox, Worker, default_jobs, worker_log_dir
from autograder.sandbox import load_config as load_config  # re-exported for older callers
from autograder.submissions import SubmissionError, check_folder, check_student_id, read_file


@dataclass
class PreparedNotebook:
    """One sanitised notebook, ready to execute."""

    notebook_id: str
    notebook: Any
    plan: trusted.TrustedPlan
    code_cells: list[int]  # indices of the code cells, in order
    givens: dict[str, float] = field(default_factory=dict)  # computed here, for the shim


@dataclass
class Submission:
    """One student's submission of one assignment."""

    student: str
    assignment: str
    path: Path
    fingerprint: str = ""
    notebooks: list[PreparedNotebook] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}"


@dataclass
class Outcome:
    """What happened to one submission in this run."""

    submission: Submission
    status: str  # graded | failed | skipped
    reasons: list[str] = field(default_factory=list)
    score: float | None = None
    max_score: float | None = None
    seconds: float = 0.0


def import_recorder() -> None:
    """Import nbgrader's Autograde converter (in a background thread while the first
    notebooks run)."""
    import nbgrader.converters  # noqa: F401


def import_torch() -> None:
    """Import PyTorch, which the judge needs for reference values not stored yet and for
    code exercises (in a background thread, when `prepare` finds it will be needed)."""
    import torch  # noqa: F401


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON so a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def stat_signature(files: list[Path], source: Path) -> tuple[tuple[str, int, int, int, int], ...]:
    """What changes whenever a submitted or source file changes (size, inode, modification
    and status-change times: the ctime cannot be set back), read without opening them."""
    paths = [*files, *(p for p in source.rglob("*") if p.is_file())]
    signature = []
    for path in paths:
        info = os.lstat(path)
        signature.append((str(path), info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(signature)


def fingerprint(files: list[Path], folder: Path, source: Path) -> str:
    """A hash of every submitted file (checked: `check_folder`) and of the source version."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(read_file(path, None))
    digest.update(b"\1")
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


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
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if not grade_id:
            continue
        seen[grade_id] = seen.get(grade_id, 0) + 1
        original = source_cells.get(grade_id)
        if original is None:
            notes.append(f"{notebook_id}: unknown graded cell id {grade_id!r}")
            continue
        if original["locked"] and cell.get("source", "") != original["source"]:
            notes.append(f"{notebook_id}: edited locked cell {grade_id!r} (restored)")
        for key in FLAG_KEYS:
            if key in original and meta.get(key) != original[key]:
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


_instructor_cells: dict[tuple[str, str, str, str], dict[str, Any]] | None = None


@contextlib.contextmanager
def recording_caches() -> Iterator[None]:
    """Within one grading run, compute once what nbgrader computes again and again.

    - Every nbgrader Gradebook opened meanwhile shares one SQLAlchemy engine: nbgrader opens
      a new Gradebook (a new engine, an empty statement cache) many times per notebook.
    - nbgrader's cell-metadata check calls `jsonschema.validate`, which first validates the
      schema itself against its meta-schema: once per cell. Here the schema is checked once
      and the same validator raises the same best-matching error.
    - The instructor's cells of each notebook are read from the gradebook once per run.
    None of these changes a query's or a check's result, only what is done twice. (And
    nbgrader's harmless SQLAlchemy warnings on a regrade are kept off the output.)
    """
    global _instructor_cells
    import jsonschema
    import nbgrader.api
    import nbgrader.nbgraderformat.common as metadata_format

    create_engine = nbgrader.api.create_engine
    engines: dict[str, Any] = {}
    validators: dict[str, Any] = {}

    def cached_engine(url: Any, *args: Any, **kwargs: Any) -> Any:
        key = str(url)
        if key not in engines:
            engines[key] = create_engine(url, *args, **kwargs)
        return engines[key]

    def validate(instance: Any, schema: dict[str, Any]) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in validators:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validators[key] = cls(schema)
        error = jsonschema.exceptions.best_match(validators[key].iter_errors(instance))
        if error is not None:
            raise error

    class CachedSchemas:
        """`jsonschema` as nbgrader's metadata check sees it, with `validate` cached."""

        def __getattr__(self, name: str) -> Any:
            return validate if name == "validate" else getattr(jsonschema, name)

    nbgrader.api.create_engine = cached_engine
    metadata_format.jsonschema = CachedSchemas()
    _instructor_cells = {}
    try:
        with warnings.catch_warnings():
            # nbgrader's regrade path warns on every notebook that SQLAlchemy will not
            # cascade an object it removed itself: harmless, and it buried the real output.
            warnings.filterwarnings(
                "ignore", message=r"Object of type <Submitted\w+> not in session"
            )
            yield
    finally:
        nbgrader.api.create_engine = create_engine
        metadata_format.jsonschema = jsonschema
        _instructor_cells = None
        for engine in engines.values():
            engine.dispose()


FLAG_KEYS = ("grade", "solution", "locked", "points")
OUTPUT_BUDGET_NOTE = {
    "output_type": "stream",
    "name": "stderr",
    "text": "[output budget reached (c.Budgets.max_outputs): further outputs are not recorded]\n",
}


def source_cells(db_url: str, course_id: str, assignment: str, notebook_id: str) -> dict[str, Any]:
    """grade_id -> the instructor's source and nbgrader flags for that cell (read once per
    grading run, see `recording_caches`; the caller must not change what it gets)."""
    key = (db_url, course_id, assignment, notebook_id)
    if _instructor_cells is not None and key in _instructor_cells:
        return _instructor_cells[key]
    cells: dict[str, Any] = {}
    with Gradebook(db_url, course_id) as gb:
        notebook = gb.find_notebook(notebook_id, assignment)
        for cell in notebook.source_cells:
            cells[cell.name] = {
                "source": cell.source,
                "grade": False,
                "solution": False,
                "locked": bool(cell.locked),
            }
        for cell in notebook.grade_cells:
            cells.setdefault(cell.name, {"source": None, "solution": False, "locked": False})
            cells[cell.name].update(grade=True, points=cell.max_score)
        for cell in notebook.solution_cells:
            cells.setdefault(cell.name, {"source": None, "grade": False, "locked": False})
            cells[cell.name]["solution"] = True
    if _instructor_cells is not None:
        _instructor_cells[key] = cells
    return cells


class RepairGradedCells(NbGraderPreprocessor):  # type: ignore[misc]
    """Undo metadata tampering before nbgrader sees it (the changes are reported).

    Later copies of a graded cell are dropped (nbgrader's DeduplicateIds would strip their
    metadata and then fail the whole submission), and each known cell gets back the
    grade/solution/locked/points flags of the instructor's source, so a learner cannot
    turn a test off or give it 1000 points, and nbgrader's checksum check still passes.
    """

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        info = resources["nbgrader"]
        flags = source_cells(
            info["db_url"],
            self.coursedir_course_id(),
            info["assignment"],
            info["notebook"],
        )
        seen: set[str] = set()
        kept = []
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            grade_id = meta.get("grade_id")
            if grade_id and grade_id in seen:
                continue
            if grade_id:
                seen.add(grade_id)
            if grade_id in flags:
                meta.update({k: v for k, v in flags[grade_id].items() if k in FLAG_KEYS})
                if not flags[grade_id].get("grade"):
                    meta.pop("points", None)
            kept.append(cell)
        nb.cells = kept
        return nb, resources

    def coursedir_course_id(self) -> str:
        return str(self.config.CourseDirectory.get("course_id", "default_course"))


SANITIZERS = [
    RepairGradedCells,
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]


class UseSanitized(NbGraderPreprocessor):  # type: ignore[misc]
    """nbgrader's sanitising pass, already done: hand over the notebook `prepare` sanitised
    with the very same preprocessors (`SANITIZERS`), instead of repeating their queries.
    (Handed over, not copied: judging is done by then, and the entry is dropped after.)"""

    sanitized: dict[tuple[str, str, str], Any] = {}

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        info = resources["nbgrader"]
        key = (info["student"], info["assignment"], info["notebook"])
        if key not in self.sanitized:
            raise SubmissionError(f"no sanitised notebook recorded for {'/'.join(key)}")
        return self.sanitized[key], resources


class InjectOutputs(NbGraderPreprocessor):  # type: ignore[misc]
    """nbgrader's Execute step, replaced: put in the outputs the sandbox produced."""

    executed: dict[tuple[str, str, str], dict[str, Any]] = {}

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[Any, Any]:
        info = resources["nbgrader"]
        key = (info["student"], info["assignment"], info["notebook"])
        record = self.executed.get(key)
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


class Grader:
    """Grades the submissions of a course directory; see the module docstring."""

    def __init__(
        self,
        course_dir: Path,
        *,
        assignments: list[str] | None = None,
        students: list[str] | None = None,
        jobs: int | None = None,
        sandbox: bool = True,
        force: bool = False,
        seed: int | None = None,
        log: logging.Logger | None = None,
        workers: list[Worker] | None = None,
        persistent: bool = False,
    ) -> None:
        """`workers`: already spawned (`Worker.start_soon`) with this course's sandbox.
        `persistent`: workers and their threads outlive each `run` (a grading service);
        `close` stops them."""
        use_this_environment()
        self.course_dir = course_dir.resolve()
        self.config = load_config(self.course_dir)
        self.coursedir = CourseDirectory(config=self.config)
        self.sandbox = Sandbox(config=self.config)
        self.budgets = Budgets(config=self.config)
        if not sandbox:
            self.sandbox.enabled = False
        self.assignments = assignments
        self.students = students
        self.jobs = max(1, jobs or default_jobs())
        self.force = force
        self.rng = random.Random(seed if seed is not None else secrets.randbits(64))
        self.state = self.course_dir / STATE_DIR
        self.log = log or logging.getLogger("autograder")
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._workers: list[Worker] = []
        self._discovered: tuple[list[Submission], list[Outcome]] | None = None
        self._workers_lock = threading.Lock()
        for worker in workers or []:
            self._workers.append(worker)
            self._idle.put(worker)
        self.stop_requested = threading.Event()  # set on Ctrl-C: finish the current record
        self.persistent = persistent
        self._attempted: dict[str, str] = {}  # persistent: submission -> fingerprint tried
        self._fingerprints: dict[str, tuple[Any, str]] = {}  # persistent: (stat, fingerprint)
        self._pool: ThreadPoolExecutor | None = None
        self._torch_imported = "torch" in sys.modules  # or being imported

    # -------------------------------------------------------------- discovery

    def known_assignments(self) -> dict[str, list[str]]:
        """Assignments in the gradebook, with their notebooks."""
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            return {a.name: [n.name for n in a.notebooks] for a in gb.assignments}

    def discover(self) -> tuple[list[Submission], list[Outcome]]:
        """Submissions to grade now, and the ones skipped as already graded."""
        submitted = Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", "."))
        known = self.known_assignments()
        wanted = self.assignments or sorted(known)
        unknown = [a for a in wanted if a not in known]
        if unknown:
            raise SubmissionError(
                f"not in the gradebook: {', '.join(unknown)}. Run `make assign` first (it "
                "records every assignment from solutions/ without touching exercises/). "
                f"Known: {', '.join(sorted(known)) or 'none'}"
            )
        todo: list[Submission] = []
        skipped: list[Outcome] = []
        present = sorted(p.name for p in submitted.iterdir()) if submitted.is_dir() else []
        absent = [s for s in self.students or [] if s not in present]
        if absent:
            raise SubmissionError(
                f"no submission from {', '.join(map(repr, absent))} in {submitted}"
                + (f" (students there: {', '.join(present[:20])})" if present else " (empty)")
            )
        if not submitted.is_dir():
            return todo, skipped
        for student_dir in sorted(submitted.iterdir()):
            if self.students and student_dir.name not in self.students:
                continue
            for assignment in wanted:
                folder = student_dir / assignment
                sub = Submission(student_dir.name, assignment, folder)
                try:
                    check_student_id(student_dir)
                    files = check_folder(folder, self.budgets)
                except SubmissionError as error:
                    skipped.append(Outcome(sub, "failed", [str(error)]))
                    continue
                if files is None:
                    continue
                source = Path(
                    self.coursedir.format_path(self.coursedir.source_directory, ".", assignment)
                )
                try:
                    sub.fingerprint = self.fingerprint(sub, files, source)
                except (SubmissionError, OSError) as error:
                    skipped.append(Outcome(sub, "failed", [str(error)]))
                    continue
                if self.persistent and self._attempted.get(sub.key) == sub.fingerprint:
                    continue  # tried in this service already: only a new version is tried
                if not self.force and self.already_graded(sub):
                    skipped.append(Outcome(sub, "skipped"))
                else:
                    todo.append(sub)
        return todo, skipped

    def fingerprint(self, sub: Submission, files: list[Path], source: Path) -> str:
        """The submission's fingerprint; a service hashes a folder again only when a file's
        status changed since its last look (looking every fraction of a second)."""
        if not self.persistent:
            return fingerprint(files, sub.path, source)
        signature = stat_signature(files, source)
        known = self._fingerprints.get(sub.key)
        if known is None or known[0] != signature:
            known = (signature, fingerprint(files, sub.path, source))
            self._fingerprints[sub.key] = known
        return known[1]

    def graded_marker(self, sub: Submission) -> Path:
        return self.state / "graded" / sub.assignment / f"{sub.student}.json"

    def already_graded(self, sub: Submission) -> bool:
        marker = self.graded_marker(sub)
        autograded = Path(
            self.coursedir.format_path(
                self.coursedir.autograded_directory, sub.student, sub.assignment
            )
        )
        try:
            record = json.loads(marker.read_text())
        except (OSError, ValueError):
            return False
        return bool(
            record.get("status") == "graded"
            and record.get("fingerprint") == sub.fingerprint
            and autograded.is_dir()
        )

    # -------------------------------------------------------------- stages

    def source_cells(self, assignment: str, notebook_id: str) -> dict[str, Any]:
        """The instructor's version of each graded or locked cell."""
        db_url, course_id = self.coursedir.db_url, self.coursedir.course_id
        return source_cells(db_url, course_id, assignment, notebook_id)

    def sanitize(self, notebook: Any, sub: Submission, notebook_id: str) -> Any:
        """nbgrader's own sanitising preprocessors (after dropping duplicated graded cells)."""
        resources = ResourcesDict(
            nbgrader={
                "student": sub.student,
                "assignment": sub.assignment,
                "notebook": notebook_id,
                "db_url": self.coursedir.db_url,
            }
        )
        for cls in SANITIZERS:
            notebook, resources = cls(config=self.config)(notebook, resources)
        return notebook

    def prepare(self, sub: Submission, notebook_ids: list[str]) -> None:
        """Read and sanitise every notebook of a submission (raises SubmissionError)."""
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
                notebook = self.sanitize(copy.deepcopy(raw), sub, notebook_id)
            except Exception as error:
                raise SubmissionError(
                    f"{path.name}: nbgrader could not sanitise it: {error}"
                ) from None
            make_inert(notebook, set(instructor))
            code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
            try:
                self.budgets.check_parses(path.name, [notebook.cells[i].source for i in code])
            except BudgetExceeded as error:
                raise SubmissionError(str(error)) from None
            plan = trusted.instructor_plan(instructor, notebook.cells, self.rng)
            givens = trusted.givens_for(plan.exercise, sub.student)
            if plan.exercise and not self._torch_imported:
                needed = plan.function_checks or plan.class_checks
                if needed or not references.is_stored(plan.exercise, givens):
                    threading.Thread(target=import_torch, name="torch", daemon=True).start()
                    self._torch_imported = True
            sub.notebooks.append(PreparedNotebook(notebook_id, notebook, plan, code, givens))
        if not sub.notebooks:
            found = ", ".join(sorted(p.name for p in present.values())) or "no notebook"
            expected = ", ".join(f"{n}.ipynb" for n in notebook_ids)
            raise SubmissionError(
                f"none of the assignment's notebooks was submitted: expected {expected}, "
                f"found {found} (rename the notebook and run again)"
            )

    def warm_up(self, count: int = 1) -> None:
        """Start workers in the background until `count` (at most `jobs`) exist, so their
        start-up overlaps discovery and preparation."""
        with self._workers_lock:
            missing = min(count, self.jobs) - len(self._workers)
            for _ in range(max(0, missing)):
                worker = Worker(self.sandbox, worker_log_dir(self.course_dir))
                worker.start_soon()
                self._workers.append(worker)
                self._idle.put(worker)

    def take_worker(self) -> Worker:
        """An idle worker (a new one if none is idle; at most `jobs` pool threads ask)."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            worker = Worker(self.sandbox, worker_log_dir(self.course_dir))
            with self._workers_lock:
                self._workers.append(worker)
            return worker

    def execute(self, worker: Worker, prepared: PreparedNotebook, student: str) -> ExecutionResult:
        """Run one notebook in a sandboxed worker."""
        sources = [prepared.notebook.cells[i].source for i in prepared.code_cells]
        calls = trusted.function_calls(prepared.plan)
        return worker.execute(sources, calls, prepared.givens, student)

    def execute_all(self, sub: Submission) -> list[ExecutionResult]:
        """Run every notebook of a submission (in a pool thread, on one worker)."""
        worker = self.take_worker()
        try:
            return [self.execute(worker, prepared, sub.student) for prepared in sub.notebooks]
        finally:
            self._idle.put(worker)

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
                count = frame.get("execution_count")
                count = count if type(count) is int else None
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
        from nbgrader.preprocessors import (
            AssignLatePenalties,
            IgnorePattern,
            LimitOutput,
            SaveAutoGrades,
        )

        config = copy.deepcopy(self.config)
        config.CourseDirectory.assignment_id = sub.assignment
        config.CourseDirectory.student_id = sub.student
        config.Autograde.sanitize_preprocessors = [UseSanitized]
        config.Autograde.autograde_preprocessors = [
            InjectOutputs,
            IgnorePattern,
            ClearMetadataPreprocessor,
            LimitOutput,
            SaveAutoGrades,
            AssignLatePenalties,
            CheckCellMetadata,
        ]
        coursedir = CourseDirectory(config=config)
        converter = Autograde(coursedir=coursedir, config=config)
        converter.force = True
        converter.log.setLevel(logging.WARNING)
        converter.start()
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            submission = gb.find_submission(sub.assignment, sub.student)
            return float(submission.score), float(submission.max_score)

    def grade_one(self, sub: Submission, future: Future[list[ExecutionResult]]) -> Outcome:
        """Judge and record one executed submission (grader thread)."""
        started = time.monotonic()
        results = future.result()
        unexecuted = [
            f"{prepared.notebook_id} could not be executed ({result.status}: {result.detail}); "
            "nothing was recorded, run again to retry"
            for prepared, result in zip(sub.notebooks, results, strict=True)
            if not result.executed
        ]
        if unexecuted:
            return self.fail(sub, unexecuted)
        checks: dict[str, list[dict[str, Any]]] = {}
        for prepared, result in zip(sub.notebooks, results, strict=True):
            verdicts = trusted.verdicts(
                prepared.plan, prepared.notebook.cells, result.calls, sub.student
            )
            checks[prepared.notebook_id] = diagnoses.notebook_checks(
                prepared.plan, prepared.notebook.cells, verdicts, sub.student
            )
            cells = self.judged_cells(prepared, result, verdicts)
            sources = [prepared.notebook.cells[i].source for i in prepared.code_cells]
            record = {
                "sources": hashlib.sha256(json.dumps(sources).encode()).hexdigest(),
                "cells": cells,
                "status": result.status,
                "detail": result.detail,
            }
            key = (sub.student, sub.assignment, prepared.notebook_id)
            InjectOutputs.executed[key] = record
            UseSanitized.sanitized[key] = prepared.notebook
            if result.status != "ok":
                sub.notes.append(f"{prepared.notebook_id}: {result.status}: {result.detail}")
        try:
            score, max_score = self.record(sub)
        finally:
            for prepared in sub.notebooks:
                key = (sub.student, sub.assignment, prepared.notebook_id)
                InjectOutputs.executed.pop(key)
                UseSanitized.sanitized.pop(key)
        diagnoses.write_diagnoses(self.state, sub.assignment, sub.student, sub.fingerprint, checks)
        atomic_write_json(
            self.graded_marker(sub),
            {
                "status": "graded",
                "fingerprint": sub.fingerprint,
                "score": score,
                "max_score": max_score,
                "notes": sub.notes,
            },
        )
        return Outcome(sub, "graded", sub.notes, score, max_score, time.monotonic() - started)

    def run(self, progress: Any = None) -> Iterator[Outcome]:
        """Grade everything; yields one Outcome per submission as it completes."""
        with recording_caches(), references.stored_in(self.state / "references"):
            yield from self._run()

    def _run(self) -> Iterator[Outcome]:
        todo, skipped = self._discovered or self.discover()
        self._discovered = None
        yield from skipped
        if not todo:
            if not self.persistent:
                self.close()  # a worker warmed up before discovery is not needed
            return
        self.warm_up(min(len(todo), self.jobs))
        threading.Thread(target=import_recorder, name="imports", daemon=True).start()
        notebooks = self.known_assignments()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="grade")
        pool = self._pool
        pending: deque[tuple[Submission, Future[list[ExecutionResult]]]] = deque()
        try:
            # Prepare and hand out one submission at a time, recording finished ones in
            # order meanwhile, so the workers start at once and never wait for the grader.
            for sub in todo:
                if self.stop_requested.is_set():
                    break
                self._attempted[sub.key] = sub.fingerprint
                try:
                    self.prepare(sub, notebooks[sub.assignment])
                except Exception as error:  # a broken submission fails alone
                    yield self.fail(sub, [str(error) or type(error).__name__])
                    continue
                pending.append((sub, pool.submit(self.execute_all, sub)))
                while pending and (pending[0][1].done() or len(pending) > 4 * self.jobs):
                    if self.stop_requested.is_set():
                        break
                    yield self.record_outcome(*pending.popleft())
            while pending and not self.stop_requested.is_set():
                yield self.record_outcome(*pending.popleft())
        finally:
            if self.stop_requested.is_set():
                self.close(now=True)  # running notebooks end now; nothing unrecorded is marked
            if not self.persistent or self.stop_requested.is_set():
                self.close()

    def record_outcome(self, sub: Submission, future: Future[list[ExecutionResult]]) -> Outcome:
        """Judge and record one submission; any failure is that submission's alone."""
        try:
            return self.grade_one(sub, future)
        except Exception as error:  # one bad submission never stops the batch
            return self.fail(sub, [f"{type(error).__name__}: {error}"])

    def fail(self, sub: Submission, reasons: list[str]) -> Outcome:
        atomic_write_json(
            self.graded_marker(sub),
            {"status": "failed", "fingerprint": sub.fingerprint, "reasons": reasons},
        )
        return Outcome(sub, "failed", reasons + sub.notes)

    def close(self, now: bool = False) -> None:
        """Stop every worker (idle by now, or `now`: Ctrl-C, running notebooks end)."""
        if self._pool is not None:
            if now:
                with self._workers_lock:
                    for worker in self._workers:
                        worker.stop(now=True)  # running notebooks end now
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        with self._workers_lock:
            for worker in self._workers:
                worker.stop(now=True)  # idle fork servers: nothing to finish
            self._workers.clear()
            self._idle = queue.SimpleQueue()

    def total(self) -> int:
        """How many submissions `run` will yield (for the progress bar); the next `run`
        reuses this discovery instead of hashing every submission again."""
        self._discovered = self.discover()
        todo, skipped = self._discovered
        return len(todo) + len(skipped)
