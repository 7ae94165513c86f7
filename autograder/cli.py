"""The `autograder` command: grade a class fast and safely, with nbgrader's own results."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.core.startup import loading
from autograder.core.terminal import shown
from autograder.grading.course import course_problem
from autograder.sandbox.workers import (
    STATE_DIR,
    Sandbox,
    SandboxUnavailable,
    Worker,
    check_sandbox,
    default_jobs,
    load_config,
    worker_log_dir,
)

if TYPE_CHECKING:
    from autograder.diagnosis.prefetch import Prefetch

DESCRIPTION = """\
Autograde every submission under submitted/ of an nbgrader course, in parallel and
sandboxed. Results land in the course's gradebook and autograded/ folder exactly as
`nbgrader autograde` leaves them, so `nbgrader export`, `nbgrader generate_feedback`
and formgrader work unchanged. Safe to interrupt: run it again and it grades only
what is missing (or was resubmitted).
"""

EXAMPLES = """\
examples:
  autograder grade                          grade every assignment in this course
  autograder grade 03_a_neuron_by_hand -j 4 one assignment, four workers
  autograder grade --course-dir ~/course    a course elsewhere
  autograder grade --student ada --force    regrade one student

exit status: 0 all graded, 1 some submissions failed (see the summary), 2 usage error.
limits (memory, time, processes, output) are set in nbgrader_config.py: c.Sandbox.memory_mb = ...
"""

SERVE_DESCRIPTION = """\
A warm grading service for the class machine: sandboxed workers start once and stay warm.
Every --interval seconds it collects new submissions from the course's nbgrader exchange
(c.Exchange.root, c.CourseDirectory.course_id) into submitted/, as `nbgrader collect
--update` would (the newest per student and assignment, only if newer than what is
collected), refusing with the reason any inbound folder that holds links, special files,
unsafe names or too much, or that is not owned by the student it names (unless
c.ExchangeCollect.check_owner = False); then it grades every new or changed submission
under submitted/ (what it collected at once, anything else put there within seconds),
into the gradebook, as `autograder grade` does: what arrived together in one run, one
line per submission graded or refused. With --release-feedback, feedback is released in
the background (--feedback-processes side by side) at a lower CPU priority: in a rush of
hand-ins grading goes first.
"""

SECRET_DESCRIPTION = """\
Create the course's secret (.autograder/givens_secret, mode 0600), once. Each learner's
numbers then come from their key, HMAC(secret, login): `make class` hands each student
their own key (AUTOGRADER_LEARNER_KEY), and the grader and `nbgrader autograde` on the
instructor's side compute it; no one can compute another learner's numbers. Without a
secret the numbers come from the course id (c.CourseDirectory.course_id) and the login.
Create it before the class starts: learners' numbers change with it.
"""

SERVE_EPILOG = """\
examples:
  autograder serve                          collect and grade every assignment
  autograder serve --release-feedback       ...and release each learner's feedback
  autograder serve 03_a_neuron_by_hand      one assignment only

run it as the instructor (who owns the course folder and can read the exchange).
exit status: 0 stopped by Ctrl-C or SIGTERM, 2 usage error or nothing to collect from.
"""


def seconds(text: str) -> float:
    """A positive number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def student_id(text: str) -> str:
    """A student id under the one rule for ids (argparse type)."""
    from autograder.grading.submissions import SubmissionError, check_student_name

    try:
        check_student_name(text)
    except SubmissionError as refused:
        raise argparse.ArgumentTypeError(str(refused)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    grade = commands.add_parser(
        "grade",
        help="autograde submissions (parallel, sandboxed, resumable)",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    grade.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="default: every one")
    grade.add_argument(
        "--course-dir", type=Path, default=Path.cwd(), help="nbgrader course directory (default: .)"
    )
    grade.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=default_jobs(),
        help="parallel workers (default: one per core but one, for the grader's own thread)",
    )
    grade.add_argument(
        "--student", action="append", type=student_id, help="only this student (repeatable)"
    )
    grade.add_argument("--force", action="store_true", help="regrade even what is already graded")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="UNSAFE: run submissions unconfined, as you (only where bubblewrap cannot run)",
    )
    grade.add_argument("--seed", type=int, help="fix the random cases of code exercises")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    serve = commands.add_parser(
        "serve",
        help="a warm grading service: collect and grade each submission as it arrives",
        description=SERVE_DESCRIPTION,
        epilog=SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="default: every one")
    serve.add_argument("--course-dir", type=Path, default=Path.cwd(), help="(default: .)")
    serve.add_argument("-j", "--jobs", type=int, default=1, help="warm workers (default 1)")
    serve.add_argument(
        "--interval", type=seconds, default=0.25, help="seconds between looks (default 0.25)"
    )
    serve.add_argument(
        "--release-feedback",
        action="store_true",
        help="after grading, generate and release each learner's feedback (nbgrader's)",
    )
    serve.add_argument(
        "--feedback-processes",
        type=int,
        default=2,
        metavar="N",
        help="warm processes releasing feedback side by side (default 2)",
    )
    serve.add_argument(
        "--no-collect",
        action="store_true",
        help="grade only what is put in submitted/ (e.g. by `nbgrader collect`)",
    )
    serve.add_argument("--no-sandbox", action="store_true", help="UNSAFE, as for grade")
    report = commands.add_parser(
        "report",
        help="what to re-teach: misconceptions ranked, each part's root causes and "
        "follow-ons, each student's mistakes, progress (HTML + CSV)",
        description="Write reports/<ASSIGNMENT or course>.html (plots) and CSVs from the "
        "gradebook and the diagnoses `autograder grade` stored, over the released "
        "assignments (or the one named).",
        epilog="exit status: 0 written, 1 nothing graded yet, 2 usage error.",
    )
    report.add_argument("assignment", nargs="?", metavar="ASSIGNMENT", help="default: the course")
    report.add_argument(
        "--course-dir", type=Path, default=Path.cwd(), help="nbgrader course directory (default: .)"
    )
    report.add_argument("--out", type=Path, help="output folder (default: COURSE_DIR/reports)")
    secret = commands.add_parser(
        "secret",
        help="create the course's secret, so no one can compute another learner's numbers",
        description=SECRET_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    secret.add_argument(
        "--course-dir", type=Path, default=Path.cwd(), help="nbgrader course directory (default: .)"
    )
    return parser


def create_secret(args: argparse.Namespace) -> int:
    """`autograder secret`: the course's secret, created once."""
    from autograder.core.givens import create_secret

    course = args.course_dir.resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(f"error: {course} is not an nbgrader course (no nbgrader_config.py)", file=sys.stderr)
        return 2
    try:
        path = create_secret(course)
    except FileExistsError as error:
        print(
            f"error: {error.filename} exists: a new secret would change every learner's "
            "numbers; delete it first if that is what you want",
            file=sys.stderr,
        )
        return 2
    except OSError as error:
        print(f"error: cannot create {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {path} (mode 0600): learners' numbers now come from it")
    return 0


def report(args: argparse.Namespace) -> int:
    from autograder.report import NothingGraded, ReportError, write_report

    course = args.course_dir.resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(f"error: {course} is not an nbgrader course (no nbgrader_config.py)", file=sys.stderr)
        return 2
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    try:
        written = write_report(course, args.assignment, args.out or course / "reports")
    except ReportError as error:
        print(f"error: {shown(error)}", file=sys.stderr)
        return 1 if isinstance(error, NothingGraded) else 2
    for path in written:
        print(f"wrote {path}")
    return 0


def checked_sandbox(args: argparse.Namespace, course: Path) -> Sandbox | None:
    """The course's sandbox, checked (None: an error was printed; exit status 2)."""
    sandbox = course_sandbox(args, course)
    return sandbox if sandbox is not None and probed(args, sandbox) else None


def course_sandbox(args: argparse.Namespace, course: Path) -> Sandbox | None:
    """The course's sandbox as its configuration sets it, not yet probed (None: an error
    was printed)."""
    if not course.is_dir():
        print(f"error: course directory {course} does not exist", file=sys.stderr)
        return None
    counts = {"--jobs": args.jobs, "--feedback-processes": getattr(args, "feedback_processes", 1)}
    for option, count in counts.items():
        if count < 1:
            print(f"error: {option} must be at least 1", file=sys.stderr)
            return None
    problem = course_problem(course)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return None
    sandbox = Sandbox(config=load_config(course))
    if args.no_sandbox:
        sandbox.enabled = False
    return sandbox


def probed(args: argparse.Namespace, sandbox: Sandbox) -> bool:
    """Whether grading may go on in `sandbox`: it works (else an error is printed), or
    `--no-sandbox` said to grade without one (said again, as a warning)."""
    if args.no_sandbox:
        print(
            "warning: --no-sandbox: submissions run as you, with your files and network.",
            file=sys.stderr,
        )
        return True
    try:
        check_sandbox(sandbox)
    except SandboxUnavailable as error:
        print(f"error: refusing to grade: {error}", file=sys.stderr)
        return False
    return True


def grade(args: argparse.Namespace) -> int:
    from autograder.grading.lean_imports import lean_imports
    from autograder.grading.nbgrader_internals import without_server_extensions

    without_server_extensions()  # nbgrader's Jupyter server extensions: not for grading
    course = args.course_dir.resolve()
    sandbox = course_sandbox(args, course)
    if sandbox is None:
        return 2
    # In a course graded for the first time, PyTorch computes the reference values in a
    # process of its own from now on, on the other core (`diagnosis.prefetch`): started
    # first, as the rest of the command waits for it.
    from autograder.diagnosis.prefetch import for_new_store

    prefetch = for_new_store(
        course / STATE_DIR / "references", instructor_notebooks(sandbox, course, args.assignments)
    )
    try:
        if not probed(args, sandbox):
            return 2
        # The first worker (bubblewrap, Python, IPython: a fraction of a second) starts now,
        # while nbgrader is imported and the submissions are discovered and prepared.
        first = Worker(sandbox, worker_log_dir(course))
        first.start_soon()
        lean_imports()  # nor what nbgrader and nbformat import for what grading never does
        try:
            from autograder.grading.kept_validators import keep_validators

            keep_validators()  # nbformat's notebook validators: compiled once per machine
            return grade_with(args, course, first, prefetch)
        finally:
            first.stop(now=True)  # normally stopped already, with the grader's workers
    finally:
        if prefetch is not None:
            prefetch.close()


def instructor_notebooks(
    sandbox: Sandbox, course: Path, assignments: list[str] | None
) -> Iterator[Path]:
    """The instructor's notebooks of `assignments` (else of every assignment) in the
    course's source folder, as nbgrader lays it out by default (a course laid out
    otherwise has none found here)."""
    source = course / str(sandbox.config.CourseDirectory.get("source_directory", "source"))
    if not assignments:
        yield from source.glob("*/*.ipynb")
    for name in assignments or ():
        yield from (source / name).glob("*.ipynb")


def grade_with(
    args: argparse.Namespace, course: Path, first: Worker, prefetch: Prefetch | None = None
) -> int:
    """Grade with `first` as the first worker (and `prefetch`, if any); the exit status."""
    with loading():
        from tqdm import tqdm

        from autograder.grading.runner import Grader
        from autograder.grading.submissions import SubmissionError

    logging.getLogger("traitlets").setLevel(logging.ERROR)
    grader = Grader(
        course,
        assignments=args.assignments or None,
        students=args.student,
        jobs=args.jobs,
        sandbox=not args.no_sandbox,
        force=args.force,
        seed=args.seed,
        workers=[first],
        prefetch=prefetch,
    )
    started = time.monotonic()
    counts = {"graded": 0, "failed": 0, "skipped": 0}
    outcomes = []

    def stop(signum: int, frame: object) -> None:
        if grader.stop_requested.is_set():
            raise KeyboardInterrupt
        grader.stop_requested.set()
        print("\nstopping: the submission being recorded is finished first", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        total = grader.total()
        bar = tqdm(total=total, unit="submission", disable=args.quiet, dynamic_ncols=True)
        for outcome in grader.run():
            outcomes.append(outcome)
            counts[outcome.status] += 1
            bar.set_postfix(counts, refresh=False)
            bar.update(1)
        bar.close()
    except SubmissionError as error:
        grader.close(now=True)
        print(f"error: {shown(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        grader.close(now=True)
        print("\ninterrupted: what was graded is kept; run again to finish.", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    if grader.stop_requested.is_set():
        print(
            f"\ninterrupted after {counts['graded']} graded: what was graded is kept; "
            "run again to finish.",
            file=sys.stderr,
        )
        return 130
    elapsed = time.monotonic() - started
    print(
        f"\n{counts['graded']} graded, {counts['failed']} failed, "
        f"{counts['skipped']} skipped as already graded, in {elapsed:.1f} s"
    )
    if not outcomes:
        which = ", ".join(args.assignments) if args.assignments else "any recorded assignment"
        print(
            f"nothing to grade: submitted/ holds no hand-in of {which} "
            "(`nbgrader collect`, or `autograder serve`, puts them there)",
            file=sys.stderr,
        )
    for outcome in outcomes:
        sub = outcome.submission
        if outcome.status == "failed":
            print(f"  FAILED {shown(sub.key)}:")
            for reason in outcome.reasons:
                print(f"    - {shown(reason)}")
        elif outcome.status == "graded" and outcome.reasons:
            print(f"  noted  {shown(sub.key)} ({outcome.score:g}/{outcome.max_score:g}):")
            for reason in outcome.reasons:
                print(f"    - {shown(reason)}")
    return 1 if counts["failed"] else 0


def main(argv: list[str] | None = None) -> int:
    """The command's exit status; a course whose configuration or secret cannot be used
    stops it with one line saying why (status 2), whichever command it is."""
    from traitlets import TraitError

    from autograder.core.givens import SecretError
    from autograder.sandbox.settings import CourseConfigError

    try:
        return dispatch(argv)
    except (CourseConfigError, SecretError) as error:
        print(f"error: {shown(error)}", file=sys.stderr)
    except TraitError as error:
        print(
            "error: a setting in the course's configuration (nbgrader_config.py or its site "
            f"config): {shown(error)}",
            file=sys.stderr,
        )
    return 2


def dispatch(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "grade":
        return grade(args)
    if args.command == "serve":
        from autograder.service.serve import serve

        course = args.course_dir.resolve()
        sandbox = checked_sandbox(args, course)
        return 2 if sandbox is None else serve(args, course, sandbox)
    if args.command == "report":
        return report(args)
    if args.command == "secret":
        return create_secret(args)
    parser.print_help()
    return 2


def run() -> None:
    """The console command: `main`, then exit at once. Every record is committed and every
    file closed by then; tearing the interpreter down (torch, nbgrader) took most of a
    second on every command."""
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    run()
