"""`autograder serve`: a real warm service collects from a real nbgrader exchange and grades.

One service process (with --release-feedback) serves a course whose exchange is in the
test's folder. Students hand in with the real `nbgrader submit` (as the user running the
test, named with `--student`); the service collects from inbound/, grades, and releases
feedback that `nbgrader fetch_feedback` brings back. Hostile inbound folders (a link to a
secret, a FIFO, a folder not owned by the student it names) are refused with their
reasons and leave nothing in submitted/. Submissions copied straight into submitted/ are
graded too, once per version.
"""

from __future__ import annotations

import datetime
import html
import os
import pwd
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import stall_guard
from nbgrader.utils import parse_utc

from autograder.authoring.sample_class import (
    SAMPLE_CLASS,
    expected_scores,
    gradebook_scores,
    make_course,
)
from autograder.core.givens import COURSE_ID
from autograder.sandbox.workers import Sandbox, cgroup_bases

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

ASSIGNMENT = "03_a_neuron_by_hand"
BIN = Path(sys.executable).parent
ME = pwd.getpwuid(os.getuid()).pw_name  # students hand in as the user running the test
BEN_SLIP = "the factor 2, the 2 of the square"  # ben's notebook's diagnosis (his formula read)


@dataclass
class Service:
    """A running `autograder serve` and everything it printed."""

    process: subprocess.Popen[str]
    course: Path
    exchange: Path
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def next_line(self, about: str) -> str:
        """The next printed line holding `about` (lines without it are passed over); a
        line about a submission names it as " student/assignment". Feedback is released
        in the background, whenever it is ready: its lines are passed over unless asked for."""
        watch = stall_guard.Watch(
            f"autograder serve, awaiting a line about {about!r}",
            [lambda: len(self.seen), stall_guard.work_below(self.process.pid)],
        )
        while True:
            try:
                line = self.lines.get(timeout=stall_guard.POLL_SECONDS)
            except queue.Empty:
                watch.check()
                continue
            if line.startswith("feedback ") and not about.startswith("feedback "):
                continue
            if about in line:
                return line

    def count(self, start: str) -> int:
        return sum(line.startswith(start) for line in self.seen)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("service")
    exchange = root / "exchange"
    exchange.mkdir()
    course = make_course(
        root / "course",
        [ASSIGNMENT],
        extra_config=f"c.Exchange.root = {str(exchange)!r}\n"
        # nbgrader's own late-penalty plugin: a late hand-in scores zero (no due date is set
        # until test_a_late_hand_in_is_late_everywhere, the last test)
        'c.LateSubmissionPlugin.penalty_method = "zero"\n',
    )
    # make_course generated the learners' version into exercises/; nbgrader publishes release/.
    shutil.copytree(course / "exercises" / ASSIGNMENT, course / "release" / ASSIGNMENT)
    run(["nbgrader", "release_assignment", ASSIGNMENT], course)
    process = subprocess.Popen(
        [str(BIN / "autograder"), "serve", "--course-dir", str(course), "--interval", "0.1"]
        + ["--release-feedback"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    served = Service(process, course, exchange)
    assert process.stdout is not None
    stdout = process.stdout

    def read() -> None:
        for line in stdout:
            served.seen.append(line)
            served.lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        served.next_line("serving")
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        code = stall_guard.wait(process, "autograder serve, stopping on SIGTERM")
    assert code == 0, "".join(served.seen)
    # The workers went with the service: their cgroups (made under ours) are gone.
    for base in cgroup_bases(Sandbox()).values():
        assert not list(base.glob(f"autograder-{process.pid}-*"))


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run an nbgrader command (from this venv); its output, or the test fails with it."""
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@dataclass
class Student:
    """A learner's own folder and nbgrader config, as on their server."""

    home: Path
    exchange: Path

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
            f"c.Exchange.root = {str(self.exchange)!r}\n"
            f"c.Exchange.cache = {str(self.home / 'cache')!r}\n"
        )
        self.env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(self.home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(self.home / ".data"),
            "JUPYTER_CONFIG_PATH": "",
        }

    def submit(self, sample: str, student_id: str = ME) -> float:
        """Hand in `sample`'s notebook as `student_id`; when `nbgrader submit` returned."""
        folder = self.home / ASSIGNMENT
        folder.mkdir(exist_ok=True)
        name = f"{ASSIGNMENT}.ipynb"
        shutil.copy(SAMPLE_CLASS / sample / ASSIGNMENT / name, folder / name)
        run(["nbgrader", "submit", ASSIGNMENT, f"--student={student_id}"], self.home, self.env)
        return time.monotonic()

    def submit_as(self, file_name: str) -> None:
        """Hand in ada's notebook under another file name (and nothing else)."""
        folder = self.home / ASSIGNMENT
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        shutil.copy(SAMPLE_CLASS / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder / file_name)
        run(["nbgrader", "submit", ASSIGNMENT, f"--student={ME}"], self.home, self.env)

    def fetch_pages(self) -> dict[str, str]:
        """Every feedback page `nbgrader fetch_feedback` brings: 'timestamp/name' -> text."""
        run(["nbgrader", "fetch_feedback", ASSIGNMENT, f"--student={ME}"], self.home, self.env)
        folder = self.home / ASSIGNMENT / "feedback"
        return {
            str(page.relative_to(folder)): html.unescape(
                re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))
            )
            for page in folder.glob("*/*.html")
        }

    def fetch_feedback(self) -> str:
        """The newest feedback page `nbgrader fetch_feedback` brings, as plain text."""
        run(["nbgrader", "fetch_feedback", ASSIGNMENT, f"--student={ME}"], self.home, self.env)
        pages = sorted((self.home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
        assert pages, "no feedback fetched"
        return html.unescape(re.sub(r"<[^>]+>", "", pages[-1].read_text(encoding="utf-8")))


def nbgrader_now() -> str:
    """A timestamp as `nbgrader submit` writes it."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def inbound_name(
    exchange: Path, student: str, tag: str, assignment: str = ASSIGNMENT, stamp: str = ""
) -> Path:
    """Where `nbgrader submit` puts `student`'s hand-in of `stamp` (default: now)."""
    stamp = stamp or nbgrader_now()
    return exchange / COURSE_ID / "inbound" / f"{student}+{assignment}+{stamp}+{tag}"


def hand_made_inbound(exchange: Path, student: str, tag: str, stamp: str = "") -> HandMade:
    """A complete submission folder made by hand (as a student may: they own theirs)."""
    stamp = stamp or nbgrader_now()
    staging = exchange / f"staging-{tag}"  # outside inbound/, so it arrives whole
    staging.mkdir()
    shutil.copy(SAMPLE_CLASS / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", staging)
    (staging / "timestamp.txt").write_text(stamp)
    (staging / "submission_secret.txt").write_text("0" * 128)
    return HandMade(staging, inbound_name(exchange, student, tag, stamp=stamp), stamp)


@dataclass
class HandMade:
    folder: Path  # where the test adds its hostile part
    name: Path  # then moves it to, in inbound/
    stamp: str

    def arrive(self) -> None:
        self.folder.rename(self.name)


def files_under(folder: Path) -> str:
    """Every byte of every regular file under `folder`, for looking for leaks."""
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_submissions_from_the_exchange_are_collected_graded_and_fed_back(
    service: Service, tmp_path: Path
) -> None:
    expected = expected_scores()
    student = Student(tmp_path / "home", service.exchange)
    mine = service.course / "submitted" / ME / ASSIGNMENT
    # First hand-in: collected, graded as ada's notebook is, feedback released and fetched.
    student.submit("ada")
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"collected {ME}/{ASSIGNMENT}")
    graded = service.next_line(f" {ME}/{ASSIGNMENT}")
    assert graded.startswith(f"graded {ME}/{ASSIGNMENT} {expected['ada', ASSIGNMENT]:g}/"), graded
    assert gradebook_scores(service.course)[(ME, ASSIGNMENT)] == expected[("ada", ASSIGNMENT)]
    # The submission time is when the hand-in arrived, a moment after the time it names.
    inbound = sorted((service.exchange / COURSE_ID / "inbound").iterdir())
    claimed = parse_utc(inbound[-1].name.split("+")[2])
    arrived = parse_utc((mine / "timestamp.txt").read_text())
    assert datetime.timedelta(0) <= arrived - claimed < datetime.timedelta(seconds=60)
    assert (mine / "submission_secret.txt").is_file()  # fetch_feedback needs it
    released = service.next_line(f"feedback {ME}/{ASSIGNMENT}")
    assert released.startswith(f"feedback {ME}/{ASSIGNMENT}: released 1 page"), released
    assert f"Numbers of {ME}" in student.fetch_feedback()

    # A resubmission (ben's mistakes this time) is collected and graded again, with new
    # feedback carrying ben's diagnosis on this student's numbers.
    student.submit("ben")
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"collected {ME}/{ASSIGNMENT}")
    graded = service.next_line(f" {ME}/{ASSIGNMENT}")
    assert graded.startswith(f"graded {ME}/{ASSIGNMENT} {expected['ben', ASSIGNMENT]:g}/"), graded
    assert gradebook_scores(service.course)[(ME, ASSIGNMENT)] == expected[("ben", ASSIGNMENT)]
    assert service.next_line(f"feedback {ME}/{ASSIGNMENT}").startswith(
        f"feedback {ME}/{ASSIGNMENT}: released"
    )
    feedback = student.fetch_feedback()
    assert BEN_SLIP in feedback and f"Numbers of {ME}" in feedback
    collected = (mine / f"{ASSIGNMENT}.ipynb").read_bytes()

    # A link to a secret file, then a FIFO: each refused with its reason, nothing copied.
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET of the instructor")
    linked = hand_made_inbound(service.exchange, ME, "link")
    (linked.folder / "notes.txt").symlink_to(secret)
    linked.arrive()
    refused = service.next_line(f" {ME}/{ASSIGNMENT}")
    assert refused.startswith(f"REFUSED {ME}/{ASSIGNMENT}"), refused
    assert "notes.txt is a symbolic link; links are refused" in refused
    fifo = hand_made_inbound(service.exchange, ME, "fifo")
    os.mkfifo(fifo.folder / "pipe")
    fifo.arrive()
    refused = service.next_line(f" {ME}/{ASSIGNMENT}")
    assert refused.startswith(f"REFUSED {ME}/{ASSIGNMENT}"), refused
    assert "pipe is a special file" in refused

    # A hand-in under another student's name is not theirs: refused (nbgrader only warns).
    student.submit("cyd", student_id="zed")
    refused = service.next_line(f" zed/{ASSIGNMENT}")
    assert refused.startswith(f"REFUSED zed/{ASSIGNMENT}"), refused
    assert f"owned by {ME}, not by zed" in refused
    if os.geteuid() == 0:  # root can also give a folder named for ME to someone else
        given = hand_made_inbound(service.exchange, ME, "given")
        shutil.chown(given.folder, "nobody")
        given.arrive()
        refused = service.next_line(f" {ME}/{ASSIGNMENT}")
        assert f"owned by nobody, not by {ME}" in refused, refused

    # An assignment the gradebook does not know is ignored, said once.
    inbound_name(service.exchange, ME, "x", assignment="no_such").mkdir()
    assert "'no_such': not in the gradebook" in service.next_line("no_such")

    time.sleep(1.0)  # ten more looks: nothing is reported twice
    assert (mine / f"{ASSIGNMENT}.ipynb").read_bytes() == collected
    submitted = service.course / "submitted"
    assert "TOP SECRET" not in files_under(submitted)
    assert not (submitted / "zed").exists()
    assert not [p for p in submitted.rglob(".*") if p.name.startswith((".collecting", ".repl"))]
    assert service.count(f"collected {ME}/") == 2
    assert service.count(f"graded {ME}/") == 2
    assert service.count(f"REFUSED {ME}/") == (3 if os.geteuid() == 0 else 2)
    assert service.count("REFUSED zed/") == 1
    assert sum("no_such" in line for line in service.seen) == 1


def test_the_service_grades_arrivals_and_resubmissions_once_each(service: Service) -> None:
    course = service.course
    arriving = course / "submitted" / "ada" / "arriving"  # not an assignment's name
    shutil.copytree(SAMPLE_CLASS / "ada" / ASSIGNMENT, arriving)
    arriving.rename(arriving.with_name(ASSIGNMENT))  # lands whole, at once
    first = service.next_line(f" ada/{ASSIGNMENT}")
    assert first.startswith("graded ada/"), first
    assert gradebook_scores(course)[("ada", ASSIGNMENT)] == expected_scores()[("ada", ASSIGNMENT)]
    # Copied by hand, without nbgrader's submission_secret.txt: its feedback cannot be
    # released, and the service says so.
    failed = service.next_line(f" ada/{ASSIGNMENT}")
    assert failed.startswith(f"FAILED feedback ada/{ASSIGNMENT} (tried 2 times)"), failed
    # A resubmission (the same work, saved again) is graded again.
    notebook = course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    (course / "new").write_text(notebook.read_text() + " ")
    (course / "new").replace(notebook)
    service.next_line("graded ada/")
    assert gradebook_scores(course)[("ada", ASSIGNMENT)] == expected_scores()[("ada", ASSIGNMENT)]
    # A broken submission is reported once, not retried until it changes.
    broken = course / "submitted" / "cyd" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text("{not json")
    failed = service.next_line(f" cyd/{ASSIGNMENT}")
    assert failed.startswith("FAILED cyd/"), failed
    # A folder refused before anything in it is read (a link to a file that does not
    # exist) is also reported once, not at every look.
    linked = course / "submitted" / "dot" / ASSIGNMENT
    linked.mkdir(parents=True)
    (linked / f"{ASSIGNMENT}.ipynb").symlink_to(course / "no-such-file")
    failed = service.next_line(f" dot/{ASSIGNMENT}")
    assert failed.startswith("FAILED dot/") and "link" in failed, failed
    time.sleep(1.0)
    assert service.count("FAILED cyd/") == 1, "".join(service.seen)
    assert service.count("FAILED dot/") == 1, "".join(service.seen)
    assert service.count("graded ada/") == 2, "".join(service.seen)


def test_unfinished_hard_linked_or_oversized_inbound_folders(
    service: Service, tmp_path: Path
) -> None:
    before = {start: service.count(start) for start in ("collected", "graded", "REFUSED")}
    # Half written (nbgrader submit writes timestamp.txt and the secret last): left alone
    # until complete, then collected and graded.
    unfinished = hand_made_inbound(service.exchange, ME, "late")
    for name in ("timestamp.txt", "submission_secret.txt"):
        (unfinished.folder / name).unlink()
    unfinished.arrive()
    arrived, stamp = unfinished.name, unfinished.stamp
    time.sleep(1.0)  # ten looks
    assert service.count("collected") == before["collected"], "".join(service.seen)
    (arrived / "submission_secret.txt").write_text("1" * 128)
    (arrived / "timestamp.txt").write_text(stamp)
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"collected {ME}/{ASSIGNMENT}")
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"graded {ME}/{ASSIGNMENT}")
    # A hard link to a secret file, and more files than the budget allows: refused.
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET, linked")
    linked = hand_made_inbound(service.exchange, ME, "hard")
    os.link(secret, linked.folder / "notes.txt")
    linked.arrive()
    refused = service.next_line(f"REFUSED {ME}/")
    assert "notes.txt is hard-linked elsewhere" in refused, refused
    crowded = hand_made_inbound(service.exchange, ME, "many")
    for i in range(200):
        (crowded.folder / f"page{i}.txt").write_text("x")
    crowded.arrive()
    refused = service.next_line(f"REFUSED {ME}/")
    assert "more than 200 files (c.Budgets.max_submission_files)" in refused, refused
    # A timestamp.txt that is not the name's (a late hand-in dressed as early): refused.
    redated = hand_made_inbound(service.exchange, ME, "redated")
    (redated.folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    redated.arrive()
    refused = service.next_line(f"REFUSED {ME}/")
    assert "timestamp.txt says '2026-01-01 00:00:00.000000 UTC', unlike the" in refused, refused
    # A refused folder dated far ahead does not hide the student's real hand-ins.
    future = hand_made_inbound(service.exchange, ME, "future", stamp="2099-01-01 00:00:00 UTC")
    (future.folder / "notes.txt").symlink_to(secret)
    future.arrive()
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"REFUSED {ME}/{ASSIGNMENT}")
    hand_made_inbound(service.exchange, ME, "real").arrive()
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"collected {ME}/{ASSIGNMENT}")
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"graded {ME}/{ASSIGNMENT}")
    time.sleep(0.5)
    assert "TOP SECRET" not in files_under(service.course / "submitted")
    assert service.count("collected") == before["collected"] + 2
    assert service.count("REFUSED") == before["REFUSED"] + 4


def test_inbound_names_are_read_as_nbgrader_reads_them() -> None:
    from autograder.service.collect import parse_inbound_name

    stamp = "2026-12-01 07:00:00.123456 UTC"
    record = parse_inbound_name(f"a+b+{ASSIGNMENT}+{stamp}+Zm9vYmFy")
    assert record is not None
    assert (record.student, record.assignment) == ("a+b", ASSIGNMENT)  # ids may hold '+'
    assert record.timestamp == datetime.datetime(2026, 12, 1, 7, 0, 0, 123456)  # UTC, naive
    plain = parse_inbound_name(f"ada+{ASSIGNMENT}+{stamp}")  # add_random_string = False
    assert plain is not None and plain.student == "ada"
    assert parse_inbound_name("ada+notes") is None
    assert parse_inbound_name(f"ada+{ASSIGNMENT}+yesterday+x") is None


def test_an_ungradable_hand_in_is_refused_told_and_escaped(
    service: Service, tmp_path: Path
) -> None:
    """A misnamed notebook whose name drives the terminal: the good hand-in stands, the
    student fetches a page saying why, and the instructor's terminal sees escapes."""
    student = Student(tmp_path / "home", service.exchange)
    student.submit("ada")
    service.next_line(f"collected {ME}/{ASSIGNMENT}")  # (past lines of earlier tests)
    assert service.next_line(f" {ME}/{ASSIGNMENT}").startswith(f"graded {ME}/{ASSIGNMENT}")
    assert service.next_line(f"feedback {ME}/{ASSIGNMENT}").startswith(
        f"feedback {ME}/{ASSIGNMENT}: released"
    )
    mine = service.course / "submitted" / ME / ASSIGNMENT
    good = (mine / f"{ASSIGNMENT}.ipynb").read_bytes()
    evil = "\x1bc\x1b7graded everyone 10\x08\x08\u202e.ipynb"  # reset, cursor, bidi
    student.submit_as(evil)
    refused = service.next_line(f"REFUSED {ME}/{ASSIGNMENT}")
    assert "cannot be graded" in refused and f"{ASSIGNMENT}.ipynb is missing" in refused
    assert "found \\x1bc\\x1b7graded everyone 10\\x08\\x08\\u202e.ipynb" in refused, refused
    # An inbound folder whose name is escape sequences: named, escaped.
    (service.exchange / COURSE_ID / "inbound" / "\x1b]0;owned\x07\x1b[1;1H").mkdir()
    ignored = service.next_line("ignoring inbound/")
    assert "inbound/\\x1b]0;owned\\x07\\x1b[1;1H: not student+assignment" in ignored, ignored
    time.sleep(0.5)
    assert not [line for line in service.seen if "\x1b" in line or "\u202e" in line]
    assert (mine / f"{ASSIGNMENT}.ipynb").read_bytes() == good  # the good one stands
    pages = student.fetch_pages()
    told = [text for name, text in pages.items() if name.endswith("everyone 10\x08\x08\u202e.html")]
    assert told, sorted(pages)
    assert "this hand-in was not graded" in told[0] and f"{ASSIGNMENT}.ipynb is missing" in told[0]
    assert "stands: it is the one graded" in told[0]


def test_a_late_hand_in_is_late_everywhere(service: Service, tmp_path: Path) -> None:
    """After the due date (from the gradebook): said late by the service, penalised by
    nbgrader's plugin from the arrival time, and the feedback shows the penalty."""
    from nbgrader.api import Gradebook

    due = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(hours=3)
    with Gradebook(f"sqlite:///{service.course / 'gradebook.db'}", COURSE_ID) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    student = Student(tmp_path / "home", service.exchange)
    student.submit("ada")
    collected = service.next_line(f"collected {ME}/{ASSIGNMENT}")  # (past earlier lines)
    assert ", LATE by 3 h 00 min (due " in collected, collected
    graded = service.next_line(f" {ME}/{ASSIGNMENT}")
    assert graded.startswith(f"graded {ME}/{ASSIGNMENT} "), graded
    with Gradebook(f"sqlite:///{service.course / 'gradebook.db'}", COURSE_ID) as gb:
        submission = gb.find_submission(ASSIGNMENT, ME)
        assert 3 * 3600 <= submission.total_seconds_late < 3 * 3600 + 120
        # penalty_method "zero": the whole score is taken off
        assert submission.late_submission_penalty == submission.score > 0
    assert service.next_line(f"feedback {ME}/{ASSIGNMENT}").startswith(
        f"feedback {ME}/{ASSIGNMENT}: released"
    )
    page = student.fetch_feedback()
    assert "Late submission penalty" in page  # nbgrader's own line, for the penalty
    assert re.search(r"Handed in late: 3 h 0[0-2] min after the due date", page), page[:500]


def graded_state(course: Path) -> dict[str, object]:
    """Everything a grading run leaves that a learner or instructor reads: each grade and
    comment in the gradebook, the autograded notebooks and the feedback pages (course
    paths taken out)."""
    from nbgrader.api import Gradebook

    state: dict[str, object] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        for submission in gb.find_assignment(ASSIGNMENT).submissions:
            for notebook in submission.notebooks:
                key = f"{submission.student.id}/{notebook.name}"
                state[f"grades {key}"] = sorted(
                    (g.name, g.auto_score, g.manual_score, g.max_score, g.needs_manual_grade)
                    for g in notebook.grades
                )
                state[f"comments {key}"] = sorted((c.name, c.comment) for c in notebook.comments)
            state[f"score {submission.student.id}"] = submission.score
    for folder in ("autograded", "feedback"):
        for path in sorted((course / folder).rglob("*")):
            if path.is_file() and path.name != "submission_secret.txt":
                text = path.read_text(errors="replace").replace(str(course), "COURSE")
                state[f"{folder}/{path.relative_to(course / folder)}"] = text
    return state


def test_grading_together_gives_what_grading_one_by_one_gives(tmp_path: Path) -> None:
    """The service grades what arrived together in one run (one gradebook engine, nbgrader's
    caches shared); the same
    hand-ins graded one run each give the very same grades, comments, autograded notebooks
    and feedback pages."""
    from autograder.authoring.sample_class import released_through_exchange, submit_sample_class
    from autograder.grading.runner import Grader
    from autograder.sandbox.workers import Worker, load_config, worker_log_dir
    from autograder.service.release_feedback import Releaser

    courses = {}
    for way in ("together", "one_by_one"):
        (tmp_path / way).mkdir()
        course, _ = released_through_exchange(tmp_path / way, ASSIGNMENT)
        submit_sample_class(course, [ASSIGNMENT])
        for folder in (course / "submitted").glob(f"*/{ASSIGNMENT}"):  # as nbgrader submit
            (folder / "submission_secret.txt").write_text(f"secret of {folder.parent.name}")
        courses[way] = course
    students = sorted(p.name for p in (courses["together"] / "submitted").iterdir())
    assert len(students) >= 5
    worker = Worker(Sandbox(config=load_config(courses["together"])), worker_log_dir(tmp_path))
    worker.start()
    try:
        together = Grader(courses["together"], jobs=1, workers=[worker], persistent=True)
        outcomes = list(together.run())
        assert sorted(o.submission.student for o in outcomes if o.status == "graded") == students
        for student in students:
            alone = Grader(
                courses["one_by_one"], students=[student], jobs=1, workers=[worker], persistent=True
            )
            assert [o.status for o in alone.run()] == ["graded"]
    finally:
        worker.stop(now=True)
    for course in courses.values():
        with Releaser(course) as releaser:
            for student in students:
                assert releaser.release(ASSIGNMENT, student) == 1
            renderer = releaser.renderer.pid
        assert renderer is not None
        with pytest.raises(ProcessLookupError):  # no child left holding this process's pipes
            os.kill(renderer, 0)
    together_state, one_by_one_state = (graded_state(c) for c in courses.values())
    assert len(together_state) > 4 * len(students)
    assert together_state == one_by_one_state
    expected = expected_scores()
    for student in students:
        assert together_state[f"score {student}"] == expected[(student, ASSIGNMENT)]
