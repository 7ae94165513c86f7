"""Cells run as a learner's kernel runs them: each scenario in a fresh real IPython
`InteractiveShell`, all of them in one subprocess (IPython's own, not a stand-in)."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import stall_guard

RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    results = {}
    for name, cells in json.load(sys.stdin).items():
        InteractiveShell.clear_instance()
        shell = InteractiveShell.instance(config=config)
        outputs = []
        for cell in cells:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                result = shell.run_cell(cell, store_history=True)
            error = result.error_in_exec
            outputs.append({
                "ok": result.success,
                "out": buffer.getvalue(),
                "error": type(error).__name__ if error is not None else None,
                **({"message": str(error)} if error is not None else {}),
            })
        results[name] = outputs
    print(json.dumps(results))
    """
)
REPO = Path(__file__).resolve().parents[1]


def run_in_shells(
    scenarios: Mapping[str, Sequence[str]], home: Path, learner: str
) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's cells run in order in a fresh shell, as `learner` (JUPYTERHUB_USER):
    per cell, whether it ran, what it printed, and the error it raised (its type's name and,
    under "message", what it says)."""
    done = stall_guard.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(scenarios),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={
            "IPYTHONDIR": str(home),
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "JUPYTERHUB_USER": learner,
        },
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[dict[str, Any]]] = json.loads(done.stdout.splitlines()[-1])
    return result


def checked_cells(exercise: str, part: str, lines: str) -> list[str]:
    """A learner's notebook, cell by cell: `Exercise(exercise)`, the given line and every
    other part right (`evaluation.corpus.cells`), `lines` for `part`, then its check."""
    from evaluation.corpus import cells

    setup = f"from autograder.learner.check import Exercise\nexercise = Exercise({exercise!r})"
    return [setup, *cells(exercise, part, lines), f"exercise.check({part!r})"]
