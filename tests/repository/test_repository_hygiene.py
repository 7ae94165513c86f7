"""The repository stores clean notebooks, and only where they belong."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autograder.authoring.hygiene import clean, needs_cleaning

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_HOMES = ("course", "solutions", "exercises", "instructor/sample_class")


def tracked_notebooks() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.ipynb"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [REPO / name for name in listed]


@pytest.mark.processes
def test_every_notebook_lives_in_a_known_folder() -> None:
    strays = [
        str(p.relative_to(REPO))
        for p in tracked_notebooks()
        if not str(p.relative_to(REPO)).startswith(NOTEBOOK_HOMES)
    ]
    assert strays == []


@pytest.mark.processes
def test_no_untitled_notebooks_or_checkpoints() -> None:
    names = [p.relative_to(REPO) for p in tracked_notebooks()]
    assert [n for n in names if n.name.startswith("Untitled")] == []
    assert [n for n in names if ".ipynb_checkpoints" in n.parts] == []


@pytest.mark.parametrize(
    "path",
    [p for p in tracked_notebooks() if not str(p.relative_to(REPO)).startswith("instructor")],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_notebook_is_clean(path: Path) -> None:
    """No execution timings, widget state or stray metadata (tools/clean_notebooks.py)."""
    assert not needs_cleaning(path), f"run: python tools/clean_notebooks.py {path}"


def test_the_cleaner_removes_what_it_should() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00"}
    cell.metadata["tags"] = ["keep-me"]
    nb.cells.append(cell)
    cleaned = clean(nb)
    assert "widgets" not in cleaned.metadata
    assert "execution" not in cleaned.cells[0].metadata
    assert cleaned.cells[0].metadata["tags"] == ["keep-me"]
    assert cleaned.metadata["kernelspec"]["name"] == "python3"
