"""nbconvert's last pass over an HTML page, the same bytes without building a BeautifulSoup tree.

nbconvert's HTMLExporter renders its template, then parses the page with BeautifulSoup
(Python's html.parser) to give every image without alt text a stand-in, and the cells'
input and output areas inside the notebook a `tabindex`, and writes the tree out again.
That pass was about a third of a feedback page's CPU. `accessible(html)` gives the same
string for a page in the plain form the templates write: a strict scan of its tags that
re-emits each as BeautifulSoup does (attributes sorted, void elements closed with `/>`,
entities decoded and only `&`, `<`, `>` escaped again, class lists single-spaced, a string
of only spaces shortened) and makes the same three edits. Anything outside that form (a
stray `<`, an entity it does not know, unbalanced tags, a processing instruction, an
attribute not in double quotes, ...) makes it hand the page to nbconvert's own
BeautifulSoup pass instead (`soup_pass`), so learner content never gets a different page.
tests/nbgrader_plugins/test_accessible_html.py checks many odd pages against BeautifulSoup's,
test_feedback_queries.py every page of the sample class against nbconvert's exporter.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from bs4 import BeautifulSoup
from bs4.builder._htmlparser import HTMLParserTreeBuilder
from bs4.dammit import EntitySubstitution
from bs4.element import nonwhitespace_re

ALT_TEXT = "No description has been provided for this image"
NOTEBOOK_CLASS = "jp-Notebook"
FOCUSABLE_CLASSES = ("jp-Cell-inputWrapper", "jp-OutputArea-output")
# BeautifulSoup's html.parser builder: elements written as <name .../>, attributes read as
# space-separated lists (and written single-spaced), elements whose whitespace is kept
_BUILDER = HTMLParserTreeBuilder()
VOID = frozenset(_BUILDER.empty_element_tags or ())
LIST_ATTRIBUTES = _BUILDER.cdata_list_attributes
PRESERVING = frozenset(_BUILDER.preserve_whitespace_tags or ())
ASCII_SPACES = BeautifulSoup.ASCII_SPACES  # the spaces of a string it shortens
RAW_TEXT = frozenset({"script", "style"})  # html.parser's CDATA elements: written as read
# elements whose text some html.parser versions read as raw text, entities decoded: plain
# when it holds no `<` and no `&` (then every version reads it alike)
ESCAPABLE_RAW_TEXT = frozenset({"title", "textarea"})
# elements whose text BeautifulSoup or html.parser reads as another kind
OTHER_STRINGS = frozenset({"rt", "rp", "template", "plaintext", "xmp"})

TOKEN = re.compile(
    r"<(?:"
    r"!--(?P<comment>.*?)-->"
    r"|/(?P<end>[a-z][a-z0-9]*)>"
    r"|(?P<start>[a-z][a-z0-9]*)(?P<attrs>(?: [a-z][a-z0-9_:.-]*=\"[^\"<>&]*\")*)(?P<slash> ?/)?>"
    r")",
    re.DOTALL,
)
ATTRIBUTE = re.compile(r' ([a-z][a-z0-9_:.-]*)="([^"]*)"')
ENTITY = re.compile(r"&([a-zA-Z][a-zA-Z0-9]*|#[0-9]{1,3}|#x[0-9a-fA-F]{1,2});")
NAMED = EntitySubstitution.HTML_ENTITY_TO_CHARACTER  # what BeautifulSoup decodes a name to
DOCTYPE = "<!DOCTYPE html>"


class NotPlain(Exception):
    """The page is not in the plain form `accessible` writes itself."""


def decoded(entity: re.Match[str]) -> str:
    """What an entity stands for, as BeautifulSoup reads it: a named one it knows, a numeric
    one of a printable ASCII character, a tab or a newline (NotPlain for other numbers,
    which it reads through windows-1252, and for names it does not know)."""
    name = entity[1]
    if not name.startswith("#"):
        if name not in NAMED:
            raise NotPlain
        return NAMED[name]
    number = int(name[2:], 16) if name.startswith("#x") else int(name[1:])
    if not (32 <= number < 127 or number in (9, 10)):
        raise NotPlain
    return chr(number)


def kept(text: str, preserved: bool) -> str:
    """A string as BeautifulSoup keeps it: one of only ASCII spaces becomes one newline (if
    it held one) or one space, outside <pre> and <textarea> (`preserved`)."""
    if not preserved and text and not text.strip(ASCII_SPACES):
        return "\n" if "\n" in text else " "
    return text


def text_out(text: str, preserved: bool) -> str:
    """Text between tags as BeautifulSoup writes it: the entities it reads decoded, kept
    as it keeps strings, then `&`, `<` and `>` escaped (NotPlain for an `&` it would
    read otherwise, or a `<`)."""
    if "<" in text or "\r" in text or "\x00" in text:
        raise NotPlain
    if "&" in text:
        if text.count("&") != len(ENTITY.findall(text)):
            raise NotPlain
        text = ENTITY.sub(decoded, text)
    text = kept(text, preserved)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def attributes_of(name: str, written: str) -> dict[str, str]:
    """The attributes of a start tag, in order, as BeautifulSoup writes them (a list
    attribute's items single-spaced); NotPlain for a repeated one or a carriage return."""
    attrs: dict[str, str] = {}
    listed = set(LIST_ATTRIBUTES.get("*", ())) | set(LIST_ATTRIBUTES.get(name, ()))
    for key, value in ATTRIBUTE.findall(written):
        if key in attrs or "\r" in value or "\x00" in value:
            raise NotPlain
        attrs[key] = " ".join(nonwhitespace_re.findall(value)) if key in listed else value
    return attrs


def has_class(attrs: dict[str, str], wanted: str) -> bool:
    """Whether the class list holds `wanted` (NotPlain when only another case of it)."""
    classes = attrs.get("class", "").split()
    if wanted in classes:
        return True
    if any(c.lower() == wanted.lower() for c in classes):
        raise NotPlain
    return False


def plain_pass(html: str) -> tuple[str, int]:
    """The page as nbconvert's BeautifulSoup pass writes it, and how many images got the
    stand-in alt text (NotPlain when the page is outside the plain form)."""
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # open elements: (name, has the notebook class)
    in_notebook = 0
    preserved = 0  # open <pre> and <textarea> elements
    missing_alt = 0
    position = 0
    if html.startswith(DOCTYPE):
        out.append(DOCTYPE + "\n")  # BeautifulSoup writes a newline after the doctype
        position = len(DOCTYPE)
    while token := TOKEN.search(html, position):
        out.append(text_out(html[position : token.start()], preserved > 0))
        position = token.end()
        if token["comment"] is not None:
            comment = token["comment"]
            if "--" in comment or comment.startswith((">", "->")) or "\r" in comment:
                raise NotPlain
            if not comment.strip(ASCII_SPACES):
                raise NotPlain  # BeautifulSoup shortens it, an empty one to a space
            out.append(token[0])
            continue
        if token["end"] is not None:
            if not stack or stack[-1][0] != token["end"]:
                raise NotPlain
            in_notebook -= stack.pop()[1]
            preserved -= token["end"] in PRESERVING
            out.append(token[0])
            continue
        name = token["start"]
        if name in OTHER_STRINGS:
            raise NotPlain
        attrs = attributes_of(name, token["attrs"])
        if name == "img" and "alt" not in attrs:
            attrs["alt"] = ALT_TEXT
            missing_alt += 1
        if (
            name == "div"
            and in_notebook
            and any([has_class(attrs, wanted) for wanted in FOCUSABLE_CLASSES])
        ):
            attrs["tabindex"] = "0"
        written = "".join(f' {key}="{value}"' for key, value in sorted(attrs.items()))
        if name in VOID:
            out.append(f"<{name}{written}/>")
            continue
        if token["slash"]:
            raise NotPlain  # <div/>: BeautifulSoup writes <div></div>
        out.append(f"<{name}{written}>")
        if name in RAW_TEXT or name in ESCAPABLE_RAW_TEXT:
            close = html.find(f"</{name}>", position)
            text = html[position:close]
            if close < 0 or "</" in text or "\r" in text or "\x00" in text:
                raise NotPlain
            if name in ESCAPABLE_RAW_TEXT:
                if "<" in text or "&" in text:
                    raise NotPlain
                text = text_out(text, preserved > 0 or name in PRESERVING)
            else:
                text = kept(text, preserved > 0)
            out.append(text + f"</{name}>")
            position = close + len(name) + 3
            continue
        notebook = has_class(attrs, NOTEBOOK_CLASS)
        stack.append((name, notebook))
        in_notebook += notebook
        preserved += name in PRESERVING
    out.append(text_out(html[position:], preserved > 0))
    if stack:
        raise NotPlain
    return "".join(out), missing_alt


def soup_pass(html: str) -> tuple[str, int]:
    """nbconvert's own pass (nbconvert 7's HTMLExporter.from_notebook_node, after the
    template): the page written back by BeautifulSoup, and the images given alt text."""
    soup = BeautifulSoup(html, features="html.parser")
    missing_alt = 0
    for elem in soup.select("img:not([alt])"):
        elem.attrs["alt"] = ALT_TEXT
        missing_alt += 1
    for elem in soup.select(".jp-Notebook div.jp-Cell-inputWrapper"):
        elem.attrs["tabindex"] = "0"
    for elem in soup.select(".jp-Notebook div.jp-OutputArea-output"):
        elem.attrs["tabindex"] = "0"
    return str(soup), missing_alt


def accessible(html: str, log: logging.Logger | Any) -> str:
    """The page nbconvert's HTMLExporter returns for its rendered template `html`, with its
    warning about missing alt text."""
    try:
        page, missing_alt = plain_pass(html)
    except NotPlain:
        page, missing_alt = soup_pass(html)
    if missing_alt:
        log.warning("Alternative text is missing on %s image(s).", missing_alt)
    return page
