"""A ✗ does not stop Restart and Run All, and grading still fails closed: an exercise done
to the end with one wrong answer, run in JupyterLab with "Restart Kernel and Run All
Cells", runs to its last cell; the wrong part still scores 0 (nbgrader's score of the test
cell as saved, and the grader's own verdict on the notebook's cells)."""

from __future__ import annotations

import getpass
import random
import re
import sys

import nbformat
import pytest
from nbgrader.utils import determine_grade
from playwright.sync_api import expect

from autograder.core.givens import PUBLIC
from autograder.grading.trusted import givens_for, instructor_plan, verdicts

from .conftest import REPO, LabServer, NotebookOpener, screenshot_path

sys.path.insert(0, str(REPO / "tests" / "specs"))
from test_spec_trusted import instructor_cells  # noqa: E402  (tests/specs is no package)

pytestmark = pytest.mark.browser

NAME = "03_a_neuron_by_hand"
WRONG = "dL_da = a - y"  # the 2 of the square dropped: a named ✗
PATH = f"run_all/{NAME}.ipynb"


def _done_with_one_wrong_answer(server: LabServer) -> nbformat.NotebookNode:
    """The solution as a learner ends it (solution markers gone), dL_da wrong; written
    into the server's root."""
    nb = nbformat.read(REPO / "solutions" / NAME / f"{NAME}.ipynb", as_version=4)
    for cell in nb.cells:
        cell.source = re.sub(r"^### (BEGIN|END) SOLUTION\n?", "", cell.source, flags=re.M)
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "dL_da":
            cell.source = f"# dL_da = ...\n{WRONG}"
    target = server.root / PATH
    target.parent.mkdir(exist_ok=True)
    nbformat.write(nb, target)
    return nb


def _index(nb: nbformat.NotebookNode, grade_id: str) -> int:
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    return ids.index(grade_id)


def test_a_wrong_answer_does_not_stop_restart_and_run_all(
    lab_server: LabServer, notebooks: NotebookOpener
) -> None:
    nb = _done_with_one_wrong_answer(lab_server)
    check = _index(nb, "correct_dL_da")
    notebook = notebooks.open(PATH)
    notebook.wait_for_kernel_idle()
    notebook.clear_all_outputs()
    notebook.menu("Kernel", "Restart Kernel and Run All Cells…")  # its dialog: accepted
    last = notebook.code_cells.last.locator(".jp-InputPrompt")
    # the last cell runs: Run All went on past the ✗ (each wait lasts while the kernel works)
    notebook.while_working(
        lambda ms: expect(last).to_have_text(re.compile(r"\[\d+\]:"), timeout=ms), "Run All"
    )
    notebook.wait_for_kernel_idle()
    assert all(re.fullmatch(r"\[\d+\]:", p) for p in notebook.prompts()), notebook.prompts()
    shown = " ".join(notebook.cell(check).locator(".jp-OutputArea-output").all_text_contents())
    assert "✗" in shown and "AnswerMismatch" in shown, shown
    assert "Traceback" not in shown, shown
    last_check = notebook.cell(_index(nb, "correct_dL_db"))
    expect(last_check.locator(".jp-OutputArea-output").last).to_contain_text("dL/db")
    notebook.cell(check).scroll_into_view_if_needed()
    notebook.page.locator(".jp-NotebookPanel").screenshot(path=screenshot_path("run_all_wrong"))
    notebook.save()

    # graded, the part earns nothing: nbgrader scores the saved test cell 0 (its output is
    # an error), and the grader's verdict, judged from the cells' text, fails it
    saved = nbformat.reads((lab_server.root / PATH).read_text(encoding="utf-8"), as_version=4)
    assert [o.output_type for o in saved.cells[check].outputs][-1] == "error"
    assert determine_grade(saved.cells[check]) == (0, 1.0)
    right = saved.cells[_index(nb, "correct_h")]
    assert determine_grade(right) == (1.0, 1.0)
    trusted = instructor_plan(instructor_cells(NAME), saved.cells, random.Random(1))
    found = verdicts(trusted, saved.cells, [], givens_for(NAME, getpass.getuser(), PUBLIC))
    assert not any(v.passed for v in found[check]), found[check]
    assert all(v.passed for v in found[_index(nb, "correct_h")])
