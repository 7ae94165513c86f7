"""Answer kinds behind one interface: the in-kernel checker and the trusted grader both call
`judge(part, context)`.

Kinds: a hand number (forward values, local slopes, gradients), a true/false (or counted)
fact, a code function (the learner's function called on drawn cases) and a class (the
learner's `Value` built on random JSON graphs the grader drew). A new kind adds one
`AnswerKind` to `KINDS`; callers do not change.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from autograder.core.quantities import Quantity
from autograder.core.spec import Part
from autograder.core.verdict import MISSING, Verdict, format_value
from autograder.diagnosis.byhand import HandAnswer
from autograder.diagnosis.derivation import derivation_verdict
from autograder.diagnosis.diagnose import diagnose
from autograder.diagnosis.references import reference_quantities
from autograder.specs import exercise_spec, lesson_spec

HAND_EXAMPLE = "the arithmetic with the given names, as the lesson's `dL_da = 2 * (a - y)`"
"""What "by hand" looks like: names, never the numbers they hold (each learner has their own)."""
ALLOWED_FORM = (
    "Write numbers with + - * / ** and ( ), names you assigned that way, or max, min, abs, "
    "pow and math's functions (math.exp, math.sqrt)."
)


@dataclass
class JudgeContext:
    """What a verdict may use: the learner's numbers, answers read from cells, results."""

    exercise: str
    givens: Mapping[str, float]
    hand: Mapping[str, HandAnswer] | None = None
    """Answers read from the cell sources (None: no source to read)."""
    runtime: Mapping[str, object] = field(default_factory=dict)
    """The kernel's namespace (empty in the grader)."""
    calls: Mapping[str, tuple[Sequence[tuple[float, ...]], Sequence[object] | str]] = field(
        default_factory=dict
    )
    """function name -> (cases, results, or why it could not be called)."""
    builds: Mapping[str, tuple[Sequence[dict[str, Any]], Sequence[object] | str]] = field(
        default_factory=dict
    )
    """class part -> (graphs, the numbers the learner's class gave, or why there are none)."""

    def quantities(self) -> dict[str, Quantity]:
        """PyTorch's values for this learner's numbers."""
        return reference_quantities(self.exercise, self.givens)

    def answers(self) -> dict[str, object]:
        """The learner's numbers by name (for follow-on errors)."""
        if self.hand is not None:
            return {n: a.value for n, a in self.hand.items() if a.status == "number"}
        return dict(self.runtime)


class AnswerKind(Protocol):
    """How one kind of answer is judged."""

    def judge(self, part: Part, context: JudgeContext) -> Verdict:
        """The verdict on the learner's answer to `part`."""
        ...


def _same_value(runtime: object, hand: float | bool) -> bool:
    import math

    if type(hand) is bool or type(runtime) is bool:
        return runtime is hand
    if type(runtime) not in (int, float) or not isinstance(runtime, int | float):
        return False
    return math.isclose(runtime, hand, rel_tol=1e-9, abs_tol=1e-12)


def lesson_structure_verdict(
    q: Quantity, value: float, answers: Mapping[str, object]
) -> Verdict | None:
    """The verdict on the lesson's formula answered where the learner's own structure asks
    for another (in a class: the lesson's y = x² where theirs is y = x²/2); None when the
    part is stated alike in both, or the value is not the lesson's formula's."""
    from autograder.core.verdict import matches
    from autograder.diagnosis.byhand import evaluate_expression

    spec = q.spec
    if spec is None or spec.structure is None or "[" not in spec.name:
        return None
    lesson = lesson_spec(spec.name)
    if lesson.structure is None or lesson.part(q.name).code == spec.part(q.name).code:
        return None
    names: dict[str, object] = {n: q.values[n] for n in (*spec.given_names, *spec.constants)}
    names.update({n: v for n, v in answers.items() if type(v) in (int, float)})
    try:
        theirs = float(evaluate_expression(lesson.part(q.name).answer, names))
    except (ValueError, ZeroDivisionError, OverflowError, KeyError, TypeError):
        return None
    if not matches(theirs, value) or matches(theirs, float(q.value)):  # type: ignore[arg-type]
        return None
    return Verdict(
        False,
        f"✗ {q.label} = {format_value(value)} is the answer for the lesson's problem "
        f"({lesson.structure.words}), not for yours: {spec.structure.words} (the Given cell "
        "prints it). Work this part out for your own.",
        "lesson_structure",
    )


def judge_hand(
    q: Quantity,
    answer: HandAnswer | None,
    runtime_value: object = MISSING,
    answers: Mapping[str, object] | None = None,
    written: Mapping[str, HandAnswer] | None = None,
) -> Verdict:
    """Verdict on one hand answer: the by-hand rule first, then `diagnose` (which reads the
    formula from `written`, the learner's cells read statically, or from `answer` alone)."""
    name = q.name
    if answer is None:
        return diagnose(q, runtime_value, answers)
    label, status, detail = q.label, answer.status, answer.detail
    example = "True or False" if q.is_bool else HAND_EXAMPLE
    if status == "autograd":
        return Verdict(
            False,
            f"✗ {label}: `{name}` was computed with autograd ({detail}); by hand means by "
            f"hand: write {example}.",
            "autograd",
        )
    if status == "not_arithmetic":
        allowed = "Write True or False: your own prediction." if q.is_bool else ALLOWED_FORM
        return Verdict(
            False,
            f"✗ {label}: `{name}` is not plain arithmetic ({detail}).\n  {allowed}",
            "not_arithmetic",
        )
    if status == "error":
        return Verdict(False, f"✗ {label}: `{name}` could not be read: {detail}.", "error")
    if status == "unanswered" or answer.value is None:
        return Verdict(False, f"✗ {label}: `{name}` is not answered yet: {detail}.", "unanswered")
    if runtime_value is not MISSING and not _same_value(runtime_value, answer.value):
        return Verdict(
            False,
            f"✗ {label}: the notebook holds `{name}` = {format_value(runtime_value)} but your "
            f"cells assign {format_value(answer.value)}; run the answer cell again.",
            "stale",
        )
    if written is None:
        written = {name: answer}
    verdict = diagnose(q, answer.value, answers, written)
    if q.is_bool or verdict.reason in ("tensor", "not_a_number", "not_finite"):
        return verdict
    if not verdict.passed:
        lesson = lesson_structure_verdict(q, float(answer.value), answers or {})  # type: ignore[arg-type]
        if lesson is not None:
            return lesson
    derived = derivation_verdict(q, answer, written, answers or {}, verdict)
    return verdict if derived is None else derived


def carried_forward(
    q: Quantity, answer: HandAnswer, answers: Mapping[str, object]
) -> tuple[HandAnswer, str] | None:
    """An answer blocked only by an earlier part that is not a number (refused, not
    answered), read as its own step: its recipe computed again with PyTorch's value of that
    part (and the learner's own of every other), as an examiner carries an error forward;
    with the part to fix. None when that does not apply."""
    from autograder.diagnosis.byhand import ReplayError, replay
    from autograder.diagnosis.fresh_points import NUMERIC

    spec, blocked = q.spec, answer.blocked_by
    if spec is None or not blocked or answer.recipe is None or answer.status == "number":
        return None
    numeric = [p.name for p in spec.parts if p.kind in NUMERIC]
    if blocked not in numeric or q.name not in numeric:
        return None
    if numeric.index(blocked) >= numeric.index(q.name):
        return None
    givens = {n: float(q.values[n]) for n in (*spec.given_names, *spec.constants)}  # type: ignore[arg-type]
    pinned = {
        n: float(mine) if type(mine := answers.get(n)) in (int, float) else float(q.values[n])  # type: ignore[arg-type]
        for n in numeric
        if n != q.name
    }
    try:
        value = float(replay(answer.recipe, givens, pinned))
    except (ReplayError, ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None
    step = answer.recipe.steps[answer.recipe.length - 1].source
    detail = ast.unparse(step) if isinstance(step, ast.expr) else answer.detail
    carried = HandAnswer(q.name, value, "number", detail[:80], answer.recipe)
    earlier = spec.part(blocked)
    return carried, f"Part {spec.letter(blocked)} ({earlier.label}), `{blocked}`"


class HandNumber:
    """A number (or fact) written by hand: read from the cell source, judged by `diagnose`."""

    def judge(self, part: Part, context: JudgeContext) -> Verdict:
        q = context.quantities()[part.name]
        name = part.name
        runtime = context.runtime.get(name, MISSING)
        answer = context.hand.get(name) if context.hand is not None else None
        answers = context.answers()
        if answer is not None and context.hand is not None:
            carried = carried_forward(q, answer, answers)
            if carried is not None:
                step, fix = carried
                written = {**context.hand, name: step}
                verdict = judge_hand(q, step, MISSING, answers, written)
                note = (
                    f"\n  (Judged as a step from PyTorch's value of {fix}: yours is not a number "
                    "the check can read. Fix that part; this one's step "
                    f"{'is right' if verdict.passed else 'is judged as it stands'}.)"
                )
                return Verdict(verdict.passed, verdict.message + note, verdict.reason)
        if context.hand is not None and answer is None and runtime is not MISSING:
            detail = f"not assigned by a `{name} = ...` line of a cell"
            answer = HandAnswer(name, None, "not_arithmetic", detail)
        if (
            answer is not None
            and answer.status == "number"
            and context.runtime
            and (runtime is MISSING)
        ):
            return Verdict(
                False,
                f"✗ {q.label}: `{name}` has no value in the notebook: its cell stopped early; "
                "fix the error and run it again.",
                "stale",
            )
        return judge_hand(q, answer, runtime, answers, context.hand)


def sandbox_results(
    what: str, outcome: tuple[Sequence[Any], Sequence[object] | str] | None, verb: str
) -> Verdict | tuple[Sequence[Any], Sequence[object]]:
    """(inputs, results) the sandbox brought back for `what`, or the verdict when there
    are none (`verb`: what the notebook never did to it)."""
    if outcome is None:
        reason = f"the notebook did not finish, so it was never {verb}"
    elif isinstance(outcome[1], str):
        reason = outcome[1]
    else:
        return outcome[0], outcome[1]
    return Verdict(False, f"✗ `{what}` could not be tested: {reason}.", "not_run")


class CodeFunction:
    """A function the learner writes: its results on drawn cases against PyTorch's."""

    def judge(self, part: Part, context: JudgeContext) -> Verdict:
        from autograder.answers.functions import judge_function_results

        task = part.task
        if task is None:
            raise ValueError(f"{part.name} has no function task")
        got = sandbox_results(part.name, context.calls.get(part.name), "called")
        if isinstance(got, Verdict):
            return got
        cases, results = got
        if len(results) != len(cases):
            return Verdict(False, f"✗ `{part.name}` was not called on every case.", "not_run")
        return judge_function_results(task, cases, results)


class ClassAnswer:
    """A class the learner writes: built on the grader's random graphs, judged by PyTorch."""

    def judge(self, part: Part, context: JudgeContext) -> Verdict:
        from autograder.answers.classes import judge_class_results

        task = part.build
        if task is None:
            raise ValueError(f"{part.name} has no class task")
        got = sandbox_results(task.cls, context.builds.get(part.name), "built")
        if isinstance(got, Verdict):
            return got
        graphs, results = got
        return judge_class_results(task, graphs, results)


KINDS: dict[str, AnswerKind] = {
    "forward": HandNumber(),
    "local_slope": HandNumber(),
    "gradient": HandNumber(),
    "fact": HandNumber(),
    "function": CodeFunction(),
    "class": ClassAnswer(),
}


def judge(exercise: str, name: str, context: JudgeContext) -> Verdict:
    """The verdict on part `name` of `exercise`, whatever its kind."""
    part = exercise_spec(exercise).part(name)
    return KINDS[part.kind].judge(part, context)
