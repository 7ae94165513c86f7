"""Learner content made inert before it reaches the instructor's browser.

What the sandbox sends back is the learner's to choose, so the grader keeps only output
types that render as text or a picture (`SAFE_MIME`) and rebuilds every output from
checked fields. Learner-written markdown is rendered to HTML by nbconvert's own renderer
(the one feedback and formgrader use), then cleaned by a real sanitizer (nh3, an
allow-list of tags, attributes and URL schemes: no script, no event handler, no
`javascript:` however it is spelled), and stored as one HTML block that renders to
itself; raw cells are stored as escaped text. So `autograded/`, feedback HTML and
formgrader show the learner's work without running any of it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, Final

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

SAFE_MIME = ("text/plain", "image/png", "image/jpeg")
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
MAX_STRING = 1_000_000
COURSE_KERNELSPEC: Final = {
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    "name": "python3",
}
COURSE_LANGUAGE_INFO: Final = {"name": "python"}
"""The instructor's notebook metadata (what authoring/hygiene.py writes into every source
notebook): it picks nbconvert's highlighter, so a submission's own is never kept."""
ALLOWED_TAGS: Final = frozenset(
    {"a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "input", "kbd", "li", "ol", "p"}
    | {"pre", "s", "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead"}
    | {"tr", "ul"}
)
ALLOWED_ATTRIBUTES: Final = {
    "a": {"href", "title"},
    "ol": {"start"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
}
ALLOWED_SCHEMES: Final = frozenset({"http", "https", "mailto"})
"""Links only: no `<img>` is kept, so nothing the learner wrote makes the instructor's
browser fetch anything (a remote picture would tell the learner who looked, and when)."""
_CLEANER: Final = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style"},
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    tag_attribute_values={"input": {"type": {"checkbox"}, "checked": {"", "checked"}}},  # tasks
    set_tag_attribute_values={"input": {"disabled": "disabled"}},
    url_schemes=set(ALLOWED_SCHEMES),
    url_relative="deny",
    strip_comments=True,
)
NO_MATH: Final = "tex2jax_ignore mathjax_ignore"
"""Classes that keep MathJax (2 and 3) off the learner's text: TeX such as `\\href`
could otherwise build a link after the sanitizer has run."""
_LITERAL: Final = str.maketrans(
    {"\r": "&#13;", "\n": "&#10;", "$": "&#36;", "\\": "&#92;", "`": "&#96;"}
)
"""Characters written as references in stored HTML: no line breaks (so markdown sees one
HTML block and renders it unchanged), no math delimiters and no markdown escapes."""


def _text(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "".join(value)
    return value[:MAX_STRING] if isinstance(value, str) else None


def safe_data(data: Any) -> dict[str, str]:
    """The renderable part of a mime bundle: plain text and valid base64 pictures."""
    if not isinstance(data, dict):
        return {}
    kept: dict[str, str] = {}
    for mime in SAFE_MIME:
        value = _text(data.get(mime))
        if value is None:
            continue
        if mime != "text/plain" and not BASE64.fullmatch(value):
            continue
        kept[mime] = value
    dropped = sorted(str(k)[:60] for k in data if k not in kept)
    if dropped and "text/plain" not in kept:
        kept["text/plain"] = f"[output of type {', '.join(dropped)} not kept by the grader]"
    return kept


def safe_count(count: Any) -> int | None:
    """An execution count as nbformat allows it (an int from 0), else none: a learner's
    kernel can set its count to anything, and nbformat refuses a negative one when the
    recorded notebook is written."""
    return count if type(count) is int and count >= 0 else None


def safe_output(output: Any) -> dict[str, Any] | None:
    """One output rebuilt from checked fields, or None when nothing safe is left."""
    if not isinstance(output, dict):
        return None
    kind = output.get("output_type")
    if kind == "stream":
        name, text = output.get("name"), _text(output.get("text"))
        if name in ("stdout", "stderr") and text is not None:
            return {"output_type": "stream", "name": name, "text": text}
        return None
    if kind == "error":
        traceback = output.get("traceback")
        lines = (
            [line[:MAX_STRING] for line in traceback if isinstance(line, str)]
            if isinstance(traceback, list)
            else []
        )
        return {
            "output_type": "error",
            "ename": _text(output.get("ename")) or "Error",
            "evalue": _text(output.get("evalue")) or "",
            "traceback": lines[:200],
        }
    if kind in ("display_data", "execute_result"):
        data = safe_data(output.get("data"))
        if not data:
            return None
        safe: dict[str, Any] = {"output_type": kind, "data": data, "metadata": {}}
        if kind == "execute_result":
            safe["execution_count"] = safe_count(output.get("execution_count"))
        return safe
    return None


class _PlainCodeRenderer(IPythonRenderer):  # type: ignore[misc]
    """nbconvert's markdown renderer, except that fenced code is never highlighted: the
    fence's language would pick a Pygments lexer, some of which take super-linear time
    (and the sanitizer drops the highlighting anyway)."""

    def block_code(self, code: str, info: str | None = None) -> str:
        return f"<pre><code>{html.escape(code)}</code></pre>\n"


def sanitized_html(markdown: str) -> str:
    """Learner markdown rendered as feedback renders it, then cleaned by the allow-list."""
    try:
        rendered = str(
            MarkdownWithMath(
                renderer=_PlainCodeRenderer(escape=False, exclude_anchor_links=True)
            ).render(markdown)
        )
    except Exception:  # nbconvert's renderer refuses some input (a missing attachment)
        rendered = "<pre>" + html.escape(markdown) + "</pre>"
    return str(_CLEANER.clean(rendered))


def inert_markdown(source: str) -> str:
    """Markdown that renders, in nbconvert and JupyterLab alike, to the sanitized HTML of
    `source` and nothing else: one `<div>` HTML block on one line."""
    body = sanitized_html(source).translate(_LITERAL)
    return f'<div class="{NO_MATH}">{body}</div>'


def inert_raw(source: str) -> str:
    """A raw cell's text, escaped: nbconvert copies raw cells into the page as they are."""
    body = html.escape(source).translate(_LITERAL)
    return f'<pre class="{NO_MATH}">{body}</pre>'


MAX_RENDERED_CELL: Final = 20_000
"""Longest markdown cell rendered (mistune takes super-linear time on some input, about
0.15 s for 20 KB at worst); a longer one is kept as escaped text."""
MAX_RENDERED_NOTEBOOK: Final = 100_000
"""Characters of markdown rendered per notebook; cells past it are kept as escaped text."""


def make_inert(notebook: Any, instructor: Mapping[str, Mapping[str, Any]]) -> None:
    """Neutralise every markdown/raw cell the learner wrote, and notebook metadata, in place
    (the kernelspec and language are the instructor's: they choose the highlighter).

    `instructor`: grade_id -> the instructor's cell (its "source" and "locked" flag). A cell
    still holding the instructor's text is left as it is: nbgrader then still sees an
    untouched written answer as unanswered, not as something to grade by hand."""
    notebook.metadata.clear()
    notebook.metadata["kernelspec"] = dict(COURSE_KERNELSPEC)
    notebook.metadata["language_info"] = dict(COURSE_LANGUAGE_INFO)
    rendered = 0
    for cell in notebook.cells:
        if cell.cell_type == "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        original = instructor.get(str(meta.get("grade_id")))
        if original is not None and meta.get("locked"):
            continue  # restored from the instructor's version by nbgrader
        if original is not None and cell.source == original.get("source"):
            continue  # the instructor's own text, untouched
        cell.pop("attachments", None)
        cell.metadata.pop("format", None)
        cell.metadata.pop("raw_mimetype", None)
        source = cell.source if isinstance(cell.source, str) else ""
        budget = min(MAX_RENDERED_CELL, MAX_RENDERED_NOTEBOOK - rendered)
        if cell.cell_type == "markdown" and len(source) <= budget:
            cell.source = inert_markdown(source)
            rendered += len(source)
        else:
            cell.source = inert_raw(source)
