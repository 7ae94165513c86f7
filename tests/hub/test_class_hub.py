"""A class, end to end, through `make class`'s JupyterHub in Debian's Chromium.

Three students log in through the hub's login page, fetch the assignment in the
Assignments tab, answer it (ada right, ben wrong, dee leaves it blank: their notebooks are
the sample class's, written into the fetched folder as the student; dee's is the fetched
notebook untouched), Validate, Submit.
The instructor collects, grades with `autograder grade` as their own ordinary account,
grades ada's written answer in formgrader, releases feedback; ben fetches it in the
Assignments tab and reads his diagnosis.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from class_hub import ASSIGNMENT, COURSE_ID, REPO, ClassHub
from playwright.sync_api import Browser, Page, sync_playwright

pytestmark = [pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.sandbox]

SAMPLE = REPO / "instructor" / "sample_class"
LONG = 180_000  # ms: a server spawn or a validation on a busy 2-core machine


@pytest.fixture(scope="module")
def hub() -> Iterator[ClassHub]:
    started = ClassHub.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        yield launched
        launched.close()


def log_in(browser: Browser, hub: ClassHub, user: str) -> Page:
    page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")
    page.wait_for_selector(".jp-LabShell", timeout=LONG)
    return page


def open_assignments(page: Page) -> None:
    page.click(".lm-MenuBar-itemLabel:text('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text('Assignment List')")
    page.wait_for_selector("#released_assignments_list", timeout=LONG)


def student_turn(browser: Browser, hub: ClassHub, user: str, profile: str) -> tuple[Page, str]:
    """Log in, fetch, answer, validate, submit; returns the page and the validation text."""
    page = log_in(browser, hub, user)
    open_assignments(page)
    page.click("#released_assignments_list button:text('Fetch')")
    page.wait_for_selector(f"#fetched_assignments_list >> text={ASSIGNMENT}", timeout=LONG)
    target = Path(f"/home/{user}") / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert target.exists(), "Fetch put no notebook in the student's home"
    if profile != "dee":  # dee hands in the fetched notebook untouched (blank)
        # the sample class's answers, written into the fetched copy as the student
        answered = SAMPLE / profile / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        hub.check_as(user, "cp", str(answered), str(target))
    page.goto(f"{hub.url}/user/{user}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")
    page.wait_for_selector(".jp-Notebook", timeout=LONG)
    page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=LONG)
    dialog.get_by_text(re.compile("Validation Results|Success|failed")).first.wait_for(timeout=LONG)
    validation = dialog.inner_text()
    dialog.locator("button").last.click()
    open_assignments(page)
    page.click("#fetched_assignments_list button:text('Submit')")
    page.wait_for_selector(f"#submitted_assignments_list >> text={ASSIGNMENT}", timeout=LONG)
    return page, validation


def ben_diagnosis() -> str:
    """What ben's dropped factor 2 must be told, with his own numbers."""
    from autograder.trusted import givens_for

    given = givens_for(ASSIGNMENT, "ben")
    slip = max(given["w"] * given["x"] + given["b"], 0.0) - given["y"]  # a - y, no 2
    return f"✗ dL/da = {slip:.1f}, but PyTorch gives {2 * slip:.1f}."


def gradebook(hub: ClassHub) -> dict[str, tuple[float, float | None]]:
    """student -> (score, manual score of the written answer) as the course's gradebook has it."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", COURSE_ID) as gb:
        for submission in gb.find_assignment(ASSIGNMENT).submissions:
            notebook = submission.notebooks[0]
            written = [g for g in notebook.grades if g.cell.cell_type == "markdown"]
            found[submission.student.id] = (float(submission.score), written[0].manual_score)
    return found


def written_cell(hub: ClassHub) -> str:
    """The grade id of the assignment's written answer (graded by hand)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", COURSE_ID) as gb:
        cells = gb.find_notebook(ASSIGNMENT, ASSIGNMENT).grade_cells
        return next(c.name for c in cells if c.cell_type == "markdown")


def submission_notebook_id(hub: ClassHub, student: str) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", COURSE_ID) as gb:
        return str(gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).id)


def test_a_class_from_login_to_feedback(hub: ClassHub, browser: Browser) -> None:
    ada, ben, dee = hub.students
    teacher = hub.instructor

    # --- students: log in, fetch, answer, Validate, Submit --------------------------
    pages = {}
    for user, profile in zip(hub.students, ("ada", "ben", "dee"), strict=True):
        pages[user], validation = student_turn(browser, hub, user, profile)
        if profile == "ada":
            assert "Success" in validation or "passed" in validation, validation
        elif profile == "ben":
            assert ben_diagnosis() in validation, validation
        else:
            assert "failed" in validation, validation
    inbound = sorted(p.name.split("+")[0] for p in (hub.exchange / COURSE_ID / "inbound").iterdir())
    assert inbound == sorted(hub.students)

    # --- instructor: collect -----------------------------------------------------
    hub.check_as(teacher, "nbgrader", "collect", ASSIGNMENT)
    assert sorted(p.name for p in (hub.course / "submitted").iterdir()) == sorted(hub.students)

    # --- instructor: grade with `autograder grade` as their own ordinary account ------
    # (in a cgroup subtree delegated to them, as the README tells an administrator)
    graded = hub.as_user(teacher, "autograder", "grade", ASSIGNMENT, "--quiet")
    assert graded.returncode == 0, (
        f"STEP grade-as-ordinary-user failed:\n{graded.stdout}\n{graded.stderr}"
    )
    assert "noted" not in graded.stdout, (  # e.g. a notebook the sandbox could not run
        f"STEP grade-as-ordinary-user failed:\n{graded.stdout}"
    )
    for student in hub.students:  # every code cell really ran (hand answers alone would
        # score right without running anything: the grader reads them from the source)
        autograded = hub.course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        cells = json.loads(autograded.read_text())["cells"]
        assert all(c["execution_count"] for c in cells if c["cell_type"] == "code"), student
    scores = gradebook(hub)
    assert {u: s for u, (s, _) in scores.items()} == {ada: 10.0, ben: 6.0, dee: 0.0}

    # --- instructor: grade ada's written answer in formgrader ----------------------------
    page = log_in(browser, hub, teacher)
    page.goto(
        f"{hub.url}/user/{teacher}/formgrader/submissions/{submission_notebook_id(hub, ada)}/"
    )
    score = page.locator(f"input.score#{written_cell(hub)}")
    score.wait_for(timeout=LONG)
    score.fill("1")
    score.press("Tab")  # formgrader saves on change
    for _ in range(60):
        if gradebook(hub)[ada] == (11.0, 1.0):
            break
        page.wait_for_timeout(500)
    assert gradebook(hub)[ada] == (11.0, 1.0)

    # --- instructor: release feedback; ben fetches it and reads his diagnosis ------------
    hub.check_as(teacher, "nbgrader", "generate_feedback", ASSIGNMENT)
    hub.check_as(teacher, "nbgrader", "release_feedback", ASSIGNMENT)
    page = pages[ben]
    open_assignments(page)
    page.click("#submitted_assignments_list button:text('Fetch Feedback')")
    feedback_dir = Path(f"/home/{ben}") / ASSIGNMENT / "feedback"
    page.wait_for_timeout(3000)
    files = sorted(feedback_dir.glob(f"*/{ASSIGNMENT}.html"))
    assert files, f"no feedback fetched into {feedback_dir}"
    relative = files[-1].relative_to(Path(f"/home/{ben}"))
    page.goto(f"{hub.url}/user/{ben}/files/{relative}")
    page.wait_for_selector(f"text={ben_diagnosis()}", timeout=LONG)
