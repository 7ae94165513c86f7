"""Every lesson, run in JupyterLab in Chromium as a learner runs it, and its widgets used.

For each `course/NN_*.ipynb`: open it, clear the stored outputs, Run > Run All Cells,
wait until every code cell has run; then no error output, the plots are there, every
widget rendered, and a screenshot of the whole notebook goes to
`artifacts/screenshots/<lesson>.png`. The widget tests then move the sliders and press
the buttons of the executed lessons and read the read-outs the kernel sends back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from .conftest import REPO, Notebook, NotebookOpener, screenshot_path

pytestmark = pytest.mark.browser

LESSONS = sorted(p.stem for p in (REPO / "course").glob("[0-9][0-9]_*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stored_mime_types(lesson: str) -> set[str]:
    notebook = json.loads((REPO / "course" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
    return {
        mime
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        for mime in output.get("data", {})
    }


def draws_pictures(lesson: str) -> bool:
    """Plots (stored PNGs) or widgets (which draw their picture when they render)."""
    return bool(stored_mime_types(lesson) & {"image/png", WIDGET_VIEW})


def test_there_are_lessons() -> None:
    assert len(LESSONS) >= 7, LESSONS


class ExecutedLessons:
    """Each lesson opened and run once per module, shared by its run test and widget test.

    Before running, the stored page is looked at too (what a learner sees on opening
    the lesson): its text and its accessibility violations are kept in `stored`."""

    def __init__(self, opener: NotebookOpener) -> None:
        self.opener = opener
        self.notebooks: dict[str, Notebook] = {}
        self.run_seconds: dict[str, float] = {}
        self.stored: dict[str, tuple[str, list[dict[str, Any]]]] = {}

    def get(self, lesson: str) -> Notebook:
        if lesson not in self.notebooks:
            notebook = self.opener.open(f"course/{lesson}.ipynb")
            self.notebooks[lesson] = notebook
            notebook.screenshot(f"{lesson}-stored")
            self.stored[lesson] = (notebook.panel.inner_text(), notebook.axe_violations())
            self.run_seconds[lesson] = notebook.run_all()
        return self.notebooks[lesson]

    def done(self, lesson: str) -> None:
        """Close the lesson's tab and shut its kernel down (keeps memory bounded)."""
        notebook = self.notebooks.pop(lesson, None)
        if notebook is not None:
            self.opener.close(notebook)


@pytest.fixture(scope="module")
def lessons(module_notebooks: NotebookOpener) -> Iterator[ExecutedLessons]:
    executed = ExecutedLessons(module_notebooks)
    yield executed
    for lesson in list(executed.notebooks):
        executed.done(lesson)


# Lessons whose widgets a test below drives: keep them open after their run test (the
# widget test runs right after it: tests/browser/conftest.py orders this module's tests by
# their `lesson`, so one lesson is open at a time, in one loaded JupyterLab page).
WIDGET_LESSONS = {
    "01_what_a_gradient_is",
    "03_a_neuron_by_hand",
    "04_the_dead_relu",
    "05_three_mechanics",
}


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_in_browser(lessons: ExecutedLessons, lesson: str) -> None:
    notebook = lessons.get(lesson)
    try:
        seconds = lessons.run_seconds[lesson]
        prompts = notebook.prompts()
        numbers = [int(p[1:-2]) for p in prompts]
        assert numbers == list(range(1, len(numbers) + 1)), f"cells ran out of order: {prompts}"

        stored_text, stored_axe = lessons.stored[lesson]
        assert "Error displaying widget" not in stored_text, f"{lesson}: a widget without its still"
        assert not re.search(r"\b[HV]Box\(children=", stored_text), f"{lesson}: a raw widget repr"
        must_fail = notebook.must_fail()
        errors = notebook.error_texts(allowed=must_fail)
        assert not errors, f"{lesson}: error output in the browser:\n" + "\n---\n".join(errors)
        notebook.save()
        saved_errors = notebook.saved_error_outputs()
        assert not saved_errors, f"{lesson}: nbformat error outputs: {saved_errors}"

        widgets = notebook.outputs().and_(
            notebook.page.locator(f'[data-mime-type="{WIDGET_VIEW}"]')
        )
        for view in widgets.all():
            expect(view.locator(".jupyter-widgets").first).to_be_visible()
            expect(view).not_to_contain_text(re.compile("Error displaying widget|Loading widget"))

        if draws_pictures(lesson):
            images = notebook.outputs().locator("img")
            notebook.while_working(
                lambda ms: expect(images.first).to_be_visible(timeout=ms), "the first picture"
            )
            notebook.wait_for_images()
        shot = notebook.screenshot(lesson)
        assert shot.stat().st_size > 10_000, shot
        serious = course_violations(lesson, "stored", stored_axe)
        serious += course_violations(lesson, "run", notebook.axe_violations())
        assert not serious, f"{lesson}: serious accessibility violations in the course:\n" + (
            "\n".join(serious)
        )
        print(f"{lesson}: Run All {seconds:.1f} s, {len(numbers)} code cells, screenshot {shot}")
    finally:
        if lesson not in WIDGET_LESSONS:
            lessons.done(lesson)


AXE_REPORTS = REPO / "artifacts" / "axe"
SERIOUS = {"serious", "critical"}


def course_violations(lesson: str, when: str, violations: list[dict[str, Any]]) -> list[str]:
    """Serious or critical axe violations in the course's own content (rendered Markdown and
    outputs); everything axe found, JupyterLab's interface included, goes to
    artifacts/axe/<lesson>-<when>.json for reading."""
    AXE_REPORTS.mkdir(parents=True, exist_ok=True)
    report = AXE_REPORTS / f"{lesson}-{when}.json"
    report.write_text(json.dumps(violations, indent=1), encoding="utf-8")
    return [
        f"{when}: {v['id']} ({node['impact']}): {v['help']}: {node['html']}"
        for v in violations
        for node in v["nodes"]
        if node["owner"] == "course" and node["impact"] in SERIOUS
    ]


# --- widgets -------------------------------------------------------------------------


def slider(container: Locator, label: str) -> Locator:
    """The ipywidgets slider described `label` inside `container`."""
    found = container.locator(".widget-slider").filter(
        has=container.page.locator(".widget-label", has_text=re.compile(rf"^{re.escape(label)}$"))
    )
    expect(found).to_have_count(1)
    return found


def slider_value(control: Locator) -> float:
    # ipywidgets formats with d3-format, which writes a Unicode minus: "−1.0"
    return float(control.locator(".widget-readout").inner_text().replace("\u2212", "-"))


def move_slider(control: Locator, to: float, step: float = 0.5) -> None:
    """Focus the slider's handle and press the arrow keys, one step per press."""
    presses = round((to - slider_value(control)) / step)
    handle = control.locator(".noUi-handle")
    handle.focus()
    for _ in range(abs(presses)):
        handle.press("ArrowRight" if presses > 0 else "ArrowLeft")
    sign = "[-\u2212]" if to < 0 else ""
    shown = re.compile(rf"^\s*{sign}{re.escape(f'{abs(to):.1f}')}\s*$")
    expect(control.locator(".widget-readout")).to_have_text(shown)


def picture(widget: Locator) -> Locator:
    """The widget's picture: the one image in its Output area."""
    image = widget.locator(".jp-OutputArea-output img")
    expect(image).to_have_count(1)
    return image


def wait_for_new_picture(notebook: Notebook, widget: Locator, old_src: str | None) -> str:
    """Until the kernel has drawn the widget's picture again and it has decoded."""
    image = picture(widget)
    notebook.while_working(
        lambda ms: expect(image).not_to_have_attribute("src", old_src or "", timeout=ms),
        "the widget's new picture",
    )
    widget.page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=image.element_handle()
    )
    return image.get_attribute("src") or ""


def height(locator: Locator) -> float:
    box = locator.bounding_box()
    assert box is not None
    return box["height"]


def widget_screenshot(widget: Locator, name: str) -> Path:
    widget.scroll_into_view_if_needed()
    path = screenshot_path(name)
    widget.screenshot(path=path)
    return path


@pytest.mark.parametrize("lesson", ["01_what_a_gradient_is"])
def test_tangent_explorer_follows_the_slider(lessons: ExecutedLessons, lesson: str) -> None:
    notebook = lessons.get(lesson)
    try:
        widget = notebook.panel.locator(".tangent-explorer")
        expect(widget).to_have_count(1)
        widget.scroll_into_view_if_needed()
        readout = widget.locator("div.tangent-readout")
        expect(readout).to_have_text("x = 3.0 | y = 9.0 | slope = 6.0 | step left")
        src = picture(widget).get_attribute("src")
        assert src and src.startswith("data:image/png"), src
        start_height = height(widget)

        x = slider(widget, "x")
        move_slider(x, 2.5)
        expect(readout).to_have_text("x = 2.5 | y = 6.25 | slope = 5.0 | step left")
        src = wait_for_new_picture(notebook, widget, src)

        move_slider(x, 0.0)
        expect(readout).to_have_text("x = 0.0 | y = 0.0 | slope = 0.0 | at the minimum")
        src = wait_for_new_picture(notebook, widget, src)

        move_slider(x, -1.0)
        expect(readout).to_have_text("x = -1.0 | y = 1.0 | slope = -2.0 | step right")
        wait_for_new_picture(notebook, widget, src)
        assert abs(height(widget) - start_height) <= 1, "the widget changed height: it jumps"
    finally:
        widget_screenshot(notebook.panel.locator(".tangent-explorer"), f"{lesson}_widget")
        lessons.done(lesson)


def neuron_cells(widget: Locator) -> dict[str, Locator]:
    table = widget.locator("table.neuron-readout")
    return {
        key: table.locator(f"td.neuron-{key}")
        for key in ("h", "a", "loss", "gate", "dL_dw", "dL_db")
    }


@pytest.mark.parametrize(
    ("lesson", "starts_open"),
    [("03_a_neuron_by_hand", True), ("04_the_dead_relu", False)],
)
def test_neuron_explorer_gate(lessons: ExecutedLessons, lesson: str, starts_open: bool) -> None:
    """Lesson 3 starts at x = 2 (gate open), lesson 4 at x = -1 (gate shut, no gradient)."""
    notebook = lessons.get(lesson)
    try:
        widget = notebook.panel.locator(".neuron-explorer")
        expect(widget).to_have_count(1)
        widget.scroll_into_view_if_needed()
        cells = neuron_cells(widget)
        x = slider(widget, "x")
        src = picture(widget).get_attribute("src")
        start_height = height(widget)

        def expect_open() -> None:
            expect(cells["gate"]).to_have_text("gate: open")
            expect(cells["gate"]).to_have_class(re.compile(r"\bgate-open\b"))
            expect(cells["h"]).to_have_text("h = 5.0")
            expect(cells["dL_dw"]).to_have_text("dL/dw = 12.0")
            expect(cells["dL_db"]).to_have_text("dL/db = 6.0")

        def expect_shut() -> None:
            expect(cells["gate"]).to_have_text("gate: shut")
            expect(cells["gate"]).to_have_class(re.compile(r"\bgate-shut\b"))
            expect(cells["h"]).to_have_text("h = -4.0")
            expect(cells["loss"]).to_have_text("L = 4.0")
            # whole-cell matches: "dL/dw = 0" would also match "dL/dw = 0.0408"
            expect(cells["dL_dw"]).to_have_text("dL/dw = 0.0")
            expect(cells["dL_db"]).to_have_text("dL/db = 0.0")

        if starts_open:
            assert slider_value(x) == 2.0
            expect_open()
            move_slider(x, -1.0)
            expect_shut()
            src = wait_for_new_picture(notebook, widget, src)
            move_slider(x, 2.0)
            expect_open()
            wait_for_new_picture(notebook, widget, src)
        else:
            assert slider_value(x) == -1.0
            expect_shut()
            move_slider(x, 2.0)
            expect_open()
            src = wait_for_new_picture(notebook, widget, src)
            move_slider(x, -1.0)
            expect_shut()
            src = wait_for_new_picture(notebook, widget, src)
            # the LeakyReLU lets a little gradient through the shut gate
            widget.get_by_role("checkbox", name=re.compile("LeakyReLU")).check()
            expect(cells["dL_dw"]).to_have_text("dL/dw = 0.0408")
            expect(cells["dL_db"]).to_have_text("dL/db = -0.0408")
            wait_for_new_picture(notebook, widget, src)
        assert abs(height(widget) - start_height) <= 1, "the widget changed height: it jumps"
    finally:
        widget_screenshot(notebook.panel.locator(".neuron-explorer"), f"{lesson}_widget")
        lessons.done(lesson)


@pytest.mark.parametrize("lesson", ["05_three_mechanics"])
def test_accumulation_stepper_buttons(lessons: ExecutedLessons, lesson: str) -> None:
    notebook = lessons.get(lesson)
    try:
        widget = notebook.panel.locator(".accumulation-stepper")
        expect(widget).to_have_count(1)
        widget.scroll_into_view_if_needed()
        values = widget.locator("div.accumulation-values")
        backward = widget.get_by_role("button", name="backward again")
        reset = widget.get_by_role("button", name="reset")
        zero = widget.get_by_role("checkbox", name="zero .grad before each backward")
        prefix = "x.grad after each backward: "
        expect(values).to_have_text(prefix + "none yet")
        start_height = height(widget)

        history: list[str] = []
        for value in ("6.0", "12.0", "18.0"):
            backward.click()
            history.append(value)
            expect(values).to_have_text(prefix + ", ".join(history))

        zero.check()
        reset.click()
        expect(values).to_have_text(prefix + "none yet")
        history = []
        for _ in range(3):
            backward.click()
            history.append("6.0")
            expect(values).to_have_text(prefix + ", ".join(history))
        expect(widget.locator("div.accumulation-note")).to_contain_text("zeroed before each")
        assert abs(height(widget) - start_height) <= 1, "the widget changed height: it jumps"
    finally:
        widget_screenshot(notebook.panel.locator(".accumulation-stepper"), f"{lesson}_widget")
        lessons.done(lesson)
