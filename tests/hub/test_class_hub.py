"""A class, end to end, through `make class`'s JupyterHub in Debian's Chromium.

Three students (accounts made for this run, each playing a sample class profile) log in
through the hub's login page, fetch the assignment in the Assignments tab, answer it (ada
right, ben wrong, dee leaves it blank: the sample class's answers with their own numbers,
written into the fetched folder as the student; dee's is the fetched notebook untouched),
Validate, Submit.
Before they hand in, the instructor starts `autograder serve --release-feedback` as their
own ordinary account (in the same sandbox and delegated cgroups as `autograder grade`):
after each Submit its output must say the student's submission was graded, with the
expected score; the seconds from the Submit click to that line are printed (shown with
`pytest -s`), not asserted (speed is measured in benchmarks/service_latency.py). ben then
fetches the feedback the service released in the Assignments tab and reads his diagnosis.
The service is stopped with SIGTERM (exit status 0), and the manual path follows: the
instructor collects (finding what the service collected), regrades everything with
`autograder grade --force` as their ordinary account, grades ada's written answer in
formgrader, releases feedback again; ada fetches it and reads the written answer's point
in her score, which only the release after formgrader can give.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import stall_guard
from class_hub import ASSIGNMENT, COURSE_ID, PROFILES, ClassHub, log_in
from playwright.sync_api import Browser, Page

from autograder.authoring.sample_class import expected_scores

pytestmark = [pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.sandbox]


class ServiceOutput:
    """The lines a running command prints, each with the time it was read; waits on them
    last for as long as the command (and `signs`: the class it serves) works or prints."""

    def __init__(self, process: subprocess.Popen[str], signs: list[stall_guard.Sign]) -> None:
        self.process = process
        self.signs = [stall_guard.cpu_of(process.pid), self.printed, *signs]
        self.lines: list[tuple[float, str]] = []
        self._arrived: queue.Queue[tuple[float, str] | None] = queue.Queue()
        self._ended = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._arrived.put((time.time(), line.rstrip("\n")))
        self._arrived.put(None)

    def printed(self) -> int:
        """How many lines it printed so far (a sign of progress)."""
        return len(self.lines) + self._arrived.qsize()

    def _take(self, timeout: float) -> bool:
        """Move one line read into `lines`, waiting up to `timeout`; False: none came."""
        try:
            item = self._arrived.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return False
        if item is None:
            self._ended = True
            return False
        self.lines.append(item)
        return True

    def wait_for(self, pattern: str) -> tuple[re.Match[str], float]:
        """The first line printed (so far or later, while the service or the class works)
        matching `pattern`, and when it was read."""
        watch = stall_guard.Watch(f"the service printing {pattern!r}", self.signs)
        seen = 0
        while True:
            for arrived, line in self.lines[seen:]:
                if found := re.search(pattern, line):
                    return found, arrived
            seen = len(self.lines)
            if self._ended or (not self._take(stall_guard.POLL_SECONDS) and watch.stalled()):
                state = "ended" if self._ended else watch.message()
                shown = "\n".join(line for _, line in self.lines[-40:])
                raise AssertionError(f"waiting for {pattern!r}: the service {state}:\n{shown}")

    def rest(self) -> str:
        """Everything printed, once the output ended (awaited while lines still come)."""
        stall_guard.wait_until(
            lambda: not self._reader.is_alive(), "the service's output, ending", [self.printed]
        )
        while not self._ended and self._take(0.0):
            pass
        return "\n".join(line for _, line in self.lines)


def stop_service(hub: ClassHub, service: subprocess.Popen[str]) -> int:
    """SIGTERM to the service (as `autograder serve` documents); its exit status."""
    if service.poll() is None:
        hub.signal_command(service, signal.SIGTERM)
        try:  # it finishes the hand-in it grades: as long as it works on it
            return stall_guard.wait(service, "the grading service, stopping")
        except stall_guard.Stalled:
            os.killpg(service.pid, signal.SIGKILL)  # runuser and the service, its own group
            service.wait()
            raise
    return service.returncode


# formgrader (its formgrade.js) saves a score on its input's change event, bound by the
# GradeUI views it makes once the submission's grades are loaded: typed earlier, a score
# is never saved
GRADES_BOUND = "() => !!(window.formgrader && formgrader.grades && formgrader.grades.loaded)"
FORMGRADER_STATE = """() => window.formgrader === undefined ? "no formgrader object" :
    JSON.stringify({init_done: formgrader.loaded, grades_loaded: formgrader.grades?.loaded,
                    comments_loaded: formgrader.comments?.loaded})"""


def open_assignments(hub: ClassHub, page: Page) -> None:
    page.click(".lm-MenuBar-itemLabel:text('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text('Assignment List')")
    hub.patiently(
        lambda ms: page.wait_for_selector("#released_assignments_list", timeout=ms),
        "the assignment list",
    )


def student_turn(
    browser: Browser, hub: ClassHub, user: str, profile: str
) -> tuple[Page, str, float]:
    """Log in, fetch, answer, validate, submit; returns the page, the validation text and
    when Submit was clicked."""
    page = log_in(browser, hub, user)
    open_assignments(hub, page)
    page.click("#released_assignments_list button:text('Fetch')")
    hub.patiently(
        lambda ms: page.wait_for_selector(
            f"#fetched_assignments_list >> text={ASSIGNMENT}", timeout=ms
        ),
        f"{user}'s fetched assignment",
    )
    target = Path(f"/home/{user}") / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert target.exists(), "Fetch put no notebook in the student's home"
    if profile != "dee":  # dee hands in the fetched notebook untouched (blank)
        # the sample class's answers, written into the fetched copy as the student
        answered = hub.answered(user, profile)
        hub.check_as(user, "cp", str(answered), str(target))
    # ?reset: a clean workspace, this notebook alone (an earlier test's notebook, restored
    # from the student's saved workspace, would sit hidden in another tab)
    page.goto(f"{hub.url}/user/{user}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb?reset")
    hub.patiently(lambda ms: page.wait_for_selector(".jp-Notebook", timeout=ms), "the notebook")
    page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog")
    verdict = dialog.get_by_text(re.compile("Validation Results|Success|failed")).first
    hub.patiently(lambda ms: verdict.wait_for(timeout=ms), f"{user}'s validation")
    validation = dialog.inner_text()
    dialog.locator("button").last.click()
    open_assignments(hub, page)
    submit = page.locator("#fetched_assignments_list button:text('Submit')")
    hub.patiently(lambda ms: submit.wait_for(timeout=ms), "the Submit button")
    clicked = time.time()
    submit.click()
    hub.patiently(
        lambda ms: page.wait_for_selector(
            f"#submitted_assignments_list >> text={ASSIGNMENT}", timeout=ms
        ),
        f"{user}'s submission listed",
    )
    return page, validation, clicked


def ben_diagnosis(ben: str) -> str:
    """What ben's dropped factor 2 must be told, with his own numbers."""
    from autograder.core.givens import Site
    from autograder.grading.trusted import givens_for

    given = givens_for(ASSIGNMENT, ben, Site(COURSE_ID))  # this hub's course id
    slip = max(given["w"] * given["x"] + given["b"], 0.0) - given["y"]  # a - y, no 2
    return f"✗ dL/da = {slip:.1f}, but PyTorch gives {2 * slip:.1f}."


def gradebook(hub: ClassHub) -> dict[str, tuple[float, float | None]]:
    """student -> (score, manual score of the written answer) as the course's gradebook has it."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(hub.root_db_url, COURSE_ID) as gb:
        for submission in gb.find_assignment(ASSIGNMENT).submissions:
            notebook = submission.notebooks[0]
            written = [g for g in notebook.grades if g.cell.cell_type == "markdown"]
            found[submission.student.id] = (float(submission.score), written[0].manual_score)
    return found


def written_cell(hub: ClassHub) -> str:
    """The grade id of the assignment's written answer (graded by hand)."""
    from nbgrader.api import Gradebook

    with Gradebook(hub.root_db_url, COURSE_ID) as gb:
        cells = gb.find_notebook(ASSIGNMENT, ASSIGNMENT).grade_cells
        return next(c.name for c in cells if c.cell_type == "markdown")


def submission_notebook_id(hub: ClassHub, student: str) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(hub.root_db_url, COURSE_ID) as gb:
        return str(gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).id)


def fetch_feedback(hub: ClassHub, page: Page, user: str) -> str:
    """Fetch Feedback in the user's Assignments tab; the newest page's path in their home."""
    open_assignments(hub, page)
    page.click("#submitted_assignments_list button:text('Fetch Feedback')")
    home = Path(f"/home/{user}")
    files = stall_guard.wait_until(
        lambda: sorted((home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html")),
        f"Fetch Feedback, into {home / ASSIGNMENT / 'feedback'}",
        hub.signs(),
    )
    return str(files[-1].relative_to(home))


def test_a_class_from_login_to_feedback(hub: ClassHub, browser: Browser) -> None:
    ada, ben, dee = hub.students
    teacher = hub.instructor
    profiles = dict(zip(hub.students, PROFILES, strict=True))
    expected = {
        user: expected_scores()[(profile, ASSIGNMENT)] for user, profile in profiles.items()
    }

    # --- instructor: the warm grading service, as their own ordinary account ------------
    service = hub.start_as(teacher, "autograder", "serve", "--release-feedback")
    output = ServiceOutput(service, hub.signs())  # reads it in a thread from now on
    try:
        output.wait_for(r"^serving ")

        # --- students: log in, fetch, answer, Validate, Submit; graded as they hand in --
        pages = {}
        seconds = {}
        for user, profile in profiles.items():
            pages[user], validation, clicked = student_turn(browser, hub, user, profile)
            if profile == "ada":
                assert "Success" in validation or "passed" in validation, validation
            elif profile == "ben":
                assert ben_diagnosis(user) in validation, validation
            else:
                assert "failed" in validation, validation
            found, arrived = output.wait_for(
                rf"^graded {user}/{ASSIGNMENT} (\S+)/(\S+) (\S+) s after submission$"
            )
            assert float(found[1]) == expected[user], found[0]
            seconds[user] = (arrived - clicked, float(found[3]))
        inbound = sorted(
            p.name.split("+")[0] for p in (hub.exchange / COURSE_ID / "inbound").iterdir()
        )
        assert inbound == sorted(hub.students)
        for user, (from_click, said) in seconds.items():
            print(
                f"\nautograder serve: {user} graded {from_click:.2f} s after the Submit click "
                f"(the service says {said:.2f} s after submission)"
            )

        # --- ben fetches the feedback the service released and reads his diagnosis ------
        output.wait_for(rf"^feedback {ben}/{ASSIGNMENT}: released")
        page = pages[ben]
        page.goto(f"{hub.url}/user/{ben}/files/{fetch_feedback(hub, page, ben)}")
        hub.patiently(
            lambda ms: page.wait_for_selector(f"text={ben_diagnosis(ben)}", timeout=ms),
            "ben's diagnosis on his feedback page",
        )
        for user in hub.students:  # every release done before the service is stopped
            output.wait_for(rf"^feedback {user}/{ASSIGNMENT}: released")
    finally:
        status = stop_service(hub, service)
        printed = output.rest()
    assert status == 0 and printed.endswith("stopping"), f"autograder serve: {status}\n{printed}"
    assert "FAILED" not in printed and "REFUSED" not in printed, printed

    # --- instructor: collect (the service collected every submission already) -----------
    hub.check_as(teacher, "nbgrader", "collect", ASSIGNMENT)
    assert sorted(p.name for p in (hub.course / "submitted").iterdir()) == sorted(hub.students)

    # --- instructor: regrade with `autograder grade` as their own ordinary account --------
    # (in a cgroup subtree delegated to them, as the README tells an administrator);
    # --force: the service graded these already, and a skip would test nothing
    graded = hub.as_user(teacher, "autograder", "grade", ASSIGNMENT, "--force", "--quiet")
    assert graded.returncode == 0, (
        f"STEP grade-as-ordinary-user failed:\n{graded.stdout}\n{graded.stderr}"
    )
    assert f"{len(hub.students)} graded, 0 failed" in graded.stdout, graded.stdout
    assert "noted" not in graded.stdout, (  # e.g. a notebook the sandbox could not run
        f"STEP grade-as-ordinary-user failed:\n{graded.stdout}"
    )
    for student in hub.students:  # every code cell really ran (hand answers alone would
        # score right without running anything: the grader reads them from the source)
        autograded = hub.course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        cells = json.loads(autograded.read_text())["cells"]
        assert all(c["execution_count"] for c in cells if c["cell_type"] == "code"), student
    scores = gradebook(hub)
    assert {u: s for u, (s, _) in scores.items()} == expected

    # --- instructor: grade ada's written answer in formgrader ----------------------------
    page = log_in(browser, hub, teacher)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("requestfailed", lambda r: errors.append(f"{r.method} {r.url}: {r.failure}"))
    page.goto(
        f"{hub.url}/user/{teacher}/formgrader/submissions/{submission_notebook_id(hub, ada)}/"
    )
    score = page.locator(f"input.score#{written_cell(hub)}")
    hub.patiently(lambda ms: score.wait_for(timeout=ms), "formgrader's score input")
    try:
        hub.patiently(
            lambda ms: page.wait_for_function(GRADES_BOUND, timeout=ms), "formgrader's grades"
        )
    except stall_guard.Stalled as stalled:
        state = page.evaluate(FORMGRADER_STATE)
        raise AssertionError(
            f"formgrader's grades were not loaded (its inputs not bound): {state}; the page's "
            f"errors: {errors}\n{stalled}"
        ) from None
    score.fill("1")
    # one request to the instructor's server: the page's step limit (page_steps.STEP_MS)
    with page.expect_response(
        lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"
    ) as saved:
        score.press("Tab")  # formgrader saves on change
    assert saved.value.ok, f"formgrader's save answered {saved.value.status}"
    with_written = (expected[ada] + 1, 1.0)
    stall_guard.wait_until(  # the real condition: the gradebook's row
        lambda: gradebook(hub)[ada] == with_written,
        "formgrader's saved score, in the gradebook",
        hub.signs(),
    )

    # --- instructor: release feedback again (--force: the service's is there already);
    # ada fetches it and reads her score with the written answer's point ----------------
    hub.check_as(teacher, "nbgrader", "generate_feedback", ASSIGNMENT, "--force")
    hub.check_as(teacher, "nbgrader", "release_feedback", ASSIGNMENT)
    page = pages[ada]
    page.goto(f"{hub.url}/user/{ada}/files/{fetch_feedback(hub, page, ada)}")
    hub.patiently(
        lambda ms: page.wait_for_selector(f"text=(Score: {with_written[0]:.1f} / ", timeout=ms),
        "ada's score on her feedback page",
    )
