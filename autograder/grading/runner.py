"""`autograder grade`: grade a class in parallel, resumably, into nbgrader's own gradebook.

For every submission under `submitted/<student>/<assignment>/`:
1. prepare (grader process): read each notebook defensively, note any tampering, undo
   metadata tampering (`RepairGradedCells`) and sanitise it with nbgrader's own
   preprocessors (ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, its
   lookups answered from the notebook's cells read at once: `checked_cells`,
   CheckCellMetadata);
2. execute (parallel, sandboxed workers, see `autograder.sandbox`);
3. judge: test cells the grader can verify itself get their outputs from `trusted`;
4. record (grader process, one at a time): nbgrader's Autograde converter runs with its
   sanitising pass handed the notebook of step 1 (`UseSanitized`) and its Execute step
   replaced by `InjectOutputs`, so nbgrader itself writes `autograded/` and the gradebook
   (LimitOutput, SaveAutoGrades, late penalties) exactly as `nbgrader autograde` would.
A submission is marked graded in `.autograder/graded/` only after nbgrader recorded it
(written atomically), so a killed run resumes where it stopped: what was not marked is
executed and recorded again, and recording again overwrites, so nothing counts twice.

The stages live beside this module: `discovery` (what to grade), `preparation` (step 1),
`recording` (step 4), `state` (the graded markers); `Grader` runs them and the workers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import queue
import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbgrader.coursedir import CourseDirectory

from autograder.diagnosis import references
from autograder.grading import diagnoses, trusted
from autograder.grading.budgets import Budgets
from autograder.grading.discovery import Discovery
from autograder.grading.nbgrader_internals import GradebookWork
from autograder.grading.preparation import Preparation
from autograder.grading.recording import (
    Recorder,
    RecordingRun,
    import_recorder,
    recording_caches,
    use_this_environment,
)
from autograder.grading.state import STATE_DIR, GradedMarkers
from autograder.grading.submissions import SubmissionError
from autograder.grading.work import Outcome, PreparedNotebook, Submission
from autograder.sandbox.workers import (
    ExecutionResult,
    Sandbox,
    Worker,
    default_jobs,
    load_config,
    worker_log_dir,
)

if TYPE_CHECKING:
    from autograder.diagnosis.prefetch import Prefetch

__all__ = ["STATE_DIR", "Grader", "Outcome", "Submission", "load_config"]


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
        prefetch: Prefetch | None = None,
    ) -> None:
        """`workers`: already spawned (`Worker.start_soon`) with this course's sandbox.
        `prefetch`: started for this course's reference store (`diagnosis.prefetch`).
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
        self.jobs = max(1, jobs or default_jobs())
        self.state = self.course_dir / STATE_DIR
        self.log = log or logging.getLogger("autograder")
        self.persistent = persistent
        self.markers = GradedMarkers(self.state, self.coursedir)
        self.discovery = Discovery(
            self.coursedir,
            self.budgets,
            self.markers,
            assignments=assignments,
            students=students,
            force=force,
            persistent=persistent,
        )
        rng = random.Random(seed if seed is not None else secrets.randbits(64))
        self.recording = RecordingRun()  # what nbgrader's preprocessors are handed
        self.prefetch = prefetch
        self.preparation = Preparation(
            self.config, self.coursedir, self.budgets, rng, self.recording, prefetch
        )
        self.recorder = Recorder(self.config, self.coursedir, self.budgets, self.recording)
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._workers: list[Worker] = []
        self._discovered: tuple[list[Submission], list[Outcome]] | None = None
        self._workers_lock = threading.Lock()
        for worker in workers or []:
            self._workers.append(worker)
            self._idle.put(worker)
        self.stop_requested = threading.Event()  # set on Ctrl-C: finish the current record
        self._pool: ThreadPoolExecutor | None = None
        self._waiting = 0  # submissions handed to the pool that no worker has taken yet
        self._all_handed_out = False  # this run hands out nothing more
        self._stopping: list[threading.Thread] = []  # workers stopping once their work is done
        # A persistent grader's gradebook engines, tables and compiled statements last
        # from one run to the next (its runs are small in a rush), until `close`.
        self.gradebook_work = GradebookWork() if persistent else None

    # -------------------------------------------------------------- stages

    def known_assignments(self) -> dict[str, list[str]]:
        """Assignments in the gradebook, with their notebooks."""
        return self.discovery.known_assignments()

    def wanted(self) -> list[str]:
        """The assignments to grade; SubmissionError naming any not in the gradebook."""
        return self.discovery.wanted()

    def discover(self, only: set[str] | None = None) -> tuple[list[Submission], list[Outcome]]:
        """Submissions to grade now, and the ones skipped as already graded (`only`: look
        at these student/assignment folders alone)."""
        return self.discovery.discover(only)

    def prepare(self, sub: Submission, notebook_ids: list[str]) -> None:
        """Read and sanitise every notebook of a submission (raises SubmissionError)."""
        self.preparation.prepare(sub, notebook_ids)

    # -------------------------------------------------------------- workers

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
        problem = trusted.given_problem(prepared.plan)
        return worker.execute(
            sources, calls, prepared.givens, student, problem, with_torch=prepared.with_torch
        )

    def execute_all(self, sub: Submission) -> list[ExecutionResult]:
        """Run every notebook of a submission (in a pool thread, on one worker)."""
        worker = self.take_worker()
        with self._workers_lock:
            self._waiting -= 1  # taken: no idle worker is stopped while one is still needed
        try:
            return [self.execute(worker, prepared, sub.student) for prepared in sub.notebooks]
        finally:
            self.release(worker)

    def release(self, worker: Worker) -> None:
        """Put `worker` back, or stop it when nothing is left for it (`stop_unneeded`)."""
        self._idle.put(worker)
        self.stop_unneeded()

    def all_handed_out(self) -> None:
        """This run hands out nothing more: workers done already may stop."""
        with self._workers_lock:
            self._all_handed_out = True
        self.stop_unneeded()

    def stop_unneeded(self) -> None:
        """In a one-off run that hands out nothing more, stop the idle workers, each in
        the background: their processes and cgroups end while the last submissions are
        recorded, not after (`close` waits for them)."""
        with self._workers_lock:
            if self.persistent or not self._all_handed_out or self._waiting:
                return
            idle = []
            with contextlib.suppress(queue.Empty):
                while True:
                    idle.append(self._idle.get_nowait())
            for worker in idle:
                if worker in self._workers:  # else stopped already (`close`, on Ctrl-C)
                    self._workers.remove(worker)
                    stopping = threading.Thread(target=worker.stop, name="stop-worker")
                    stopping.start()
                    self._stopping.append(stopping)

    # -------------------------------------------------------------- judging and recording

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
            if self.prefetch is not None and prepared.plan.problem:
                self.prefetch.wait(prepared.plan.problem, prepared.givens)
            verdicts = trusted.verdicts(
                prepared.plan, prepared.notebook.cells, result.calls, prepared.givens
            )
            checks[prepared.notebook_id] = diagnoses.notebook_checks(
                prepared.plan, prepared.notebook.cells, verdicts, prepared.givens
            )
            cells = self.recorder.judged_cells(prepared, result, verdicts)
            sources = [prepared.notebook.cells[i].source for i in prepared.code_cells]
            record = {
                "sources": hashlib.sha256(json.dumps(sources).encode()).hexdigest(),
                "cells": cells,
                "status": result.status,
                "detail": result.detail,
            }
            key = (sub.student, sub.assignment, prepared.notebook_id)
            self.recording.hand_over(key, prepared.notebook, record)
            if result.status != "ok":
                sub.notes.append(f"{prepared.notebook_id}: {result.status}: {result.detail}")
        try:
            score, max_score = self.recorder.record(sub)
        finally:
            for prepared in sub.notebooks:
                self.recording.take_back((sub.student, sub.assignment, prepared.notebook_id))
        diagnoses.write_diagnoses(self.state, sub.assignment, sub.student, sub.fingerprint, checks)
        self.markers.graded(sub, score, max_score)
        return Outcome(sub, "graded", sub.notes, score, max_score, time.monotonic() - started)

    def run(self, progress: Any = None, only: set[str] | None = None) -> Iterator[Outcome]:
        """Grade everything (`only`: what is in these student/assignment folders, e.g. what
        a service just collected); yields one Outcome per submission as it completes."""
        with (
            recording_caches(self.recording, self.gradebook_work),
            references.stored_in(self.state / "references"),
        ):
            yield from self._run(only)

    def _run(self, only: set[str] | None) -> Iterator[Outcome]:
        todo, skipped = self._discovered or self.discover(only)
        self._discovered = None
        yield from skipped
        if not todo:
            if not self.persistent:
                self.close()  # a worker warmed up before discovery is not needed
            return
        self.warm_up(min(len(todo), self.jobs))
        # nbgrader's converter is imported in the background once the first submission is
        # handed out, while it runs (earlier, it would slow the preparing of it)
        importing = threading.Thread(target=import_recorder, name="imports", daemon=True)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="grade")
        pool = self._pool
        pending: deque[tuple[Submission, Future[list[ExecutionResult]]]] = deque()
        self._all_handed_out = False
        try:
            # Prepare and hand out one submission at a time, recording finished ones in
            # order meanwhile, so the workers start at once and never wait for the grader.
            for sub in todo:
                if self.stop_requested.is_set():
                    break
                self.discovery.attempted[sub.key] = sub.fingerprint
                try:
                    self.prepare(sub, sub.notebook_ids)
                except Exception as error:  # a broken submission fails alone
                    yield self.fail(sub, [str(error) or type(error).__name__])
                    continue
                with self._workers_lock:
                    self._waiting += 1
                pending.append((sub, pool.submit(self.execute_all, sub)))
                if importing.ident is None:  # not started yet
                    importing.start()
                if sub is todo[-1]:
                    self.all_handed_out()
                while pending and (pending[0][1].done() or len(pending) > 4 * self.jobs):
                    if self.stop_requested.is_set():
                        break
                    yield self.record_outcome(*pending.popleft())
            self.all_handed_out()
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
        except SubmissionError as error:  # says why, in the instructor's terms
            return self.fail(sub, [str(error)])
        except Exception as error:  # one bad submission never stops the batch
            return self.fail(sub, [f"{type(error).__name__}: {error}"])

    def fail(self, sub: Submission, reasons: list[str]) -> Outcome:
        self.markers.failed(sub, reasons)
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
        while self._stopping:
            self._stopping.pop().join()
        if self.gradebook_work is not None:
            self.gradebook_work.close()

    def total(self) -> int:
        """How many submissions `run` will yield (for the progress bar); the next `run`
        reuses this discovery instead of hashing every submission again."""
        self._discovered = self.discover()
        todo, skipped = self._discovered
        return len(todo) + len(skipped)
