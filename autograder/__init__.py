"""The grading side of the course: checks that teach, and a safe, parallel grader.

`from autograder import Exercise` is what a learner's notebook writes; the name is loaded
on first use, so `import autograder` (and with it `autograder.cli`) loads nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.learner.check import Exercise

__all__ = ["Exercise"]


def __getattr__(name: str) -> Any:
    """`Exercise` from the learner's package, imported when first asked for."""
    if name == "Exercise":
        from autograder.learner.check import Exercise

        return Exercise
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
