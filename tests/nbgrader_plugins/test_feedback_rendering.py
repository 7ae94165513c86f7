"""What the instructor's browser is sent is the grader's choice: inert HTML, the course's
highlighter, and a render that cannot hold the feedback queue.

The browser half (clicking every link in the feedback page and formgrader) is in
tests/browser/test_inert_in_browser.py; here are the parts that need no browser.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from autograder.grading.inert import (
    COURSE_KERNELSPEC,
    COURSE_LANGUAGE_INFO,
    MAX_RENDERED_CELL,
    inert_markdown,
    inert_raw,
    make_inert,
)
from autograder.service import release_feedback
from autograder.service.release_feedback import FeedbackError, Renderer, within_budget
from tests.browser.test_inert_in_browser import LINK_TRICKS

CODE = "import math\ndef slope(x):\n    return 2 * x\n"
HOSTILE_LANGUAGE = {"name": "text", "pygments_lexer": "text", "codemirror_mode": "brainfuck"}
SCRIPT_URL = re.compile(r"(?i)(java|vb)\s*script\s*:|data\s*:|\bon[a-z]+\s*=")


def hostile_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["language_info"] = dict(HOSTILE_LANGUAGE)
    nb.metadata["kernelspec"] = {"name": "evil", "language": "brainfuck", "display_name": "x"}
    nb.cells = [
        nbformat.v4.new_code_cell(CODE),
        nbformat.v4.new_markdown_cell("\n\n".join(LINK_TRICKS)),
        nbformat.v4.new_raw_cell("\n".join(LINK_TRICKS), metadata={"raw_mimetype": "text/html"}),
    ]
    return nb


def test_a_hostile_language_info_is_replaced_and_python_highlights_the_code() -> None:
    nb = hostile_notebook()
    make_inert(nb, {})
    assert nb.metadata == {"kernelspec": COURSE_KERNELSPEC, "language_info": COURSE_LANGUAGE_INFO}
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert '<span class="kn">import</span>' in html  # Python's lexer, not the submission's
    assert '<span class="nf">slope</span>' in html


def test_the_submissions_lexer_would_have_been_used() -> None:
    """The control: without make_inert, the submission's language_info picks the lexer."""
    html, _ = HTMLExporter().from_notebook_node(hostile_notebook())
    assert '<span class="kn">import</span>' not in html


@pytest.mark.parametrize("trick", LINK_TRICKS, ids=range(len(LINK_TRICKS)))
def test_each_trick_is_stored_as_html_that_renders_to_itself(trick: str) -> None:
    stored = inert_markdown(trick)
    assert markdown2html_mistune(stored).strip() == stored
    tags = " ".join(re.findall(r"<[^>]*>", stored))  # what is markup, not text
    assert not SCRIPT_URL.search(tags), stored
    assert "<img" not in stored and "<svg" not in stored and "<script" not in stored


def test_the_tricks_reach_the_page_only_as_text() -> None:
    nb = hostile_notebook()
    make_inert(nb, {})
    html, _ = HTMLExporter().from_notebook_node(nb)
    body = html[html.index("<body") :]
    learner = body[body.index("tex2jax_ignore") :]
    assert not re.search(r"(?i)<[^>]*(javascript|vbscript|data)\s*:", learner)
    assert "raw anchor with entity" in learner
    assert inert_raw("<b>") == '<pre class="tex2jax_ignore mathjax_ignore">&lt;b&gt;</pre>'


def test_fenced_code_never_picks_a_lexer() -> None:
    stored = inert_markdown("```brainfuck\n+[-->-[>>+>-----<<]<--<---]>-.\n```")
    assert "<pre><code>+[--&gt;-[&gt;&gt;+&gt;-----&lt;&lt;]&lt;--&lt;---]&gt;-." in stored
    assert "<span" not in stored


@pytest.mark.processes
def test_a_render_past_its_budget_is_killed_with_a_reason() -> None:
    def forever() -> dict[str, object]:
        while True:
            time.sleep(0.05)

    with pytest.raises(FeedbackError, match=r"over 1 s, the budget \(c.Budgets.max_render"):
        within_budget(1.0, forever)


@pytest.mark.processes
def test_a_render_within_its_budget_returns_its_result() -> None:
    assert within_budget(30.0, lambda: {"success": True, "pid": os.getpid()})["success"]
    assert within_budget(30.0, lambda: {"pid": os.getpid()})["pid"] != os.getpid()


@pytest.mark.processes
def test_a_render_that_crashes_is_a_failure_not_a_dead_releaser() -> None:
    def crash() -> dict[str, object]:
        raise RecursionError("deep")

    assert within_budget(30.0, crash) == {"success": False, "error": "RecursionError: deep"}

    def dies() -> dict[str, object]:
        os._exit(3)

    with pytest.raises(FeedbackError, match="without an answer"):
        within_budget(30.0, dies)


def test_markdown_past_the_render_budget_is_kept_as_text() -> None:
    """Mistune is super-linear on some input: long cells, and cells past a notebook's
    budget, are stored as escaped text, which renders to itself."""
    nb = nbformat.v4.new_notebook()
    slow = "*a**" * (MAX_RENDERED_CELL // 4 + 1)
    nb.cells = [nbformat.v4.new_markdown_cell(slow)]
    nb.cells += [nbformat.v4.new_markdown_cell("[a](b) " * 2000) for _ in range(8)]
    make_inert(nb, {})
    assert nb.cells[0].source.startswith("<pre")
    assert markdown2html_mistune(nb.cells[0].source).strip() == nb.cells[0].source
    kinds = ["<pre" if c.source.startswith("<pre") else "<div" for c in nb.cells[1:]]
    assert kinds == ["<div"] * 7 + ["<pre"]  # 7 x 14 KB fit in the notebook's 100 KB


@pytest.mark.processes
def test_one_renderer_child_answers_learner_after_learner_until_one_overruns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a page warms stays warm in the child; a request past its budget is that
    request's failure, and the next one gets a fresh child; none serves forever."""
    served: list[str] = []  # grows in the child only

    def work(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("slow"):
            time.sleep(60)
        served.append(request["student"])
        return {"pid": os.getpid(), "served": list(served)}

    renderer = Renderer(work)
    try:
        first = renderer.ask({"student": "ada"}, 30.0)
        second = renderer.ask({"student": "ben"}, 30.0)
        assert first["pid"] == second["pid"] != os.getpid()
        assert second["served"] == ["ada", "ben"] and not served
        with pytest.raises(FeedbackError, match="over 1 s, the budget"):
            renderer.ask({"student": "dee", "slow": True}, 1.0)
        fresh = renderer.ask({"student": "eve"}, 30.0)
        assert fresh["pid"] != first["pid"] and fresh["served"] == ["eve"]
        monkeypatch.setattr(release_feedback, "RENDERS_PER_CHILD", 2)
        assert renderer.ask({"student": "fay"}, 30.0)["pid"] == fresh["pid"]
        assert renderer.pid is None  # retired after its second answer
        assert renderer.ask({"student": "gus"}, 30.0)["served"] == ["gus"]
    finally:
        renderer.stop()
    assert renderer.pid is None
