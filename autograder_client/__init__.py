"""What `import autograder` finds in a class's students' environment: checks asked of the
course's check service, and no answer key.

A class installs this file as `autograder/__init__.py`, beside the answer-free modules it
uses (`checks.learner_package` lists them), so the course's notebooks run
unchanged: `Exercise(name)` offers `.given()`, `.check()`, `.check_function()`,
`.check_class()` and `.practise()` as in self-study. The learner's numbers and every
verdict come from the service (`checks.server`), which the hub tells who is
asking from the kernel's JUPYTERHUB_API_TOKEN. The kernel runs the learner's own code on
cases the service drew and sends back only what it returned, the answer cells' source and
the values of the names a check reads. When the service cannot answer, the learner is told
so (`CheckUnavailable`): never a ✓ or ✗ the service did not give.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from autograder.core.verdict import MISSING, Verdict
from autograder.learner.kernel import (
    PRACTICE_SOURCE,
    AnswerMismatch,
    error_text,
    given_line,
    learner_state,
    not_defined_yet,
    pick_givens,
    plain_warnings,
    show_verdicts,
)
from autograder.learner.wire import encode_value

__all__ = ["AnswerMismatch", "CheckUnavailable", "Exercise"]

URL_VARIABLE = "AUTOGRADER_CHECKS_URL"
TIMEOUT_VARIABLE = "AUTOGRADER_CHECKS_TIMEOUT"
DEFAULT_TIMEOUT = 30.0  # s: past the service's deadline (5 s of a judge's CPU) on a busy machine
SAID_WHY = (413, 429, 503, 504)  # the service's refusals whose reason the learner reads
MAX_CELLS = 2000  # the service reads at most this many of a kernel's latest cells
LONG_HISTORY = (
    "\n  This kernel has run more than {count} cells, and only the last {count} are read: "
    "numbers given or worked out before them count as unknown. Restart the kernel and run "
    "the notebook from the top."
)


class CheckUnavailable(RuntimeError):
    """The check service gave no verdict: the answer is neither right nor wrong yet."""

    def _render_traceback_(self) -> list[str]:
        return f"CheckUnavailable: {self}".split("\n")


def _unavailable(why: str) -> CheckUnavailable:
    return CheckUnavailable(
        f"⚠ Not checked: {why}.\n  Your answer was neither accepted nor rejected. Run the "
        "cell again in a minute; if this keeps happening, tell your instructor."
    )


def ask(action: str, request: dict[str, Any]) -> dict[str, Any]:
    """The check service's answer to `request`; CheckUnavailable when there is none
    (KeyError carries a refusal of the request itself: an unknown exercise or part)."""
    url, token = os.environ.get(URL_VARIABLE), os.environ.get("JUPYTERHUB_API_TOKEN")
    if not url or not token:
        raise _unavailable(
            f"this kernel does not know the course's check service ({URL_VARIABLE} and "
            "JUPYTERHUB_API_TOKEN come with a class hub's server)"
        )
    timeout = float(os.environ.get(TIMEOUT_VARIABLE) or DEFAULT_TIMEOUT)
    message = urllib.request.Request(
        url.rstrip("/") + f"/api/{action}",
        data=json.dumps(request).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(message, timeout=timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            reason = str(json.loads(error.read()).get("error", ""))
        except (ValueError, AttributeError, OSError):
            reason = ""
        if error.code == 400 and action == "exercise":
            raise KeyError(reason) from None
        if error.code == 400:
            raise _unavailable(f"the check service could not judge this: {reason}") from None
        if error.code == 403:
            raise _unavailable(
                f"the hub did not let this kernel ask ({reason or 'refused'})"
            ) from None
        if error.code in SAID_WHY and reason:  # too large, not now, busy, stopped
            raise _unavailable(reason) from None
        raise _unavailable(f"the check service failed (HTTP {error.code})") from None
    except TimeoutError:
        raise _unavailable(f"the check service did not answer within {timeout:g} s") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        why = getattr(error, "reason", error)
        raise _unavailable(f"the check service cannot be reached ({why})") from None
    if not isinstance(answer, dict):
        raise _unavailable("the check service's answer was not understood")
    return answer


def _verdicts(answer: dict[str, Any]) -> list[Verdict]:
    found = answer.get("verdicts")
    if not isinstance(found, list) or not found:
        raise _unavailable("the check service's answer held no verdict")
    return [Verdict(bool(v["passed"]), str(v["message"]), str(v.get("reason", ""))) for v in found]


class Exercise:
    """One exercise, with the learner's own numbers, checked by the course's check service."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._about = ask("exercise", {"exercise": name})
        self.learner: str = self._about["learner"]
        self.source: str = self._about["source"]
        self._practice: dict[str, Any] | None = None  # {"givens", "seal"} from the service

    def __repr__(self) -> str:
        return f"Exercise({self.name!r})"

    @property
    def givens(self) -> dict[str, float]:
        """The numbers in use: the learner's own, or practice numbers."""
        chosen = self._practice["givens"] if self._practice is not None else self._about["givens"]
        return {str(k): float(v) for k, v in chosen.items()}

    def given(self, *names: str) -> Any:
        """The given values `names` (one float, or a tuple in order); prints whose they are,
        and the learner's problem where the exercise's structure varies."""
        whose = None if self._practice is not None else (self.learner, self.source)
        about = self._practice if self._practice is not None else self._about
        problem = str(about.get("words") or "")
        return pick_givens(
            self.name, self.givens, self._about["given_names"], names, whose, problem
        )

    def practise(self, on: bool = True, new_structure: bool = False) -> None:
        """Fresh random numbers to practise with (not graded), on your own problem;
        `new_structure=True` practises another structure too. `practise(False)` to go back
        to your own numbers."""
        if os.environ.get("NBGRADER_EXECUTION") == "autograde":
            print("Practice numbers are off while the notebook is graded.")
            return
        request = {"exercise": self.name, "new_structure": new_structure}
        self._practice = ask("practice", request) if on else None
        if on:
            print(given_line("practice", PRACTICE_SOURCE, self.givens))
            if self._practice is not None and self._practice.get("words"):
                print(self._practice["words"])
            print("Run the Given cell again, then your answers and their checks.")
        else:
            print(f"Back to your own numbers ({self.learner}): run the Given cell again.")

    def _ask_verdicts(self, action: str, request: dict[str, Any], after: str = "") -> None:
        request = {"exercise": self.name, "practice": self._practice, **request}
        verdicts = _verdicts(ask(action, request))
        show_verdicts(verdicts, practice=self._practice is not None, after=after)

    def check(self, *names: str) -> None:
        """Check the named answers (all hand answers when none is named); raise AnswerMismatch."""
        namespace, cells = learner_state(sys._getframe(1))
        hand_parts = self._about["hand_parts"]
        for name in names:
            if name not in hand_parts:
                raise KeyError(f"{self.name} grades no {name!r}; valid: {', '.join(hand_parts)}")
        values = {
            n: encode_value(namespace[n])
            for n in self._about["reads"]
            if namespace.get(n, MISSING) is not MISSING
        }
        shown = list(cells[-MAX_CELLS:]) if cells is not None else None
        request = {
            "names": list(names),
            "cells": shown,
            "values": values,
            "kernel": bool(namespace),
        }
        long = cells is not None and len(cells) > MAX_CELLS
        self._ask_verdicts("check", request, LONG_HISTORY.format(count=MAX_CELLS) if long else "")

    def check_function(self, name: str, seed: int | None = None) -> None:
        """Run the learner's function `name` on the service's cases; raise AnswerMismatch."""
        tasks = self._about["functions"]
        if name not in tasks:
            raise KeyError(f"{self.name} has no function {name!r}; valid: {', '.join(tasks)}")
        namespace, _ = learner_state(sys._getframe(1))
        function = namespace.get(name, MISSING)
        if not callable(function):
            raise not_defined_yet(name, function=True)
        drawn = ask("cases", {"exercise": self.name, "function": name, "seed": seed})
        request: dict[str, Any] = {"function": name, **drawn}
        results: list[dict[str, Any]] = []
        with plain_warnings() as warned:
            for index, case in enumerate(drawn["cases"]):
                try:
                    results.append(encode_value(function(*case)))
                except Exception as error:
                    request["raised"] = {"index": index, "error": error_text(error)}
                    break
        for line in warned:  # PyTorch's own words, without its internal C++ path
            print(f"While running {name}, PyTorch warned: {line}")
        self._ask_verdicts("function", {**request, "results": results})

    def check_class(self, name: str, seed: int | None = None) -> None:
        """Build the service's random graphs with the learner's class; raise AnswerMismatch."""
        from autograder.core.value_build import evaluate_all

        classes = self._about["classes"]
        if name not in classes:
            raise KeyError(f"{self.name} has no class part {name!r}; valid: {', '.join(classes)}")
        namespace, _ = learner_state(sys._getframe(1))
        cls = namespace.get(classes[name], MISSING)
        if not callable(cls):
            raise not_defined_yet(classes[name], function=False)
        drawn = ask("graphs", {"exercise": self.name, "part": name, "seed": seed})
        built = json.loads(json.dumps(evaluate_all(cls, drawn["graphs"]), default=str))
        self._ask_verdicts("class", {"part": name, **drawn, "results": built})
