"""`autograder serve`: a warm grading service that grades each submission as it arrives.

The sandboxed workers start once (bubblewrap, Python, `import torch`) and stay warm. Every
`--interval` seconds the service collects what students handed in with `nbgrader submit`
(or the Assignments tab) from the course's exchange into submitted/
(`autograder.service.collect`: `nbgrader collect --update`'s rules, refusing unsafe
folders), then grades what is new or changed under submitted/ with the same `Grader` as
`autograder grade` (same sandbox, same gradebook records): at each look what it just
collected, and all of submitted/ every FULL_LOOK seconds, so a look costs what is new. A
submission is tried once per version: one that fails is not retried until it changes.
What arrived together is graded together: one grading run over every pending submission,
sharing the gradebook's engine and nbgrader's caches (a folder seen new is collected on a
second look just before grading, not one whole run later). With `--release-feedback`,
each graded submission's feedback is generated and released with nbgrader's own commands,
in the background by warm processes side by side (`autograder.service.release_feedback`;
each learner always through the same one) at a lower CPU priority, so in a rush grading
goes first, and checked to be in the
exchange where `nbgrader fetch_feedback` looks. `python benchmarks/deadline_rush.py`
measures a rush (and `--profile N` where the time goes).
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from autograder.core.startup import loading
from autograder.core.terminal import shown
from autograder.sandbox.workers import Sandbox, Worker, load_config, worker_log_dir
from autograder.service.collect import ExchangeCollector

_OUTPUT = threading.Lock()
FULL_LOOK = 5.0  # seconds between looks at all of submitted/ (each look: what was collected)


def say(line: str) -> None:
    """Print one line of the service's output, learner-controlled text escaped, whole: the
    grading loop and the feedback thread both print, and `print` writes the line and its
    newline separately, so two lines could otherwise run into one."""
    with _OUTPUT:
        sys.stdout.write(shown(line) + "\n")
        sys.stdout.flush()


def submitted_at(folder: Path) -> float:
    """When the submission in `folder` arrived: its newest status change (copies keep
    their mtimes, not their ctimes)."""
    times = [p.lstat().st_ctime for p in [folder, *folder.rglob("*")]]
    return max(times, default=time.time())


FEEDBACK_ATTEMPTS = 2
"""Tries of one learner's feedback before it is FAILED (a gradebook busy past its lock
timeout, say, passes on the second)."""
FEEDBACK_RETRY_SECONDS = 1.0


class FeedbackLane:
    """One warm `python -m autograder.service.release_feedback` process (nbgrader loaded
    once) and the thread that hands it this lane's learners, one at a time, in order."""

    def __init__(self, course: Path, number: int, waiting: Callable[[], int]) -> None:
        self.course = course
        self.log = worker_log_dir(course) / f"feedback-{number}.log"
        self.waiting = waiting
        self.jobs: queue.Queue[tuple[str, str, float] | None] = queue.Queue()
        self.process = self._start()
        self.thread = threading.Thread(target=self._run, name=f"feedback-{number}", daemon=True)
        self.thread.start()

    def _start(self) -> subprocess.Popen[str]:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "autograder.service.release_feedback", str(self.course)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=self.course,
            )

    def _ask(self, assignment: str, student: str) -> dict[str, Any]:
        """The warm process's answer about one learner (restarted if it had died)."""
        if self.process.poll() is not None:
            self.process = self._start()
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"assignment": assignment, "student": student}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while line := self.process.stdout.readline():
            answer: dict[str, Any] = json.loads(line)
            if "ready" not in answer:
                return answer
        return {"ok": False, "reason": f"the feedback process ended (see {self.log})"}

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            assignment, student, since = job
            key = f"{student}/{assignment}"
            for attempt in range(1, FEEDBACK_ATTEMPTS + 1):
                if attempt > 1:
                    time.sleep(FEEDBACK_RETRY_SECONDS)
                try:
                    answer = self._ask(assignment, student)
                except (OSError, ValueError) as error:  # the service goes on; shown below
                    answer = {"ok": False, "reason": f"{type(error).__name__}: {error}"}
                if answer["ok"]:
                    break
            if answer["ok"]:
                after = time.time() - since
                waiting = self.waiting()
                say(
                    f"feedback {key}: released {answer['pages']} page(s) "
                    f"{after:.2f} s after submission"
                    + (f" ({waiting} more waiting)" if waiting else "")
                )
            else:
                say(f"FAILED feedback {key} (tried {FEEDBACK_ATTEMPTS} times): {answer['reason']}")

    def close(self) -> None:
        """Finish what is queued, then stop the warm process."""
        self.jobs.put(None)
        self.thread.join()
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class FeedbackReleaser:
    """Releases feedback in the background through `processes` lanes; a learner's feedback
    always goes through the same lane (by their name), so two versions of one learner's
    pages are never written at once and the newer is always written last."""

    def __init__(self, course: Path, processes: int) -> None:
        self.lanes = [FeedbackLane(course, n, self.waiting) for n in range(processes)]

    def waiting(self) -> int:
        return sum(lane.jobs.qsize() for lane in self.lanes)

    def add(self, assignment: str, student: str, since: float) -> None:
        lane = self.lanes[zlib.crc32(student.encode()) % len(self.lanes)]
        lane.jobs.put((assignment, student, since))

    def close(self) -> None:
        """Finish what is queued in every lane (they go on side by side meanwhile), then
        stop their processes."""
        for lane in self.lanes:
            lane.close()


def collect(collector: ExchangeCollector) -> None:
    """Collect what is new in the exchange; print what the instructor should know."""
    try:
        lines = collector.look()
    except Exception as error:  # e.g. the gradebook unreachable: said once
        lines = collector.once(f"FAILED exchange: {type(error).__name__}: {error}")
    for line in lines:
        say(line)


def import_sympy() -> None:
    import sympy  # noqa: F401


def serve(args: argparse.Namespace, course: Path, sandbox: Sandbox) -> int:
    """Grade new submissions until interrupted (SIGINT or SIGTERM); the exit status."""
    with loading():
        from autograder.grading.preparation import import_torch
        from autograder.grading.recording import import_recorder
        from autograder.grading.runner import Grader
        from autograder.grading.submissions import SubmissionError
        from autograder.grading.work import Outcome

    workers = [Worker(sandbox, worker_log_dir(course)) for _ in range(args.jobs)]
    for worker in workers:
        worker.start_soon()
    # What the first grading needs (nbgrader's converter, PyTorch for references not yet
    # stored, SymPy to read formulas) is loaded while the service waits, not when the
    # first learner hands in.
    for load in (import_recorder, import_torch, import_sympy):
        threading.Thread(target=load, name=load.__name__, daemon=True).start()

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        grader = Grader(
            course,
            assignments=args.assignments or None,
            jobs=args.jobs,
            sandbox=sandbox.enabled,
            workers=workers,
            persistent=True,
        )
    except BaseException:  # a setting it cannot take: no worker is left running
        for worker in workers:
            worker.stop(now=True)
        raise
    try:
        grader.wanted()  # before serving: an assignment not in the gradebook is refused
    except SubmissionError as error:
        grader.close(now=True)
        say(f"error: {error}")
        return 2
    collector = ExchangeCollector(
        load_config(course), lambda: set(grader.known_assignments()), args.assignments
    )
    problem = None if args.no_collect else collector.problem()
    if problem:
        grader.close(now=True)
        say(f"error: cannot collect from the exchange: {problem} (or --no-collect)")
        return 2
    feedback = FeedbackReleaser(course, args.feedback_processes) if args.release_feedback else None
    source = "submitted/" if args.no_collect else f"{collector.inbound} and submitted/"
    say(f"serving {course}: grading new submissions from {source} (Ctrl-C stops)")
    failed: dict[str, str] = {}  # submission -> the reason last printed

    def handle_outcomes(outcomes: Iterator[Outcome]) -> None:
        """Say each outcome as it comes; queue the feedback of what was graded."""
        for outcome in outcomes:
            if outcome.status == "skipped":
                continue
            sub = outcome.submission
            if outcome.status == "graded":
                since = collector.submitted_at.pop(sub.key, None) or submitted_at(sub.path)
                say(
                    f"graded {sub.key} {outcome.score:g}/{outcome.max_score:g} "
                    f"{time.time() - since:.2f} s after submission"
                )
                if feedback is not None:
                    feedback.add(sub.assignment, sub.student, since)
                failed.pop(sub.key, None)
                continue
            reason = "; ".join(outcome.reasons)
            if failed.get(sub.key) != reason:  # a refused folder: said once, not each look
                say(f"FAILED {sub.key}: {reason}")
            failed[sub.key] = reason

    full_look = -FULL_LOOK
    try:
        while True:
            if not args.no_collect:
                collect(collector)
                if collector.seen_new:  # collected on the next look, before grading
                    time.sleep(args.interval)
                    collect(collector)
            # What was just collected is looked at each time; all of submitted/ (what
            # `nbgrader collect` or an instructor put there) every FULL_LOOK seconds.
            only: set[str] | None = set(collector.submitted_at)
            if args.no_collect or time.monotonic() - full_look >= FULL_LOOK:
                only, full_look = None, time.monotonic()
            try:
                handle_outcomes(grader.run(only=only))
            except SubmissionError as error:  # submitted/ cannot be listed: said once
                if failed.get("submitted/") != str(error):
                    say(f"FAILED {error}")
                failed["submitted/"] = str(error)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        say("stopping")
    finally:
        grader.close(now=True)
        if feedback is not None:
            feedback.close()
    return 0
