"""Fixtures of the browser tests: one JupyterLab server and one Chromium per session.

The server is started the way `make lab` starts it (the venv's `jupyter lab`, bound to
127.0.0.1, `--allow-root` as root), but headless, on a free port, with a random token,
on a temporary COPY of `course/` and `exercises/` (side by side, so the lessons' relative
links keep working): running cells, saving and validating never touch the repository.
Jupyter's user directories point into the temporary directory, so the user's own
settings, workspaces and kernelspecs cannot change what the tests see, and the venv's
`share/jupyter` comes first on JUPYTER_PATH, so notebooks run in the venv's kernel (the
one that imports `autograd_lessons` and `autograder`).

Chromium is Debian's (`/usr/bin/chromium`); Playwright never downloads a browser. When
it is missing the tests skip, and under CI (`CI=true`) and `make test` (`EVERY_TEST=1`)
a skip fails (tests/every_test_runs.py).

`Notebook` drives one notebook tab through the user interface (menus, clicks, keys) and
reads the DOM; `LabServer` reads and cleans up through the REST API.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import process_tree
import pytest
import stall_guard
from page_steps import new_context, patiently
from playwright.sync_api import (
    Browser,
    Locator,
    Page,
    expect,
    sync_playwright,
)
from ports import free_port

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
JUPYTER = VENV / "bin" / "jupyter"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
# Copied into the server's root, side by side, as in the repository.
SERVED_FOLDERS = ("course", "exercises")

VIEWPORT = {"width": 1280, "height": 800}
MAX_SCREENSHOT_HEIGHT = 15_000  # Chromium refuses taller captures (16384 px)

STDERR = "application/vnd.jupyter.stderr"
AXE = REPO / "tools" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
# Runs axe on the document; says whose each violating node is: the course's own content
# (rendered Markdown, outputs), ipywidgets' slider internals (noUiSlider's handle has no
# accessible name and ipywidgets offers no way to give it one), or JupyterLab's interface.
AXE_RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    const course = '.jp-OutputArea-output, .jp-RenderedMarkdown';
    const owner = (element) => !element ? 'jupyterlab'
        : element.closest('.noUi-target') ? 'ipywidgets'
        : element.closest(course) ? 'course' : 'jupyterlab';
    return result.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => {
            const selector = n.target[n.target.length - 1];
            const element = typeof selector === 'string' ? document.querySelector(selector) : null;
            return {target: JSON.stringify(n.target), impact: n.impact, html: n.html.slice(0, 160),
                    owner: owner(element)};
        }),
    }));
}"""


def axe_script() -> Path:
    """axe-core's script, installed from npm by tools/install_axe.sh (run here if missing)."""
    if not AXE.is_file():
        subprocess.run(["bash", str(REPO / "tools" / "install_axe.sh")], check=True)
    return AXE


ERROR_WORDS = re.compile(r"Traceback|Error")


def screenshot_path(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"


# --- the server ----------------------------------------------------------------------


@dataclass
class LabServer:
    """A running `jupyter lab`: where it is, how to authenticate, what it serves."""

    base_url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes] = field(repr=False)

    def signs(self) -> list[stall_guard.Sign]:
        """The server's work: its kernels' CPU time, its log's size."""
        return [stall_guard.work_below(self.process.pid), stall_guard.size_of(self.log)]

    def watch(self, what: str) -> stall_guard.Watch:
        """A watch on the server's work (`signs`)."""
        return stall_guard.Watch(what, self.signs())

    def url(self, path: str) -> str:
        """Browser URL of a JupyterLab route with the token (`/lab/tree/x.ipynb?reset`)."""
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET", probe: float | None = None) -> Any:
        """Call the REST API (`/api/...`); the decoded JSON, or None for an empty body.
        Awaited while the server works (a kernel shutting down...), or for `probe` s."""
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )

        def ask() -> Any:
            with urllib.request.urlopen(request, timeout=probe) as response:
                body = response.read()
            return json.loads(body) if body else None

        return ask() if probe else stall_guard.call(ask, f"{method} {path}", self.signs())

    def notebook_json(self, path: str) -> dict[str, Any]:
        """The notebook as saved on disk by the server (nbformat JSON)."""
        return json.loads((self.root / path).read_text(encoding="utf-8"))

    def shutdown_sessions(self, path: str | None = None) -> None:
        """Stop the kernels of `path` (default: all); closing a tab leaves its kernel running."""
        for session in self.api("/api/sessions"):
            if path is not None and session.get("path") != path:
                continue
            with contextlib.suppress(urllib.error.URLError, TimeoutError):
                self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


def _wait_until_up(server: LabServer) -> None:
    def up() -> bool:
        if server.process.poll() is not None:
            pytest.fail(
                f"jupyter lab exited with code {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            server.api("/api/status", probe=2)  # not yet up; wait_for_server measures progress
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    stall_guard.wait_for_server(up, "jupyter lab, starting", server.process, server.log)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()  # the server shuts its kernels down on SIGTERM: while they work
    try:
        kernels = [stall_guard.work_below(process.pid)]  # the server's own: it polls
        stall_guard.wait(process, "jupyter server, stopping", kernels)
    except stall_guard.Stalled:
        process_tree.end(process_tree.family(process.pid))  # the server and its kernels
        process.wait()


@pytest.fixture(scope="session")
def chromium_executable() -> Path:
    """Debian's Chromium; skip without it (a failure under CI and `make test`)."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip("Chromium is not installed: `make system` or `sudo apt-get install chromium`")
    return CHROMIUM


@pytest.fixture(scope="session")
def lab_server(
    chromium_executable: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LabServer]:
    """`jupyter lab` on a temporary copy of course/ and exercises/, stopped at the end."""
    if not JUPYTER.is_file():
        pytest.fail(f"{JUPYTER} is missing: run `make lab` or `make test` once to create .venv")
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    for folder in SERVED_FOLDERS:
        shutil.copytree(
            REPO / folder, root / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints")
        )
    home = base / "home"
    # No "Would you like to get notified about official Jupyter news?" toast over the
    # screenshots, and no request to the internet for news or updates.
    notification = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8"
    )
    env = dict(os.environ)
    env.update(
        PATH=f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(VENV),
        # the venv's kernelspec first: the kernel must import the course packages
        JUPYTER_PATH=str(VENV / "share" / "jupyter"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "lab-workspaces"),
        IPYTHONDIR=str(home / "ipython"),
        MPLCONFIGDIR=str(home / "matplotlib"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("PYTHONPATH", None)
    # the kernel the server will start for "python3" must be the venv's
    listed = subprocess.run(
        [str(JUPYTER), "kernelspec", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    python3 = json.loads(listed.stdout)["kernelspecs"].get("python3", {})
    resource_dir = Path(python3.get("resource_dir", "/nonexistent"))
    assert resource_dir.is_relative_to(VENV), f"python3 kernel is not the venv's: {python3}"
    token = secrets.token_hex(24)
    port = free_port()
    command = [
        str(JUPYTER),
        "lab",
        "--no-browser",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
    ]
    if os.getuid() == 0:
        command.append("--allow-root")
    log = base / "jupyterlab.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log, process)
    try:
        _wait_until_up(server)
        assert "python3" in server.api("/api/kernelspecs")["kernelspecs"]
        yield server
    finally:
        _stop(process)


# --- the browser ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser(chromium_executable: Path) -> Iterator[Browser]:
    """One Chromium for the whole session (each test gets its own context)."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(chromium_executable), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


class Notebook:
    """One notebook opened in its own browser context, driven through JupyterLab's UI."""

    def __init__(self, server: LabServer, path: str, page: Page, loaded: bool) -> None:
        """Open `path` in `page`: a JupyterLab already `loaded` there (with no notebook
        open) opens it through File > Open from Path…, as a learner would; else the page
        loads JupyterLab at the notebook's URL."""
        self.server = server
        self.context = page.context
        self.path = path
        self.name = Path(path).stem
        self.page = page
        self.panel = self.page.locator(".jp-NotebookPanel").filter(
            has=self.page.locator(".jp-Notebook")
        )
        if loaded:
            self.menu("File", "Open from Path…", confirm=False)
            dialog = self.page.locator(".jp-Dialog")
            dialog.locator("input").fill(path)
            dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
        else:
            self.page.goto(server.url(f"/lab/tree/{path}?reset"))
        self.while_working(lambda ms: expect(self.panel).to_have_count(1, timeout=ms), "its panel")
        self.while_working(lambda ms: expect(self.cells.first).to_be_visible(timeout=ms), "a cell")
        self.wait_for_kernel_idle()

    # --- locating things

    @property
    def cells(self) -> Locator:
        return self.panel.locator(".jp-Notebook .jp-Cell")

    @property
    def code_cells(self) -> Locator:
        return self.panel.locator(".jp-Notebook .jp-CodeCell")

    def cell(self, index: int) -> Locator:
        """The `index`-th cell of the notebook (0-based, markdown cells included)."""
        return self.cells.nth(index)

    def outputs(self, cell: Locator | None = None) -> Locator:
        return (cell or self.panel).locator(".jp-OutputArea-output")

    # --- kernel and dialogs

    def dismiss_dialogs(self) -> None:
        """Accept a dialog that may pop up (e.g. "Select Kernel"): it would block the UI."""
        dialog = self.page.locator(".jp-Dialog")
        if dialog.count() and dialog.first.is_visible():
            dialog.first.locator(".jp-Dialog-button.jp-mod-accept").click()
            expect(dialog).to_have_count(0)

    def while_working(self, step: Callable[[float], object], what: str) -> None:
        """`step(timeout_ms)` (a Playwright wait), tried again for as long as the server's
        kernels compute or its log grows: a kernel's work has no fixed duration; `Stalled`
        when nothing moves (page_steps.patiently)."""
        patiently(step, f"{self.path}: {what}", self.server.signs())

    def wait_for_kernel_idle(self) -> None:
        """Until the kernel is connected and idle (toolbar indicator and status bar), for
        as long as the server's kernels compute or its log grows."""
        watch = self.server.watch(f"{self.path}: the kernel, until idle")
        indicator = self.panel.locator(".jp-Notebook-ExecutionIndicator")
        status = self.page.locator(".jp-StatusBar-Widget")
        while not watch.stalled():
            self.dismiss_dialogs()
            try:
                expect(indicator).to_have_attribute("data-status", "idle", timeout=1000)
                expect(status).to_contain_text(
                    re.compile(r"Python 3 \(ipykernel\) \| Idle"), timeout=1000
                )
                return
            except AssertionError:
                continue
        raise stall_guard.Stalled(
            watch.message(
                f" (indicator {indicator.get_attribute('data-status')!r}, status bar "
                f"{status.inner_text()!r})\n{self.server.log_tail()}"
            )
        )

    # --- menus and keys

    def menu(self, top: str, item: str, confirm: bool = True) -> None:
        """Click a main-menu entry, e.g. `menu("Run", "Run All Cells")`; then accept a
        dialog it opens, unless not to `confirm`."""
        self.page.locator("#jp-MainMenu .lm-MenuBar-itemLabel").filter(
            has_text=re.compile(rf"^{re.escape(top)}$")
        ).click()
        entry = self.page.locator(".lm-Menu .lm-Menu-item").filter(
            has=self.page.locator(
                ".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")
            )
        )
        expect(entry).to_have_count(1)
        entry.click()
        if confirm:
            self.dismiss_dialogs()

    def select_cell(self, index: int) -> None:
        """Select a cell in command mode (click its prompt area)."""
        cell = self.cell(index)
        cell.scroll_into_view_if_needed()
        cell.locator(".jp-InputPrompt").click()
        expect(cell).to_have_class(re.compile(r"\bjp-mod-active\b"))

    def type_into_cell(self, index: int, source: str) -> None:
        """Replace the text of a code cell by typing, as a learner would."""
        editor = self.cell(index).locator(".cm-content")
        editor.scroll_into_view_if_needed()
        editor.click()
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.press("Delete")
        self.page.keyboard.type(source)
        expect(editor).to_have_text(source)

    def run_selected_and_advance(self) -> None:
        self.page.keyboard.press("Shift+Enter")

    # --- whole-notebook actions

    def prompts(self) -> list[str]:
        return [t.strip() for t in self.code_cells.locator(".jp-InputPrompt").all_text_contents()]

    def clear_all_outputs(self) -> None:
        """Edit > Clear Outputs of All Cells: afterwards every output is this run's."""
        self.menu("Edit", "Clear Outputs of All Cells")
        expect(self.outputs()).to_have_count(0)

    def run_all(self) -> float:
        """Clear outputs, then Run > Run All Cells; wait until every code cell has run and
        the kernel is idle (for as long as the kernel computes). Returns the seconds it took."""
        self.clear_all_outputs()
        assert all(p in ("", "[ ]:") for p in self.prompts()), self.prompts()
        start = time.monotonic()
        self.menu("Run", "Run All Cells")
        self.while_working(
            lambda ms: self.page.wait_for_function(
                """(selector) => {
                    const prompts = [...document.querySelectorAll(selector)]
                        .map((e) => e.textContent.trim());
                    return prompts.length > 0
                        && prompts.every((t) => /^\\[\\d+\\]:$/.test(t));
                }""",
                arg=".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt",
                timeout=ms,
                polling=200,
            ),
            "Run All Cells, until every cell ran",
        )
        self.wait_for_kernel_idle()
        return time.monotonic() - start

    def save(self) -> None:
        """File > Save Notebook; wait until the tab is no longer marked dirty."""
        self.menu("File", "Save Notebook")
        expect(self.page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(0)

    def must_fail(self) -> set[int]:
        """Positions (among code cells) of the cells tagged `raises-exception`."""
        code = [
            c for c in self.server.notebook_json(self.path)["cells"] if c["cell_type"] == "code"
        ]
        return {
            i for i, c in enumerate(code) if "raises-exception" in c["metadata"].get("tags", [])
        }

    def error_texts(self, allowed: Collection[int] = ()) -> list[str]:
        """Rendered stderr/error outputs that look like errors (warnings pass), except in the
        code cells at the positions in `allowed` (cells meant to fail)."""
        found = []
        for i, cell in enumerate(self.code_cells.all()):
            if i in allowed:
                continue
            stderr = cell.locator(f'.jp-RenderedText[data-mime-type="{STDERR}"]')
            found += stderr.filter(has_text=ERROR_WORDS).all_text_contents()
        return found

    def saved_error_outputs(self) -> list[str]:
        """nbformat `error` outputs of the notebook as saved by the server, outside the cells
        tagged `raises-exception`; those must each hold one (listed as `missing error`)."""
        found = []
        for number, cell in enumerate(self.server.notebook_json(self.path)["cells"]):
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if "raises-exception" in cell.get("metadata", {}).get("tags", []):
                if not errors:
                    found.append(f"cell {number}: missing error (tagged raises-exception)")
                continue
            found += [f"cell {number}: {o.get('ename')}: {o.get('evalue')}" for o in errors]
        return found

    def axe_violations(self) -> list[dict[str, Any]]:
        """axe-core's violations on the whole page, each node with its `owner`: `course` (the
        course's own content: rendered Markdown and outputs), `ipywidgets` (the slider's
        internal handle) or `jupyterlab` (menus, toolbars, prompts, the code editor's theme)."""
        self.page.add_script_tag(path=str(axe_script()))
        result: list[dict[str, Any]] = self.page.evaluate(AXE_RUN)
        return result

    # --- pictures

    def screenshot(self, name: str, whole: bool = True) -> Path:
        """Screenshot the notebook panel to artifacts/screenshots/<name>.png.

        With `whole`, the viewport is made tall enough for the entire notebook first, so
        one picture shows every cell, then restored."""
        path = screenshot_path(name)
        if not whole:
            self.panel.screenshot(path=path)
            return path
        for _ in range(3):  # heights settle as off-screen cells get laid out
            height = self.page.evaluate(
                """() => {
                    const outer = document.querySelector(
                        '.jp-NotebookPanel .jp-Notebook > .jp-WindowedPanel-outer');
                    const cells = outer.querySelectorAll('.jp-Cell');
                    const last = cells[cells.length - 1];
                    const content = outer.scrollTop + last.getBoundingClientRect().bottom
                        - outer.getBoundingClientRect().top;
                    return Math.ceil(window.innerHeight - outer.clientHeight + content + 40);
                }"""
            )
            height = min(max(height, VIEWPORT["height"]), MAX_SCREENSHOT_HEIGHT)
            if height == self.page.viewport_size["height"]:
                break
            self.page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
            self.page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").evaluate(
                "(outer) => { outer.scrollTop = 0; }"
            )
            self.page.wait_for_timeout(300)  # one layout pass: nothing to wait on
        self.wait_for_images()
        self.panel.screenshot(path=path)
        self.page.set_viewport_size(VIEWPORT)
        return path

    def wait_for_images(self) -> None:
        """Until every image output has decoded (naturalWidth > 0)."""
        self.while_working(
            lambda ms: self.page.wait_for_function(
                """() => [...document.querySelectorAll(
                        '.jp-NotebookPanel .jp-OutputArea-output img')]
                    .every((img) => img.complete && img.naturalWidth > 0)""",
                timeout=ms,
            ),
            "every image decoded",
        )

    def shut_down(self) -> bool:
        """File > Close and Shut Down Notebook…, as a learner closes it (unsaved changes are
        dropped: the server's files are a copy); whether the page is left with no notebook
        and no dialog open, ready for the next one."""
        try:
            self.page.keyboard.press("Escape")  # a menu or completer left open
            self.menu("File", "Close and Shut Down Notebook…", confirm=False)
            dialog = self.page.locator(".jp-Dialog")
            expect(dialog).to_contain_text("Shut down the notebook?")
            dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
            expect(self.page.locator(".jp-NotebookPanel")).to_have_count(0)
            expect(dialog).to_have_count(0)
        except Exception:  # noqa: BLE001  (a page in doubt is not used again: see LabPages)
            return False
        return True

    def close(self) -> None:
        self.context.close()


class LabPages:
    """JupyterLab pages already loaded, with no notebook open, for the next notebook.

    Loading JupyterLab costs about 7 CPU-s (Chromium runs its scripts, the server serves
    them); opening a notebook in a page that has it loaded costs about 2. A notebook closed
    cleanly (`Notebook.shut_down`) leaves its page here; one that is not closed cleanly
    (a test failed in a dialog, say) takes its browser context with it. Each page keeps
    its own browser context, as each notebook had before."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.free: list[Page] = []

    def take(self) -> tuple[Page, bool]:
        """A page and whether JupyterLab is loaded in it (else a new context's page)."""
        if self.free:
            return self.free.pop(), True
        return new_context(self.browser, viewport=VIEWPORT, locale="en-US").new_page(), False

    def give_back(self, page: Page) -> None:
        self.free.append(page)

    def close(self) -> None:
        for page in self.free:
            page.context.close()
        self.free.clear()


@pytest.fixture(scope="session")
def lab_pages(browser: Browser) -> Iterator[LabPages]:
    pages = LabPages(browser)
    try:
        yield pages
    finally:
        pages.close()


class NotebookOpener:
    """Opens notebooks, each in its own browser context (a loaded page of `LabPages` when
    one is free); closes them and their kernels."""

    def __init__(self, server: LabServer, pages: LabPages) -> None:
        self.server = server
        self.pages = pages
        self.opened: list[Notebook] = []

    def open(self, path: str) -> Notebook:
        page, loaded = self.pages.take()
        try:
            notebook = Notebook(self.server, path, page, loaded)
        except BaseException:
            page.screenshot(path=screenshot_path(f"FAILED-open-{Path(path).stem}"))
            page.context.close()
            raise
        self.opened.append(notebook)
        return notebook

    def close(self, notebook: Notebook) -> None:
        if notebook in self.opened:
            self.opened.remove(notebook)
            if notebook.shut_down():
                self.pages.give_back(notebook.page)
            else:
                notebook.close()
            self.server.shutdown_sessions(notebook.path)

    def close_all(self) -> None:
        for notebook in list(self.opened):
            self.close(notebook)


@pytest.fixture
def notebooks(lab_server: LabServer, lab_pages: LabPages) -> Iterator[NotebookOpener]:
    """Open notebooks for one test; they (and their kernels) are closed afterwards."""
    opener = NotebookOpener(lab_server, lab_pages)
    try:
        yield opener
    finally:
        opener.close_all()


@pytest.fixture(scope="module")
def module_notebooks(lab_server: LabServer, lab_pages: LabPages) -> Iterator[NotebookOpener]:
    """Notebooks shared by the tests of one module (an executed lesson and its widgets)."""
    opener = NotebookOpener(lab_server, lab_pages)
    try:
        yield opener
    finally:
        opener.close_all()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In test_lessons_in_browser, each widget test comes right after its `lesson`'s run
    test (the module's tests keep the places they hold in the session's order, whoever
    ordered it): a lesson is closed before the next one opens, so the module's lessons
    run one after another in one loaded JupyterLab page (`LabPages`), not one page each
    for the lessons kept open for a widget test at the end."""
    places = [
        index
        for index, item in enumerate(items)
        if item.nodeid.split("::")[0].endswith("test_lessons_in_browser.py")
    ]

    def order(item: pytest.Item) -> tuple[str, bool]:  # lessons are named NN_...: in order
        callspec = getattr(item, "callspec", None)
        lesson = str(callspec.params.get("lesson", "")) if callspec is not None else ""
        runs = item.nodeid.split("::")[-1].startswith("test_lesson_runs_in_browser")
        return lesson, not runs

    for index, item in zip(places, sorted((items[i] for i in places), key=order), strict=True):
        items[index] = item


# --- a screenshot of every page open when a test fails --------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for name in ("notebooks", "module_notebooks"):
        opener = item.funcargs.get(name) if hasattr(item, "funcargs") else None
        if not isinstance(opener, NotebookOpener):
            continue
        for notebook in opener.opened:
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.name)
            # a failed screenshot must not hide the failure itself
            with contextlib.suppress(Exception):
                notebook.page.screenshot(path=screenshot_path(f"FAILED-{safe}-{notebook.name}"))
