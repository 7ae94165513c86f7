"""Learner content made inert before it reaches the instructor's browser.

What the sandbox sends back is the learner's to choose, so the grader keeps only output
types that render as text or a picture (`SAFE_MIME`), rebuilds every output from
checked fields, and neutralises learner-written markdown and raw cells (no raw HTML, no
script URLs, no attachments), so `autograded/`, feedback HTML and formgrader show the
learner's work without running any of it.
"""

from __future__ import annotations

import html
import re
from typing import Any

SAFE_MIME = ("text/plain", "image/png", "image/jpeg")
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
MAX_STRING = 1_000_000
_GAP = r"[\s\x00-\x1f]*"
SCRIPT_SCHEME = re.compile(
    "(?i)(" + "|".join(_GAP.join(word) for word in ("javascript", "vbscript", "data", "file")) + ")"
    + _GAP + ":"
)  # fmt: skip
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")


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
            count = output.get("execution_count")
            safe["execution_count"] = count if type(count) is int else None
        return safe
    return None


def inert_markdown(source: str) -> str:
    """Learner markdown with raw HTML shown as text and script URLs broken."""
    return SCRIPT_SCHEME.sub(lambda m: m.group(1) + " :", html.escape(source, quote=False))


def make_inert(notebook: Any, instructor_ids: set[str]) -> None:
    """Neutralise every markdown/raw cell the learner wrote, and notebook metadata, in place."""
    for key in list(notebook.metadata):
        if key not in KEPT_NOTEBOOK_METADATA:
            del notebook.metadata[key]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("locked") and meta.get("grade_id") in instructor_ids:
            continue  # restored from the instructor's version by nbgrader
        cell.pop("attachments", None)
        cell.metadata.pop("format", None)
        cell.metadata.pop("raw_mimetype", None)
        cell.source = inert_markdown(cell.source)
