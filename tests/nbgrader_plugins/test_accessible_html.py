"""nbconvert's BeautifulSoup pass made without the tree: the same string, or the soup itself.

`accessible_html.plain_pass` must give exactly what `soup_pass` (nbconvert's own pass) gives
whenever it does not refuse the page; the pages nbgrader renders (tests/nbgrader_plugins/
test_feedback_exporter.py compares whole feedback pages with nbconvert's exporter) must
be plain, or the fast path would never run.
"""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.nbgrader_plugins.accessible_html import (
    NotPlain,
    accessible,
    plain_pass,
    soup_pass,
)

NAMES = ["div", "span", "p", "pre", "a", "img", "br", "style", "title", "textarea", "td", "b"]
CLASSES = ["jp-Notebook", "jp-Cell-inputWrapper", "jp-OutputArea-output", "x"]
TEXTS = ["a", " ", "\n", " \n\t ", "&amp;", "&lt;b&gt;", "&quot;", "&#39;", "&#10;", "&nbsp;"]
TEXTS += ["&copy;", ">", "'\"", "é ✓", "In&nbsp;[1]:", "\x0c"]
ODD_TEXTS = ["& b", "&#150;", "&bogus;", "<", "\r\n", "<!-- c -->", "<!---->", "<!-- a -- b -->"]
ODD_TEXTS += ["</div>", "</p>", "<?pi?>", "<DIV>", "</br>", "<!DOCTYPE html>"]
VALUES = ["", "v", " a  b ", "it's", "\n", "0"]
ODD_VALUES = ["x > y", 'q"q', "&amp;", "\r"]


def odd(draw: st.DrawFn) -> bool:
    """Now and then, something outside the plain form."""
    return draw(st.integers(0, 19)) == 0


@st.composite
def start_tags(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(NAMES))
    attributes = []
    if draw(st.booleans()):
        classes = draw(st.lists(st.sampled_from(CLASSES + ["JP-NOTEBOOK"] * odd(draw)), max_size=3))
        space = draw(st.sampled_from([" ", "  ", "\t"]))
        attributes.append(f'class="{draw(st.sampled_from(["", " "]))}{space.join(classes)}"')
    keys = st.lists(st.sampled_from(["id", "alt", "tabindex", "src", "rel"]), unique=True)
    for key in draw(keys):
        value = draw(st.sampled_from(ODD_VALUES if odd(draw) else VALUES))
        attributes.append(f'{key}="{value}"')
    if odd(draw):
        attributes.append(draw(st.sampled_from(["disabled", "x='1'", 'Y="2"', 'id="again"'])))
    written = "".join(f" {a}" for a in attributes)
    void = name in ("img", "br")
    slash = draw(st.sampled_from(["/", " /"])) if odd(draw) or void and draw(st.booleans()) else ""
    return name, f"<{name}{written}{slash}>"


@st.composite
def fragments(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 2)) < 2 or depth >= 3:
            parts.append(draw(st.sampled_from(ODD_TEXTS if odd(draw) else TEXTS)))
        else:
            name, start = draw(start_tags())
            if name in ("img", "br"):
                parts.append(start + (f"</{name}>" if odd(draw) else ""))
                continue
            raw = name in ("style", "title", "textarea")
            inner = draw(st.sampled_from(TEXTS) if raw and not odd(draw) else fragments(depth + 1))
            parts.append(start + inner + ("" if odd(draw) else f"</{name}>"))
    return "".join(parts)


@settings(max_examples=400)
@given(st.sampled_from(["", "<!DOCTYPE html>", "<!DOCTYPE html>\n"]), fragments())
def test_the_plain_pass_writes_what_beautifulsoup_writes(doctype: str, body: str) -> None:
    html = doctype + body
    expected = soup_pass(html)
    try:
        written = plain_pass(html)
    except NotPlain:
        return
    assert written == expected


def test_a_page_as_nbconvert_writes_it_is_plain_and_gets_the_three_edits() -> None:
    html = (
        '<!DOCTYPE html>\n<html>\n<head>\n\n<meta charset="utf-8" />\n<title>t</title>\n'
        '<style type="text/css">a > b { x: "&amp;" }</style>\n</head>\n<body>\n'
        '<div id="notebook" class=" jp-Notebook  x">\n'
        '<div class="jp-Cell-inputWrapper" tabindex="7"><pre>In&nbsp;[1]: &#39;a&#39;'
        " &gt;\n\n</pre></div>\n"
        '<div class="jp-OutputArea-output"><img src="data:x" width="3"><br></div>\n'
        "</div>\n<!-- end -->\n</body>\n</html>\n"
    )
    written, images = plain_pass(html)
    assert (written, images) == soup_pass(html)
    assert 'class="jp-Cell-inputWrapper" tabindex="0"' in written
    assert '<img alt="No description has been provided for this image" src=' in written
    assert images == 1


@pytest.mark.parametrize(
    "html",
    ["<p>a < b</p>", "<p>&bogus;</p>", "<div>", "</div>", "<p>&#150;</p>", "<div/>", "<a b>"],
)
def test_what_is_not_plain_goes_to_beautifulsoup(html: str) -> None:
    with pytest.raises(NotPlain):
        plain_pass(html)
    assert accessible(html, logging.getLogger("test")) == soup_pass(html)[0]


def test_missing_alt_text_is_warned_about_as_nbconvert_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        accessible('<p><img src="a"><img src="b" alt=""></p>', logging.getLogger("nb"))
    assert "Alternative text is missing on 1 image(s)." in caplog.text
