"""An exercise done in JupyterLab as a learner does it: a wrong hand answer, the feedback
that says what went wrong, the right answer and its check mark, then nbgrader's Validate.
"""

from __future__ import annotations

import getpass
import json
import re

import pytest
from playwright.sync_api import expect

from autograder.core.verdict import format_value
from autograder.diagnosis.references import reference_quantities
from autograder.specs import learner_givens

from .conftest import REPO, NotebookOpener, screenshot_path

pytestmark = pytest.mark.browser

EXERCISE = "exercises/03_a_neuron_by_hand/03_a_neuron_by_hand.ipynb"
# The kernel runs as this user, so the checker uses this learner's own numbers.
H = reference_quantities(
    "03_a_neuron_by_hand", learner_givens("03_a_neuron_by_hand", getpass.getuser())
)["h"].value


def grade_id_index(grade_id: str) -> int:
    """Index of the cell whose nbgrader grade_id is `grade_id` (in the repository's copy)."""
    cells = json.loads((REPO / EXERCISE).read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return index
    raise AssertionError(f"{EXERCISE} has no cell with grade_id {grade_id!r}")


def test_wrong_then_right_hand_answer_and_validate(notebooks: NotebookOpener) -> None:
    answer, check = grade_id_index("h"), grade_id_index("correct_h")
    assert check == answer + 1, "the check cell must sit right under the answer cell"
    notebook = notebooks.open(EXERCISE)
    page = notebook.page

    # the setup cells above the answer: import the checker, define x, w, b, y
    notebook.select_cell(answer)
    notebook.menu("Run", "Run All Above Selected Cell")
    expect(notebook.cell(grade_id_index("setup")).locator(".jp-InputPrompt")).to_have_text(
        re.compile(r"\[\d+\]:")
    )
    expect(notebook.cell(grade_id_index("given")).locator(".jp-InputPrompt")).to_have_text(
        re.compile(r"\[\d+\]:")
    )
    notebook.wait_for_kernel_idle()

    # the verdict is the check's last output (a slow check's "working" line before it is
    # emptied when the check ends)
    feedback = notebook.cell(check).locator(".jp-OutputArea-output").last

    # a wrong answer: right size, wrong sign (arithmetic: a bare number earns nothing)
    notebook.type_into_cell(answer, "h = -(w * x + b)")
    notebook.run_selected_and_advance()  # runs the answer, selects the check cell
    expect(notebook.cell(check)).to_have_class(re.compile(r"\bjp-mod-active\b"))
    notebook.run_selected_and_advance()  # runs the check
    notebook.while_working(
        lambda ms: expect(feedback).to_contain_text(format_value(-H), timeout=ms), "the check"
    )
    text = " ".join(feedback.all_text_contents())
    assert "✗" in text, text
    assert f"PyTorch gives {format_value(H)}" in text, text
    assert "sign" in text, text
    assert "Traceback" not in text, f"the learner sees a traceback instead of feedback: {text}"
    notebook.cell(check).scroll_into_view_if_needed()
    page.locator(".jp-NotebookPanel").screenshot(path=screenshot_path("exercise_feedback"))

    # the right answer, written as arithmetic
    notebook.type_into_cell(answer, "h = w * x + b")
    notebook.run_selected_and_advance()
    notebook.run_selected_and_advance()
    notebook.while_working(
        lambda ms: expect(feedback).to_contain_text("✓", timeout=ms), "the check"
    )
    expect(feedback).to_contain_text(f"h = {format_value(H)} matches PyTorch")
    expect(feedback).not_to_contain_text("✗")
    notebook.wait_for_kernel_idle()
    notebook.cell(check).scroll_into_view_if_needed()
    page.locator(".jp-NotebookPanel").screenshot(path=screenshot_path("exercise_correct"))

    # nbgrader's Validate button: saves, runs the notebook, reports in a dialog
    validate = notebook.panel.locator(".jp-Toolbar .validate-button")
    expect(validate).to_be_visible()
    expect(validate).to_contain_text("Validate")
    validate.click()
    dialog = page.locator(".jp-Dialog")
    # nbgrader executes the whole notebook in a new kernel of the server's
    notebook.while_working(lambda ms: expect(dialog).to_be_visible(timeout=ms), "Validate")
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("Validation Results")
    body = dialog.locator(".jp-Dialog-body")
    # the other answers are still "raise NotImplementedError()": their checks fail
    expect(dialog.locator(".validation-failed")).to_be_visible()
    expect(body).to_contain_text("The following cell failed")
    expect(body).to_contain_text('exercise.check("a")')
    expect(body).not_to_contain_text('exercise.check("h")')
    page.screenshot(path=screenshot_path("exercise_validate"))
    dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
    expect(dialog).to_have_count(0)
