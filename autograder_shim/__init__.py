"""What `import autograder` finds inside the grading sandbox: no answers, only stand-ins.

`autograder grade` mounts this package (and the worker's `execution.py` and `framing.py`)
as `autograder` in the sandbox, never the real package, so nothing a submission can
import or read knows a reference value, a diagnosis or a function's expected output.
It offers what the solution notebooks' locked cells call:

- `Exercise(name).given(*names)`: the learner's given values, which the grader computed
  outside the sandbox and injected for this notebook (`set_notebook`), printed with
  `format_givens` (the real package prints them the same way);
- `Exercise(name).check(*names)`, `.check_function(name)` and `.check_class(name)`: a
  neutral line; the verdict is computed by the grader from the notebook's text, the
  function's results and the numbers the class gave on the grader's graphs (built by
  `autograder.value_build`, also mounted: it knows no answer).
"""

from __future__ import annotations

__all__ = ["Exercise", "format_givens", "set_notebook"]

_GIVENS: dict[str, float] = {}
_LEARNER: list[str] = [""]

NEUTRAL = "(checked by the grader when the notebook is graded)"


def set_notebook(givens: dict[str, float], learner: str) -> None:
    """The given values and learner of the notebook about to run (set by the worker)."""
    _GIVENS.clear()
    _GIVENS.update({str(k): float(v) for k, v in givens.items() if isinstance(v, int | float)})
    _LEARNER[0] = str(learner)


def format_givens(learner: str, values: dict[str, float]) -> str:
    """The line that shows whose numbers these are, e.g. `ada's numbers: x = 2.0, w = 3.0`."""
    shown = ", ".join(f"{name} = {value!r}" for name, value in values.items())
    return f"{learner}'s numbers: {shown}" if learner else f"your numbers: {shown}"


class Exercise:
    """Stand-in for `autograder.Exercise` inside the grading sandbox."""

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __repr__(self) -> str:
        return f"Exercise({self.name!r})"

    def given(self, *names: str) -> float | tuple[float, ...]:
        """The learner's given values by name (one value for one name, else a tuple)."""
        missing = [n for n in names if n not in _GIVENS]
        if missing:
            raise KeyError(
                f"{self.name} has no given value named {', '.join(map(repr, missing))} "
                f"for this learner; known: {', '.join(_GIVENS) or 'none'}"
            )
        values = {n: _GIVENS[n] for n in names}
        print(format_givens(_LEARNER[0], values))
        found = tuple(values.values())
        return found[0] if len(found) == 1 else found

    def check(self, *names: str) -> None:
        """Neutral: the grader judges the answers from the notebook's text."""
        print(NEUTRAL)

    def check_function(self, name: str, seed: int | None = None) -> None:
        """Neutral: the grader judges the function on cases it draws itself."""
        print(NEUTRAL)

    def check_class(self, name: str, seed: int | None = None) -> None:
        """Neutral: the grader builds its own random graphs with the class and judges them."""
        print(NEUTRAL)
