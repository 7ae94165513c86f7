"""Learner content reaches the instructor's browser inert (issue: safe grading).

A submission carries script in every form a notebook can: HTML with an event handler,
JavaScript and SVG outputs, raw HTML and a `javascript:` link in its written answer,
widget state in its metadata, and ready-made script outputs in the file itself. It is
graded by `autograder grade`; then the feedback HTML (file://) and formgrader's page for
that submission (a real `jupyter server` with nbgrader's extension) are opened in
Chromium, where the payload would set the page title. The same payload rendered without
the grader's filtering does set it (so the check can fail), and never does here.

A corpus of link and image tricks (`LINK_TRICKS`: escapes, entities, mixed case, control
characters in schemes, data and vbscript schemes, reference links, autolinks, comments,
SVG, MathML, srcset, formaction) is written by the learner in markdown and raw cells;
every link is clicked, and `window.__pwned`, which each trick would set, stays undefined.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbgrader.api import Gradebook
from page_steps import new_context
from playwright.sync_api import Browser, Page
from playwright.sync_api import Error as PlaywrightError
from ports import free_port
from test_grading_sandbox import HAND, PAYLOAD, html_payloads, is_written_answer

from autograder.authoring.sample_class import COURSE_ID, make_course, submit_sample_class

from .conftest import JUPYTER, VENV, LabServer, _stop, _wait_until_up

pytestmark = pytest.mark.browser
BIN = Path(sys.executable).parent
MARKED = "PWNED"
SCRIPT_OUTPUTS = [
    {"output_type": "display_data", "metadata": {}, "data": {
        "text/html": f'<img src=x onerror="{PAYLOAD}">', "text/plain": "html"}},
    {"output_type": "display_data", "metadata": {}, "data": {
        "application/javascript": PAYLOAD, "text/plain": "js"}},
]  # fmt: skip


SET = "window.__pwned=1"
LINK_TRICKS = [
    f"[escaped](javascript\\:{SET})",
    f"[entity](javascript&colon;{SET})",
    f"[numeric entity](javascript&#58;{SET})",
    f"[hex entity](&#x6A;avascript:{SET})",
    f"[vbscript](vbscript\\:{SET})",
    f"[mixed case](JaVaScRiPt:{SET})",
    f"[tab](java&#9;script:{SET})",
    f"[newline](java&#10;script:{SET})",
    f"[leading space]( javascript:{SET})",
    f"[control](&#1;javascript:{SET})",
    "[data](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)",
    f"[reference][trick]\n\n[trick]: javascript:{SET}",
    f"<javascript:{SET}>",
    f"![picture](javascript:{SET})",
    f'<a href="javascript:{SET}">raw anchor</a>',
    f'<a href="jav&#x09;ascript:{SET}">raw anchor with entity</a>',
    f"<!-- comment --><img src=x onerror={SET}>",
    f"<!--><img src=x onerror={SET}>-->",
    f'<svg><a xlink:href="javascript:{SET}"><text y="20">svg link</text></a></svg>',
    f'<svg onload="{SET}"></svg>',
    f'<math><maction actiontype="statusline" xlink:href="javascript:{SET}">m</maction></math>',
    f'<img srcset="javascript:{SET} 1x">',
    f'<form><button formaction="javascript:{SET}">form button</button></form>',
    f'<details open ontoggle="{SET}">details</details>',
    f'<iframe src="javascript:{SET}"></iframe>',
    f'<object data="javascript:{SET}"></object>',
    f"$\\href{{javascript:{SET}}}{{math link}}$",
    f'<p style="background:url(javascript:{SET})">styled</p>',
    f"<script>{SET}</script>",
]
URL_ATTRIBUTES = ["href", "src", "srcset", "action", "formaction", "xlink:href", "data"]


def run(args: list[str], cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def first_answer(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course where `mallory` submitted every kind of script, graded and fed back."""
    course = make_course(tmp_path_factory.mktemp("inert") / "course", [HAND])
    submit_sample_class(course, [HAND], ["ada"])
    release = nbformat.read(course / "exercises" / HAND / f"{HAND}.ipynb", 4)
    hostile = html_payloads(release)
    first_answer(hostile).outputs = [nbformat.from_dict(o) for o in SCRIPT_OUTPUTS]
    tricks = "\n\n".join(LINK_TRICKS)
    written = next(c for c in hostile.cells if c.cell_type == "markdown" and is_written_answer(c))
    written.source += "\n\n" + tricks
    hostile.cells.append(nbformat.v4.new_markdown_cell(tricks))
    hostile.cells.append(nbformat.v4.new_raw_cell(tricks, metadata={"raw_mimetype": "text/html"}))
    folder = course / "submitted" / "mallory" / HAND
    folder.mkdir(parents=True)
    nbformat.write(hostile, folder / f"{HAND}.ipynb")
    run([str(BIN / "autograder"), "grade", "--quiet", "-j", "1"], course)
    run([str(BIN / "nbgrader"), "generate_feedback", HAND], course)
    return course


# Resolves once what the page has queued has run: two frames painted (an image's error,
# an SVG's load), then one more task (a `javascript:` navigation, a handler's report).
SETTLED = """() => new Promise((done) =>
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))))"""


def settle(page: Page) -> None:
    """Until the page has run what it had queued (not a time: a slow machine waits longer)."""
    with contextlib.suppress(PlaywrightError):  # a click navigated away: the new page loads
        page.wait_for_load_state("load")
        page.evaluate(SETTLED)


def marked(page: Page) -> bool:
    """Whether the payload ran: it sets the title (once the page's handlers have fired)."""
    settle(page)
    return bool(page.title() == MARKED)


def dangerous_attributes(page: Page) -> list[str]:
    """Every attribute that names the payload or a script URL, on any element of the page."""
    found = page.evaluate(
        """(urlAttributes) => {
            const bad = [];
            for (const el of document.querySelectorAll('*')) {
                for (const attr of el.attributes) {
                    const url = attr.value.replace(/[\\s\\x00-\\x1f]/g, '').toLowerCase();
                    const script = /(^|,)(javascript|vbscript|data):/.test(url);
                    if (attr.value.includes('__pwned')
                        || (urlAttributes.includes(attr.name.toLowerCase()) && script)) {
                        bad.push(`${el.tagName} ${attr.name}=${attr.value}`);
                    }
                }
            }
            return bad;
        }""",
        URL_ATTRIBUTES,
    )
    return [str(f) for f in found]


REPORT_PWNED = """Object.defineProperty(window, '__pwned', {
    configurable: true, get() { return undefined; }, set(v) { window.__reportPwned(v); }
});"""
"""In every document of the page (also one a `javascript:` URL puts in its place), setting
`window.__pwned` is reported to the test."""


CLICK = """(index) => {
    const el = document.querySelectorAll('a, button')[index];
    if (!el) { return; }
    if (typeof el.click === 'function') { el.click(); return; }
    el.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
}"""
"""Click the index-th link or button (an SVG link has no .click(): it gets a click event)."""


def click_every_link(page: Page, url: str) -> bool:
    """Load `url` and click each link and button in turn (reloading whenever a click left
    the page); True when anything set `window.__pwned`, on load or on a click."""
    ran: list[object] = []
    page.expose_function("__reportPwned", lambda value: ran.append(value))
    page.add_init_script(REPORT_PWNED)
    page.goto(url)
    count = int(page.evaluate("document.querySelectorAll('a, button').length"))
    for index in range(count):
        try:
            if page.url != url or not page.evaluate("window.__fresh === true"):
                page.goto(url)
            page.evaluate("window.__fresh = true")
            page.evaluate(CLICK, index)
        except PlaywrightError:  # the click navigated away mid-call: reloaded next time
            pass
        settle(page)
    settle(page)
    return bool(ran)


def test_the_payload_runs_when_rendered_unfiltered(
    course: Path, browser: Browser, tmp_path: Path
) -> None:
    """The control: the submitted notebook's own outputs, exported as they are, do run."""
    submitted = nbformat.read(course / "submitted" / "mallory" / HAND / f"{HAND}.ipynb", 4)
    html, _ = HTMLExporter().from_notebook_node(submitted)
    page_file = tmp_path / "unfiltered.html"
    page_file.write_text(html)
    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        assert marked(page)
        assert dangerous_attributes(page)
        assert click_every_link(page, page_file.as_uri())
    finally:
        context.close()


def test_feedback_html_is_inert(course: Path, browser: Browser) -> None:
    feedback = course / "feedback" / "mallory" / HAND / f"{HAND}.html"
    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(feedback.as_uri())
        assert not marked(page)
        text = page.inner_text("body")
        assert '<img src=x onerror="' in text  # the answer is shown, as text
        assert "IPython.core.display.HTML object" in text  # the output, as plain text
        assert "raw anchor with entity" in text  # the tricks' text is shown
        assert dangerous_attributes(page) == []
        assert not click_every_link(page, feedback.as_uri())
        assert not marked(page)
    finally:
        context.close()


@pytest.fixture(scope="module")
def formgrader(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """`jupyter server` with nbgrader's formgrader, run in the course folder."""
    home = tmp_path_factory.mktemp("formgrader-home")
    token = secrets.token_hex(24)
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
    }
    command = [
        str(JUPYTER), "server", "--no-browser", f"--ServerApp.root_dir={course}",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
    ]  # fmt: skip
    if os.getuid() == 0:
        command.append("--allow-root")
    log = home / "server.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command, cwd=course, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, course, log, process)
    try:
        _wait_until_up(server)
        yield server
    finally:
        _stop(process)


def test_formgrader_shows_the_submission_inert(
    course: Path, formgrader: LabServer, browser: Browser
) -> None:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        submission = gb.find_submission_notebook(HAND, HAND, "mallory")
        submission_id = submission.id
    context = new_context(browser)
    try:
        page = context.new_page()
        response = page.goto(formgrader.url(f"/formgrader/submissions/{submission_id}/"))
        assert response is not None and response.ok, formgrader.log_tail()
        assert not marked(page)
        text = page.inner_text("body")
        assert '<img src=x onerror="' in text, text[:2000]
        widgets = page.evaluate("document.querySelectorAll('script[type*=widget]').length")
        assert json.loads(json.dumps(widgets)) == 0
        assert "raw anchor with entity" in text
        assert dangerous_attributes(page) == []
        assert not click_every_link(page, page.url)
        assert not marked(page)
    finally:
        context.close()
