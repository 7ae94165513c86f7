"""`autograder serve`: a warm grading service that grades each submission as it arrives.

The sandboxed workers start once (bubblewrap, Python, `import torch`) and stay warm. Every
`--interval` seconds the service collects what students handed in with `nbgrader submit`
(or the Assignments tab) from the course's exchange into submitted/ (`autograder.collect`:
`nbgrader collect --update`'s rules, refusing unsafe folders), then grades what is new or
changed under submitted/ with the same `Grader` as `autograder grade` (same sandbox, same
gradebook records). A submission is tried once per version: one that fails is not retried
until it changes. With `--release-feedback`, each graded submission's feedback is
generated and released with nbgrader's own commands, one at a time in the background, and
checked to be in the exchange where `nbgrader fetch_feedback` looks.
"""

from __future__ import annotations

import argparse
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from autograder.collect import ExchangeCollector
from autograder.sandbox import Sandbox, Worker, load_config, worker_log_dir


def submitted_at(folder: Path) -> float:
    """When the submission in `folder` arrived: its newest status change (copies keep
    their mtimes, not their ctimes)."""
    times = [p.stat().st_ctime for p in [folder, *folder.rglob("*")]]
    return max(times, default=time.time())


def released_pages(collector: ExchangeCollector, assignment: str, student: str) -> int:
    """How many of the learner's feedback pages are in the exchange as generated; raises
    RuntimeError naming one that is missing or differs."""
    from nbgrader.utils import notebook_hash

    coursedir = collector.coursedir
    folder = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
    pages = sorted(folder.glob("*.html"))
    if not pages:
        raise RuntimeError(f"no feedback page in {folder}")
    secret = (folder / "submission_secret.txt").read_text()
    outbound = collector.inbound.parent / "feedback"
    for page in pages:
        released = outbound / f"{notebook_hash(secret=secret, notebook_id=page.stem)}.html"
        if not released.is_file() or released.read_bytes() != page.read_bytes():
            raise RuntimeError(f"{page.name} is not in the exchange ({released})")
    return len(pages)


def release_feedback(
    course: Path, collector: ExchangeCollector, assignment: str, student: str, since: float
) -> None:
    """Generate and release one learner's feedback with nbgrader; print the outcome."""
    nbgrader = str(Path(sys.executable).parent / "nbgrader")
    key = f"{student}/{assignment}"
    steps = [["generate_feedback", "--force"], ["release_feedback"]]  # --force: regenerate
    for step, *options in steps:
        result = subprocess.run(
            [nbgrader, step, assignment, "--student", student, *options],
            cwd=course,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            errors = [line for line in lines if "ERROR" in line or "CRITICAL" in line]
            reason = (errors or lines or [f"exit status {result.returncode}"])[-1]
            print(f"FAILED feedback {key}: {step}: {reason}", flush=True)
            return
    try:
        pages = released_pages(collector, assignment, student)
    except (OSError, RuntimeError) as error:
        print(f"FAILED feedback {key}: released, but {error}", flush=True)
        return
    after = time.time() - since
    print(f"feedback {key}: released {pages} page(s) {after:.2f} s after submission", flush=True)


class FeedbackReleaser:
    """Releases feedback one learner at a time in a background thread (nbgrader's
    commands on one submission must not overlap)."""

    def __init__(self, course: Path, collector: ExchangeCollector) -> None:
        self.course, self.collector = course, collector
        self.jobs: queue.Queue[tuple[str, str, float] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="feedback", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            assignment, student, since = job
            try:
                release_feedback(self.course, self.collector, assignment, student, since)
            except Exception as error:  # the service goes on; the failure is shown
                key = f"{student}/{assignment}"
                print(f"FAILED feedback {key}: {type(error).__name__}: {error}", flush=True)

    def add(self, assignment: str, student: str, since: float) -> None:
        self.jobs.put((assignment, student, since))

    def close(self) -> None:
        """Finish what is queued, then stop."""
        self.jobs.put(None)
        self.thread.join()


def serve(args: argparse.Namespace, course: Path, sandbox: Sandbox) -> int:
    """Grade new submissions until interrupted (SIGINT or SIGTERM); the exit status."""
    from autograder.runner import Grader

    workers = [Worker(sandbox, worker_log_dir(course)) for _ in range(args.jobs)]
    for worker in workers:
        worker.start_soon()

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    grader = Grader(
        course,
        assignments=args.assignments or None,
        jobs=args.jobs,
        sandbox=sandbox.enabled,
        workers=workers,
        persistent=True,
    )
    collector = ExchangeCollector(
        load_config(course), lambda: set(grader.known_assignments()), args.assignments
    )
    problem = None if args.no_collect else collector.problem()
    if problem:
        grader.close(now=True)
        print(f"error: cannot collect from the exchange: {problem} (or --no-collect)")
        return 2
    feedback = FeedbackReleaser(course, collector) if args.release_feedback else None
    source = "submitted/" if args.no_collect else f"{collector.inbound} and submitted/"
    print(f"serving {course}: grading new submissions from {source} (Ctrl-C stops)", flush=True)
    try:
        while True:
            if not args.no_collect:
                for line in collector.look():
                    print(line, flush=True)
            for outcome in grader.run():
                if outcome.status == "skipped":
                    continue
                sub = outcome.submission
                since = collector.submitted_at.pop(sub.key, None) or submitted_at(sub.path)
                if outcome.status == "graded":
                    print(
                        f"graded {sub.key} {outcome.score:g}/{outcome.max_score:g} "
                        f"{time.time() - since:.2f} s after submission",
                        flush=True,
                    )
                    if feedback is not None:
                        feedback.add(sub.assignment, sub.student, since)
                else:
                    print(f"FAILED {sub.key}: {'; '.join(outcome.reasons)}", flush=True)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        grader.close(now=True)
        if feedback is not None:
            feedback.close()
    return 0
