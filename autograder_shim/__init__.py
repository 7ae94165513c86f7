"""What `import autograder` finds inside the grading sandbox: no answers, only stand-ins.

`autograder grade` mounts this package (and the worker's own answer-free modules)
as `autograder` in the sandbox, never the real package, so nothing a submission can
import or read knows a reference value, a diagnosis or a function's expected output.
It offers what the solution notebooks' locked cells call:

- `Exercise(name).given(*names)`: the learner's given values, which the grader computed
  outside the sandbox and injected for this notebook (`set_notebook`), printed with
  `format_givens` (the real package prints them the same way), then the learner's problem
  in words where the exercise's structure varies (injected too: `specs.problem_words`,
  the line the real package prints under them);
- `Exercise(name).practise()`: says practice numbers are off while grading;
- `Exercise(name).check(*names)`, `.check_function(name)` and `.check_class(name)`: a
  neutral line; the verdict is computed by the grader from the notebook's text, the
  function's results and the numbers the class gave on the grader's graphs (built by
  `autograder.core.value_build`, also mounted: it knows no answer).
"""

from __future__ import annotations

import math

__all__ = ["Exercise", "format_givens", "set_notebook"]

_GIVENS: dict[str, float] = {}
_LEARNER: list[str] = [""]
_PROBLEM: list[str] = [""]

NEUTRAL = "(checked by the grader when the notebook is graded)"
SOURCE = "the folder autograder is grading"


def set_notebook(givens: dict[str, float], learner: str, problem: str = "") -> None:
    """The given values, learner and problem in words ('' for an exercise with one
    structure) of the notebook about to run (set by the worker)."""
    _GIVENS.clear()
    _GIVENS.update({str(k): float(v) for k, v in givens.items() if isinstance(v, int | float)})
    _LEARNER[0] = str(learner)
    _PROBLEM[0] = str(problem)


def format_number(value: float) -> str:
    """A number as the course's messages show it: 12.0, -4.0, 0.0408."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return f"{value + 0.0:.1f}"
    return f"{value:.6g}"


def format_givens(learner: str, values: dict[str, float]) -> str:
    """Whose numbers these are, as the real `Exercise.given` says it while grading."""
    shown = ", ".join(f"{name} = {format_number(value)}" for name, value in values.items())
    return f"Numbers of {learner or 'the learner'} ({SOURCE}): {shown}"


class Exercise:
    """Stand-in for `autograder.Exercise` inside the grading sandbox."""

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __repr__(self) -> str:
        return f"Exercise({self.name!r})"

    def given(self, *names: str) -> float | tuple[float, ...]:
        """The learner's given values by name (one value for one name, else a tuple),
        printed, then the learner's problem when the exercise's structure varies."""
        missing = [n for n in names if n not in _GIVENS]
        if missing:
            raise KeyError(
                f"{self.name} has no given value named {', '.join(map(repr, missing))} "
                f"for this learner; known: {', '.join(_GIVENS) or 'none'}"
            )
        values = {n: _GIVENS[n] for n in names}
        print(format_givens(_LEARNER[0], values))
        if _PROBLEM[0]:
            print(_PROBLEM[0])
        found = tuple(values.values())
        return found[0] if len(found) == 1 else found

    def practise(self, on: bool = True, new_structure: bool = False) -> None:
        """Practice numbers are off while grading, as in the real package."""
        print("Practice numbers are off while the notebook is graded.")

    def check(self, *names: str) -> None:
        """Neutral: the grader judges the answers from the notebook's text."""
        print(NEUTRAL)

    def check_function(self, name: str, seed: int | None = None) -> None:
        """Neutral: the grader judges the function on cases it draws itself."""
        print(NEUTRAL)

    def check_class(self, name: str, seed: int | None = None) -> None:
        """Neutral: the grader builds its own random graphs with the class and judges them."""
        print(NEUTRAL)
