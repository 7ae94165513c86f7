"""The class report's page in Chromium: built by `autograder report` from the sample class
graded for real (`tests/report/test_report.py`'s course), it renders, every image has decoded and
says in its alt text what it shows, axe finds no violation, and what an instructor acts
on (the misconceptions, with who made them and a formula) is on the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from page_steps import new_context
from playwright.sync_api import Browser, Page
from test_report import A03, autograder, graded_sample_class

from .conftest import AXE_RUN, VIEWPORT, axe_script, screenshot_path

pytestmark = [pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The course report and the 03 report, written by the command."""
    course = graded_sample_class(tmp_path_factory.mktemp("report-browser"))
    written = {}
    for scope in ("course", A03):
        result = autograder("report", *([] if scope == "course" else [scope]), cwd=course)
        assert result.returncode == 0, result.stderr
        written[scope] = course / "reports" / f"{scope}.html"
    return written


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = new_context(browser, viewport=VIEWPORT, locale="en-US")
    try:
        yield context.new_page()
    finally:
        context.close()


def _images(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate(
        """() => [...document.images].map((img) => ({
            alt: img.getAttribute('alt'), width: img.naturalWidth, done: img.complete}))"""
    )
    return found


@pytest.mark.parametrize("scope", ["course", A03])
def test_report_page_renders_with_alt_text_and_no_axe_violation(
    pages: dict[str, Path], page: Page, scope: str
) -> None:
    page.goto(pages[scope].as_uri())
    titles = {
        "course": "Class report: backward-course",
        A03: f"Class report: backward-course, {A03}",
    }
    assert page.title() == titles[scope]  # the course's id, not "course"
    page.wait_for_function("() => [...document.images].every((i) => i.complete)")
    images = _images(page)
    assert len(images) == 3, images  # parts, misconceptions, progress
    for image in images:
        assert image["width"] > 0, image  # decoded: a real PNG
        assert image["alt"] and image["alt"].startswith("Bar chart of "), image
    page.screenshot(path=screenshot_path(f"class-report-{scope}"), full_page=True)
    page.add_script_tag(path=str(axe_script()))
    violations = page.evaluate(AXE_RUN)
    assert violations == [], violations


def test_what_to_reteach_is_on_the_page(pages: dict[str, Path], page: Page) -> None:
    """ben's root causes head the page, with his formulas in the given names; dee's blank
    answers and ben's follow-ons are not among the misconceptions."""
    page.goto(pages["course"].as_uri())
    first = page.locator("table").first
    assert "Misconceptions most worth re-teaching" in first.locator("caption").inner_text()
    rows = first.locator("tr").all_inner_texts()[1:]
    assert len(rows) == 2, rows
    text = "\n".join(rows)
    assert "a local slope left out of the chain" in text and "a - y" in text
    assert "the sign flipped" in text and "2 * (target - y_value)" in text
    assert "ben" in text and "dee" not in text and "follow" not in text
    alt = page.locator("img").nth(0).get_attribute("alt") or ""
    assert "the sign flipped, 1 student" in alt
    students = page.locator("table", has_text="Each student's mistakes").inner_text()
    assert "not answered: 20 parts" in students
