"""Notebook hygiene: strip run-dependent noise so git stores only what a reader needs.

Removes per-cell execution timings, widget state blobs, widget views that have a still
picture to show instead (a view without its state cannot be displayed), and stray
metadata, and sets
the kernelspec every notebook in this course runs with.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

import nbformat

from autograder.grading.inert import COURSE_KERNELSPEC, COURSE_LANGUAGE_INFO

# Cell metadata that nbgrader, nbval and the lessons rely on; everything else goes.
KEPT_CELL_METADATA = {"nbgrader", "tags", "deletable", "editable", "slideshow"}
KEPT_NOTEBOOK_METADATA = {"kernelspec", "language_info"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a stored output can show instead of a live widget (whose state is never stored).
STILL_TYPES = {"text/html", "image/png"}


def _drop_dead_widget_views(cell: Any) -> None:
    """A widget view stored without its state cannot be shown ("model not found"):
    drop it from outputs that carry a still picture to show instead."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if WIDGET_VIEW in data and STILL_TYPES & set(data):
            del data[WIDGET_VIEW]


def clean(nb: Any) -> Any:
    """Return a cleaned copy of a notebook node."""
    nb = copy.deepcopy(nb)
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in KEPT_NOTEBOOK_METADATA}
    nb.metadata["kernelspec"] = dict(COURSE_KERNELSPEC)
    nb.metadata["language_info"] = dict(COURSE_LANGUAGE_INFO)
    for cell in nb.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in KEPT_CELL_METADATA}
        if cell.get("attachments") == {}:
            del cell["attachments"]
        _drop_dead_widget_views(cell)
    return nb


def needs_cleaning(path: Path) -> bool:
    """True when the notebook at `path` is not clean (or cannot be read)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return True
    return bool(clean(nb) != nb)


def main(argv: list[str] | None = None) -> int:
    """Clean notebooks in place, or with --check only report the ones that need it."""
    parser = argparse.ArgumentParser(
        prog="clean_notebooks",
        description="Strip execution timings, widget state and stray metadata from notebooks.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebooks to clean in place")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 naming unclean notebooks"
    )
    args = parser.parse_args(argv)
    dirty = 0
    for path in args.notebooks:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as error:  # a corrupt notebook is reported, never rewritten
            print(f"{path}: cannot read notebook: {error}", file=sys.stderr)
            dirty += 1
            continue
        cleaned = clean(nb)
        if cleaned == nb:
            continue
        if args.check:
            dirty += 1
            print(f"{path}: needs cleaning (run: python tools/clean_notebooks.py {path})")
        else:
            nbformat.write(cleaned, path)
            print(f"cleaned {path}")
    return 1 if dirty else 0


if __name__ == "__main__":
    sys.exit(main())
