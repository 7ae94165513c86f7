"""Hard limits on what the grader itself reads and records for one submission.

The sandbox bounds what a notebook may do while it runs; these bound the grader's own
work on what comes back and on what was submitted, so no submission can hold the
grading process for long (configure as c.Budgets.<name> in nbgrader_config.py). What
exceeds a budget is refused with a reason that names it, never half-read.
"""

from __future__ import annotations

import ast
from typing import Any

from traitlets import Float, Int
from traitlets.config import Configurable

from autograder.diagnosis.byhand_cells import SALVAGE_PARSES


def source_length(cell: dict[str, Any]) -> int:
    """Characters of a cell's source as stored (a string, or a list of lines)."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return sum(len(line) for line in source if isinstance(line, str))
    return len(source) if isinstance(source, str) else 0


class BudgetExceeded(Exception):
    """A submission asks more of the grader than its budgets allow; the text says which."""


class Budgets(Configurable):  # type: ignore[misc]
    """What the grader reads and records per submission and per notebook."""

    max_notebook_mb = Float(20.0, help="Largest notebook file read, MB.").tag(config=True)
    max_cells = Int(1000, help="Cells of one notebook.").tag(config=True)
    max_source_chars = Int(2_000_000, help="Characters of all cells of one notebook.").tag(
        config=True
    )
    max_parse_attempts = Int(
        20_000,
        help="Parses the grader may spend reading one notebook's answers (worst case: a cell "
        "that does not parse costs one parse per recovered statement).",
    ).tag(config=True)
    max_outputs = Int(2000, help="Outputs recorded for one notebook.").tag(config=True)
    max_json_values = Int(
        50_000,
        help="Values (objects, lists, strings, numbers) in one submitted notebook file: its "
        "metadata and outputs cost the grader as much as its cells do (an honest notebook "
        "of this course holds under 1,000).",
    ).tag(config=True)
    max_submission_files = Int(200, help="Files in one submission folder.").tag(config=True)
    max_submission_mb = Float(100.0, help="Bytes in one submission folder, MB.").tag(config=True)
    max_render_seconds = Float(
        60.0,
        help="Wall-clock seconds to render one learner's feedback pages (an honest "
        "assignment takes about 2 s); over it, that learner's feedback fails with a reason.",
    ).tag(config=True)

    def check_values(self, name: str, data: Any) -> None:
        """Refuse a notebook file holding more JSON values than the budget; the count stops
        at the budget, so it costs at most that many steps."""
        count, pending = 1, [data]
        while pending:
            value = pending.pop()
            children = value.values() if isinstance(value, dict) else value
            if not isinstance(value, dict | list):
                continue
            count += len(children)
            if count > self.max_json_values:
                raise BudgetExceeded(
                    f"{name} holds more than {self.max_json_values} values in its cells, "
                    "metadata and outputs, over the budget (c.Budgets.max_json_values)"
                )
            pending.extend(c for c in children if isinstance(c, dict | list))

    def check_cells(self, name: str, cells: list[Any]) -> None:
        """Refuse a notebook with too many cells or characters."""
        if len(cells) > self.max_cells:
            raise BudgetExceeded(
                f"{name} has {len(cells)} cells, over the budget of {self.max_cells} "
                "(c.Budgets.max_cells)"
            )
        chars = sum(map(source_length, cells))
        if chars > self.max_source_chars:
            raise BudgetExceeded(
                f"{name} holds {chars} characters of cells, over the budget of "
                f"{self.max_source_chars} (c.Budgets.max_source_chars)"
            )

    def check_parses(self, name: str, sources: list[str]) -> None:
        """Refuse a notebook whose answers could cost more parses than the budget."""
        worst = 0
        for source in sources:
            worst += 1
            try:
                ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
                worst += SALVAGE_PARSES + 1
            if worst > self.max_parse_attempts:
                raise BudgetExceeded(
                    f"{name} has too many cells that do not parse: reading its answers could "
                    f"take more than {self.max_parse_attempts} parses "
                    "(c.Budgets.max_parse_attempts)"
                )
