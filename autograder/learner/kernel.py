"""What any `Exercise` does in the learner's kernel, whoever judges: answer-free.

The self-study `Exercise` (`learner.check`, judging in the kernel) and the class one
(`autograder_client`, asking the course's check service) share these: reading the
learner's namespace and cells, saying whose numbers are in use, and showing verdicts
(✓ lines printed, ✗ lines as `AnswerMismatch`: raised, or in a learner's front end shown
without stopping the cells after it: `fail`), and what a check says before
anything is judged (a function or class not defined yet, an error's name). Shipped in the students'
environment (`checks.learner_package`), so it imports only `core.verdict`.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

from autograder.core.verdict import Verdict, format_value

PRACTICE_PREFIX = "(practice numbers) "
PRACTICE_SOURCE = "fresh numbers, not graded"
WORKING_AFTER = 1.0
"""Seconds a check runs before it says it is working."""
WORKING = "⏳ Checking against PyTorch (the first check of a notebook loads it: a few seconds)…"


INTERNAL_PATH = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?")
"""PyTorch's pointer into its own C++ build, which tells a learner nothing."""


@contextmanager
def plain_warnings() -> Iterator[list[str]]:
    """Catch the warnings raised inside; the list then holds each once, as one line without
    PyTorch's internal path (for the check to print)."""
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield found
        finally:
            for warning in caught:
                text = INTERNAL_PATH.sub("", str(warning.message)).strip()
                line = f"{warning.category.__name__}: {text}"
                if line not in found:
                    found.append(line)


@contextmanager
def working(after: float = WORKING_AFTER, quiet: bool = False) -> Iterator[threading.Event]:
    """Say the check is working if it takes more than `after` seconds (`quiet`: never, as
    while grading); the event is set once said. In a notebook the line is a display that
    is emptied when the check ends, so no cell keeps it."""
    shown, lock = threading.Event(), threading.Lock()
    handles: list[Any] = []
    finished = [False]

    def say() -> None:
        with lock:
            if finished[0]:
                return
            if ipython_shell() is None:
                print(WORKING, flush=True)
            else:
                from IPython.display import display

                handles.append(display({"text/plain": WORKING}, raw=True, display_id=True))
            shown.set()

    timer = threading.Timer(after, say)
    timer.daemon = True
    if not quiet:
        timer.start()
    try:
        yield shown
    finally:
        timer.cancel()
        with lock:
            finished[0] = True
            for handle in handles:
                handle.update({"text/plain": ""}, raw=True)


class AnswerMismatch(AssertionError):
    """A graded answer does not match PyTorch; the text is the teaching message."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: just the message."""
        return f"AnswerMismatch: {self}".split("\n")


def not_defined_yet(name: str, function: bool) -> AnswerMismatch:
    """What a check of a function (or class) the learner has not defined yet says."""
    what = "is not a function yet" if function else "is not defined yet"
    return AnswerMismatch(f"✗ `{name}` {what}: run the cell that defines it.")


def error_text(error: BaseException) -> str:
    """How an error the learner's code raised is named in a verdict ("ValueError: ...")."""
    return f"{type(error).__name__}: {error}"


def given_line(learner: str, source: str, values: Mapping[str, float]) -> str:
    """How the given cell says whose numbers they are."""
    shown = ", ".join(f"{n} = {format_value(v)}" for n, v in values.items())
    return f"Numbers of {learner} ({source}): {shown}"


def pick_givens(
    exercise: str,
    values: Mapping[str, float],
    given_names: Sequence[str],
    names: Sequence[str],
    whose: tuple[str, str] | None,
    problem: str = "",
) -> Any:
    """The given values `names` (one float, or a tuple in order), after printing whose they
    are: `whose` is (learner, where the identity came from), None for practice numbers;
    then `problem`, the learner's own structure in words, when there is one."""
    unknown = [n for n in names if n not in values]
    if unknown or not names:
        valid = ", ".join(given_names)
        raise KeyError(f"{exercise} gives no {', '.join(unknown) or 'name'}; valid: {valid}")
    chosen = {n: values[n] for n in names}
    learner, source = whose if whose is not None else ("practice", PRACTICE_SOURCE)
    print(given_line(learner, source, chosen))
    if problem:
        print(problem)
    picked = tuple(chosen.values())
    return picked[0] if len(picked) == 1 else picked


def ipython_shell() -> Any:
    """The running IPython shell, or None (without importing IPython)."""
    module = sys.modules.get("IPython")
    if module is None:
        return None
    return module.get_ipython()


def learner_state(frame: FrameType | None) -> tuple[Mapping[str, object], Sequence[str] | None]:
    """The learner's namespace and the source of the cells run so far (None outside IPython)."""
    shell = ipython_shell()
    if shell is not None:
        history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", None)
        if not isinstance(history, list):
            history = shell.user_ns.get("In")
        cells = [c for c in history if isinstance(c, str)] if isinstance(history, list) else []
        # a shell that stores no history (run_cell without store_history) has nothing to read
        return shell.user_ns, cells if any(c.strip() for c in cells) else None
    return (frame.f_globals if frame is not None else {}), None


def front_end_shell() -> Any:
    """The kernel's shell while a learner runs the notebook from a front end (JupyterLab),
    None otherwise: outside a kernel, and while nbgrader executes it (autograde, validate)."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return None
    shell = ipython_shell()
    return shell if getattr(shell, "kernel", None) is not None else None


def fail(message: str) -> None:
    """A ✗: AnswerMismatch raised; in a learner's front end, shown as that error's output
    without raising, so Restart and Run All goes on to the last cell. The cell's output is an
    error either way (nbgrader scores a test cell with an error output 0; a grade is judged
    by the grader anyway, never from this output)."""
    mismatch = AnswerMismatch(message)
    shell = front_end_shell()
    if shell is None:
        raise mismatch
    shell.showtraceback((AnswerMismatch, mismatch, None))


def show_verdicts(verdicts: Sequence[Verdict], practice: bool, after: str = "") -> None:
    """Print the passed verdicts; the failed ones are a ✗ (`fail`), `after` appended."""
    prefix = PRACTICE_PREFIX if practice else ""
    failures = [prefix + v.message for v in verdicts if not v.passed]
    for v in verdicts:
        if v.passed:
            print(prefix + v.message)
    if failures:
        fail("\n".join(failures) + after)
