"""`autograder serve`: a warm grading service that grades each submission as it arrives.

The sandboxed workers start once (bubblewrap, Python, `import torch`) and stay warm; the
service looks at submitted/ every `--interval` seconds and grades what is new or changed
with the same `Grader` as `autograder grade` (same sandbox, same gradebook records). A
submission is tried once per version: one that fails is not retried until it changes.
With `--release-feedback`, each graded submission's feedback is generated and released
with nbgrader's own commands, in the background.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from autograder.sandbox import Sandbox, Worker, worker_log_dir


def submitted_at(folder: Path) -> float:
    """When the submission in `folder` arrived: its newest status change (copies keep
    their mtimes, not their ctimes)."""
    times = [p.stat().st_ctime for p in [folder, *folder.rglob("*")]]
    return max(times, default=time.time())


def release_feedback(course: Path, assignment: str, student: str) -> None:
    """Generate and release one learner's feedback with nbgrader (prints the outcome)."""
    nbgrader = str(Path(sys.executable).parent / "nbgrader")
    for step in ("generate_feedback", "release_feedback"):
        result = subprocess.run(
            [nbgrader, step, assignment, "--student", student, "--force"],
            cwd=course,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            print(f"  feedback {student}/{assignment}: {step} failed: {tail[0]}", flush=True)
            return
    print(f"  feedback {student}/{assignment}: released", flush=True)


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
    feedback: list[threading.Thread] = []
    print(f"serving {course}: grading new submissions (Ctrl-C stops)", flush=True)
    try:
        while True:
            for outcome in grader.run():
                if outcome.status == "skipped":
                    continue
                sub = outcome.submission
                after = time.time() - submitted_at(sub.path)
                if outcome.status == "graded":
                    print(
                        f"graded {sub.key} {outcome.score:g}/{outcome.max_score:g} "
                        f"{after:.2f} s after submission",
                        flush=True,
                    )
                    if args.release_feedback:
                        thread = threading.Thread(
                            target=release_feedback, args=(course, sub.assignment, sub.student)
                        )
                        thread.start()
                        feedback.append(thread)
                else:
                    print(f"FAILED {sub.key}: {'; '.join(outcome.reasons)}", flush=True)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        grader.close(now=True)
        for thread in feedback:
            thread.join()
    return 0
