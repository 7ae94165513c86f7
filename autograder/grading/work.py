"""What travels through a grading run: a submission, its prepared notebooks, the outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.grading.trusted import TrustedPlan


@dataclass
class PreparedNotebook:
    """One sanitised notebook, ready to execute."""

    notebook_id: str
    notebook: Any
    plan: TrustedPlan
    code_cells: list[int]  # indices of the code cells, in order
    givens: dict[str, float] = field(default_factory=dict)  # computed here, for the shim
    with_torch: bool = False  # the instructor's locked code uses torch (`uses_torch`)


@dataclass
class Submission:
    """One student's submission of one assignment."""

    student: str
    assignment: str
    path: Path
    fingerprint: str = ""
    notebook_ids: list[str] = field(default_factory=list)
    """The assignment's notebooks as the gradebook listed them when it was discovered."""
    notebooks: list[PreparedNotebook] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}"


@dataclass
class Outcome:
    """What happened to one submission in this run."""

    submission: Submission
    status: str  # graded | failed | skipped
    reasons: list[str] = field(default_factory=list)
    score: float | None = None
    max_score: float | None = None
    seconds: float = 0.0
