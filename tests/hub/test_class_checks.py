"""Live checks in `make class`, as students see them in Debian's Chromium; and, first, no
answer key anywhere a student account can read or import.

A student of the class hub (conftest's `hub`: `make class`'s serve.py, so the students'
environment holds only the answer-free `autograder`, and the hub runs the check service)
opens the sample class's answered notebook in their JupyterLab, with their own numbers
(ada's right answers, ben's with the dropped factor 2), and runs every cell. The text of
each check cell's output in the page must be what self-study says for the same notebook:
the same notebook run in a kernel of the course's own environment, judging locally, for
the same learner and course id.

The answer search runs as a student account: `grep` over the whole students' environment
and the exchange's released files for the answer key's text (`check_hub.answer_texts`),
which must find it in a copy of the specs that account may read; and the environment's
Python, as that account, imports the answer-free `autograder` and none of the key.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import stall_guard
from check_hub import REPO, answer_texts, open_folder
from class_hub import COURSE_ID, STUDENT_ENV, ClassHub, log_in
from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.browser]

IMPORTS = """
import importlib, autograder
print(autograder.__file__)
for name in ["autograder.specs", "autograder.diagnosis.judge", "autograder.answers",
             "autograder.grading", "autograder.core.spec", "autograder.core.engine",
             "autograder.learner.check", "autograder_shim", "autograder.cli"]:
    try:
        importlib.import_module(name)
        print("IMPORTED", name)
    except ImportError:
        pass
"""


def test_a_student_finds_no_answer_in_the_class(hub: ClassHub) -> None:
    student = hub.students[0]
    needles = [n for n in answer_texts() if "\n" not in n]  # grep -F: one line each
    assert len(needles) > 100
    outbound = hub.exchange / COURSE_ID / "outbound"
    with open_folder() as shared:
        patterns = shared / "needles.txt"
        patterns.write_text("\n".join(needles) + "\n")
        key = shared / "key"
        shutil.copytree(REPO / "autograder" / "specs", key)
        subprocess.run(["chmod", "-R", "go+rX", str(shared)], check=True)
        grep = hub.as_user(student, "grep", "-rlF", "-f", str(patterns),
                           str(STUDENT_ENV), str(outbound), str(key))  # fmt: skip
        found = grep.stdout.split()
        assert grep.returncode == 0, grep.stderr  # 0: found (in the key's copy at least)
        assert [f for f in found if f.startswith(str(key))], "grep found no answer at all"
        assert [f for f in found if not f.startswith(str(key))] == []
    imported = hub.check_as(student, "python", "-c", IMPORTS)
    assert imported.splitlines()[0].startswith(str(STUDENT_ENV)), imported
    assert "IMPORTED" not in imported, imported
    listed = hub.check_as(student, "python", "-m", "pip", "list", "--format=freeze")
    assert "backward-course" not in listed and "backward_course" not in listed


def check_cells(notebook: Path) -> dict[int, str]:
    """Index among all cells -> source, of the cells that run a check."""
    cells = nbformat.read(notebook, as_version=4).cells
    return {
        i: c.source for i, c in enumerate(cells) if c.cell_type == "code" and ".check" in c.source
    }


def self_study(user: str, notebook: Path, tmp: Path) -> dict[int, tuple[str, str | None]]:
    """Cell index -> (printed, error) of every code cell, in a kernel of the course's own
    environment (judging in the kernel) as `user` of this course."""
    from check_hub import StudentKernel, StudentsEnvironment

    spec = tmp / "kernels" / "students"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "course"}))
    (tmp / "home").mkdir()
    (tmp / "home" / "nbgrader_config.py").write_text(  # whose numbers: this course's
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
    )
    kernel = StudentKernel(StudentsEnvironment(tmp), "", "")
    kernel.env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp),
                  "JUPYTERHUB_USER": user, "LANG": "C.UTF-8", "MPLBACKEND": "agg"}  # fmt: skip
    outputs = {}
    with kernel as k:
        for i, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
            if cell.cell_type == "code":
                outputs[i] = k.run(cell.source)
    return outputs


RUN_PROMPTS = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]" \
    ".filter(e => /\\[\\d+\\]/.test(e.textContent)).length"  # fmt: skip


def kernel_ready(hub: ClassHub, page: Page) -> None:
    """Wait until the open notebook's kernel is idle (for as long as the class works). A
    server just started may not have listed its kernels yet when the notebook opens, and
    JupyterLab then asks which one to start: its choice (the notebook's own, the students'
    Python) is accepted."""
    idle = page.get_by_text(re.compile(r"\| Idle$"))
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    watch = stall_guard.Watch("the notebook's kernel, until idle", hub.signs())
    calm = 0
    while calm < 3:  # idle, with no question asked, three times in a row
        watch.check()
        if accept.count() and accept.first.is_visible():
            accept.first.click()
            calm = 0
        elif idle.count():
            calm += 1
        else:
            calm = 0
        page.wait_for_timeout(500)


def run_each(hub: ClassHub, page: Page, notebook: Path) -> None:
    """Run the open notebook's cells one by one, as a student does with Shift+Enter, each
    after the one before has finished (a check that fails raises, and "Run All" would
    stop there)."""
    cells = nbformat.read(notebook, as_version=4).cells
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Escape")  # command mode: Shift+Enter runs and selects the next
    ran = 0
    for cell in cells:
        page.keyboard.press("Shift+Enter")
        if cell.cell_type == "code":
            ran += 1
            hub.patiently(
                lambda ms, ran=ran: page.wait_for_function(
                    f"() => ({RUN_PROMPTS})() >= {ran}", timeout=ms
                ),
                f"code cell {ran}, run",
            )


def shown(page: Page, index: int) -> str:
    """The text of cell `index`'s outputs in the page, one output after another (DOM text:
    a cell scrolled out of view keeps it)."""
    outputs = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea-output")
    return "\n".join(text or "" for text in outputs.all_text_contents())


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("profile", ["ada", "ben"])
def test_checks_in_the_browser_say_what_self_study_says(
    hub: ClassHub, browser: Browser, profile: str, tmp_path: Path
) -> None:
    user = next(s for s in hub.students if s.startswith(profile))
    answered = hub.answered(user, profile)
    hub.check_as(user, "cp", str(answered), f"/home/{user}/checks-{profile}.ipynb")
    expected = self_study(user, answered, tmp_path)
    page = log_in(browser, hub, user)
    try:
        page.goto(f"{hub.url}/user/{user}/lab/tree/checks-{profile}.ipynb?reset")
        hub.patiently(
            lambda ms: page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=ms), "a cell"
        )
        kernel_ready(hub, page)
        try:
            run_each(hub, page, answered)
        except Exception:
            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            print(f"\nthe page when it failed: {tmp_path / 'page.png'}")
            raise
        checks = check_cells(answered)
        assert checks
        seen = {i: shown(page, i) for i in checks}
    finally:
        page.context.close()
    for index in checks:
        printed, error = expected[index]
        want = lines(printed) + lines(error or "")
        assert lines(seen[index]) == want, (index, checks[index], seen[index], want)
    everything = "\n".join(seen.values())
    assert "Not checked" not in everything
    if profile == "ada":
        assert "✓" in everything and "✗" not in everything, everything
    else:
        assert re.search(r"AnswerMismatch: ✗ dL/da = ", everything), everything
