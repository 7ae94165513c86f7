"""Benchmark: how soon `autograder serve` grades a submission after the student hands it in.

Starts the warm grading service on a course of one assignment whose nbgrader exchange is
in a temporary folder, and hands in the sample learners' notebooks one at a time (past the
seventh, as resubmissions), the way a student does: `nbgrader submit` run as a command. For each it
prints the seconds from the moment `nbgrader submit` returned to the service's "graded"
line (the service collects from the exchange, then grades), and with --release-feedback
also to its "feedback ... released" line (what `nbgrader fetch_feedback` then finds), and
the worst of them against the goal: graded within 3 s. A negative figure means the
service was done before `nbgrader submit` returned (it copies to the student's cache
after the exchange); the time from the start of `nbgrader submit` is shown too. The
first submission also pays the workers' cold start and is shown apart. Scores are
checked against instructor/sample_class/expected_grades.csv.

With `--via submitted` the notebooks are instead copied straight into submitted/ (as
`nbgrader collect` leaves them) and timed from the copy.

    python benchmarks/service_latency.py --submissions 5 --release-feedback
"""

from __future__ import annotations

import argparse
import datetime
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"
GOAL = 3.0  # seconds from hand-in to graded (issue 11)

from autograder.authoring.sample_class import (  # noqa: E402
    SAMPLE_CLASS,
    expected_scores,
    released_through_exchange,
)
from autograder.core.givens import COURSE_ID  # noqa: E402


def nbgrader_submit(home: Path, exchange: Path, sample: Path, student: str) -> float:
    """Hand in `sample`'s notebook as `student` with `nbgrader submit`; its duration."""
    (home / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(sample / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", home / ASSIGNMENT)
    (home / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\nc.Exchange.cache = {str(home / 'cache')!r}\n"
    )
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / ".jupyter"), "JUPYTER_CONFIG_PATH": ""}
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "nbgrader"), "submit", ASSIGNMENT, f"--student={student}"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"nbgrader submit failed for {student}:\n{done.stderr}")
    return time.perf_counter() - started


def copy_into_submitted(course: Path, sample: Path, student: str) -> None:
    """Put `sample`'s submission in submitted/ whole, at once, as `nbgrader collect`
    leaves one (stamped now, with a submission secret)."""
    target = course / "submitted" / student / ASSIGNMENT
    part = target.with_name("arriving")
    shutil.copytree(sample / ASSIGNMENT, part)
    now = datetime.datetime.now(datetime.UTC)
    (part / "timestamp.txt").write_text(now.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    (part / "submission_secret.txt").write_text(secrets.token_hex(64))  # as submit writes it
    if target.exists():  # a resubmission
        target.rename(target.with_name("replaced"))
    part.rename(target)
    shutil.rmtree(target.with_name("replaced"), ignore_errors=True)


def wait_for(lines: queue.Queue[tuple[float, str]], about: str) -> tuple[float, str]:
    """The next line of the service about `about`, with when it was printed (a FAILED one
    ends the benchmark)."""
    while True:
        try:
            printed, line = lines.get(timeout=120)
        except queue.Empty:
            sys.exit(f"no answer from the service about {about} within 120 s")
        if about in line:
            if line.startswith(("FAILED", "REFUSED")):
                sys.exit(f"the service failed: {line.strip()}")
            if not line.startswith("collected"):
                return printed, line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=5, help="timed submissions")
    parser.add_argument("--via", choices=["exchange", "submitted"], default="exchange")
    parser.add_argument(
        "--release-feedback", action="store_true", help="also time feedback released"
    )
    args = parser.parse_args()
    samples = [p for p in sorted(SAMPLE_CLASS.iterdir()) if (p / ASSIGNMENT).is_dir()]
    expected = expected_scores()
    with tempfile.TemporaryDirectory(prefix="service-bench-") as tmp:
        # Students ada, ben, ... hand in as the user running this.
        course, exchange = released_through_exchange(Path(tmp), ASSIGNMENT)
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        command = [str(BIN / "autograder"), "serve", "--course-dir", str(course)]
        command += ["--release-feedback"] if args.release_feedback else []
        command += ["--no-collect"] if args.via == "submitted" else []
        service = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        lines: queue.Queue[tuple[float, str]] = queue.Queue()
        assert service.stdout is not None
        stdout = service.stdout

        def read() -> None:
            for line in stdout:
                lines.put((time.perf_counter(), line))

        threading.Thread(target=read, daemon=True).start()
        graded: list[float] = []
        released: list[float] = []
        submits: list[float] = []
        from_start: list[float] = []
        wrong: list[str] = []
        try:
            for i in range(args.submissions + 1):
                sample = samples[i % len(samples)]
                student = sample.name  # their own numbers, so their expected score
                if args.via == "exchange":
                    home = Path(tmp) / "homes" / f"{i:03d}"
                    submits.append(nbgrader_submit(home, exchange, sample, student))
                else:
                    copy_into_submitted(course, sample, student)
                handed_in = time.perf_counter()
                printed, line = wait_for(lines, f"{student}/{ASSIGNMENT}")
                to_graded = printed - handed_in
                if not line.startswith("graded"):
                    sys.exit(f"the service did not grade {student}: {line.strip()}")
                score = float(line.split()[2].split("/")[0])
                if score != expected[(sample.name, ASSIGNMENT)]:
                    wrong.append(f"{student} ({i}): {score}")
                took = submits[-1] if submits else 0.0  # `nbgrader submit`'s own time
                shown = f"graded {to_graded:+.2f} s"
                if args.release_feedback:
                    printed, _ = wait_for(lines, f"feedback {student}/{ASSIGNMENT}")
                    to_released = printed - handed_in
                    shown += f", feedback released {to_released:+.2f} s"
                if submits:
                    shown += f" ({to_graded + took:.2f} s from the start of `nbgrader submit`)"
                if i == 0:
                    print(f"first submission (workers start cold): {shown}")
                    continue
                graded.append(to_graded)
                from_start.append(to_graded + took)
                if args.release_feedback:
                    released.append(to_released)
                print(f"submission {i} ({student}): {shown}")
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=120)
        handed = "`nbgrader submit` returned" if args.via == "exchange" else "the copy"
        print(
            f"warm service, from {handed} to graded: mean {sum(graded) / len(graded):.2f} s, "
            f"worst {max(graded):.2f} s (goal: within {GOAL:g} s)   "
            f"scores as expected: {not wrong}"
        )
        if released:
            print(
                f"to feedback released: mean {sum(released) / len(released):.2f} s, "
                f"worst {max(released):.2f} s"
            )
        if submits:
            print(
                f"from the start of `nbgrader submit` to graded: worst {max(from_start):.2f} s "
                f"(`nbgrader submit` itself took {min(submits):.2f}-{max(submits):.2f} s)"
            )
        for entry in wrong:
            print(f"  unexpected score: {entry}")
        return 0 if max(graded) <= GOAL and not wrong and service.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
