"""Turn (quantity, learner's value) into a verdict whose message teaches, read from the chain.

The spec of the exercise says which factors make up each answer (givens, local slopes of
named nodes, forward values, earlier parts), so a wrong number is explained by the
mistake that produces it exactly. When the learner's cells are at hand, their formula is read first
(`autograder.diagnosis.formula_match`): the single edit that makes it right names the mistake in
their own terms, and a numeric pattern below that the formula does not bear out (a
coincidence of values) is not named. The order of the numeric tests:
1. a known wrong answer the spec names (e.g. stepping with the slope);
2. a follow-on error: the answer is right for the learner's own wrong earlier answer
   ("consistent with your dL/da = 3: fix Part D first"); first, because an earlier
   mistake carries into every pattern below;
3. a shut gate (PyTorch's value is 0 because a ReLU on the path is shut), or a zero
   where the gate is open;
4. a given used where another belonged, a missing given factor, an extra one;
5. a missing (or doubled) local slope, named by its node;
6. the forward value given where a gradient was asked;
7. the sign;
8. multiples from accumulation, only in parts whose gradient comes from repeated
   backward() calls (checked before 4, since there it is the mistake to expect);
9. rounded too early;
10. the lesson's own answer, computed with the lesson's numbers (when nothing above fits).
Type problems (a tensor, a string, nothing yet) are reported before any of them.
Every message shows the learner's value and PyTorch's.

Tolerance: the one rounding rule, `ROUNDING_RULE`, worded from `core.verdict.REL_TOL`
(`ABS_TOL` for values near zero), against PyTorch's float32 value. That accepts hand
arithmetic such as 0.0408 against 0.040799998 and 4.16 against 4.1616, and rejects every
slip the diagnoses below look for (a missing factor, a flipped sign, a closed gate).
Only plain `int`, `float` and `bool` are accepted: no subclasses, numpy or torch types,
so an object that claims to equal everything cannot pass. Yes/no facts match exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from autograder.core.quantities import Quantity
from autograder.core.verdict import (
    REL_TOL,
    Verdict,
    format_value,
    matches,
)
from autograder.diagnosis.answer_form import too_rounded, type_problem
from autograder.diagnosis.formula_pair import flat_factors

if TYPE_CHECKING:
    from autograder.core.spec import ExerciseSpec, Part
    from autograder.diagnosis.byhand import HandAnswer

ROUNDING_RULE: Final = (
    f"a number passes when it is within {REL_TOL * 100:g}% of PyTorch's, so write the "
    "arithmetic, never a rounded number"
)
"""The one rounding rule, in the words the exercises use (tests/specs/test_prose_numbers.py)."""
MAX_MULTIPLE: Final = 4
"""Largest k for the "accumulated over k backward calls" diagnosis (the exercises make up
to three calls; one more is the forgotten zero_())."""

Answers = Mapping[str, object]
"""The learner's answers by name (numbers read from their cells), for follow-on errors."""

FORMULA_CHECKED: Final = frozenset(
    {"given_swap", "given_missing", "given_extra", "slope_missing", "slope_extra"}
    | {"calls_missing", "forward_value", "sign", "accumulation", "rounded"}
)
"""Numeric patterns that are one edit of a formula: when the learner's formula was read
and no such edit makes it right, a match of values is a coincidence, never named."""


def diagnose(
    q: Quantity,
    learner: object,
    answers: Answers | None = None,
    written: Mapping[str, HandAnswer] | None = None,
) -> Verdict:
    """Compare the learner's value with PyTorch's and say what most likely went wrong.

    `answers` are the learner's other answers (to recognise follow-on errors); `written`
    what their cells assign, read statically (to read the formula of `q`).
    """
    problem = type_problem(q, learner)
    if problem is not None:
        return problem
    label = q.label
    if q.is_bool:
        if learner is q.value:
            return Verdict(True, f"✓ {label} = {learner!r} matches PyTorch", "match")
        return Verdict(
            False, f"✗ {label} = {learner!r}, but PyTorch says {q.value!r}.\n  {q.hint}", "mismatch"
        )
    if not isinstance(learner, int | float):  # unreachable: _type_problem rejected it
        raise TypeError(type(learner).__name__)
    value = float(learner)
    shown = format_value(learner)
    if not math.isfinite(value):
        return Verdict(False, f"✗ {label} = {shown} is not a finite number.", "not_finite")
    ref = float(q.value)
    if matches(ref, value):
        return Verdict(True, f"✓ {label} = {shown} matches PyTorch", "match")
    head = f"✗ {label} = {shown}, but PyTorch gives {format_value(ref)}."
    reason, why = explain(q, value, answers or {}, written)
    return Verdict(False, f"{head}\n  {why}", reason)


def _number(value: object) -> float | None:
    if type(value) in (int, float) and math.isfinite(float(value)):  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    return None


def _evaluate(expression: str, names: Mapping[str, object]) -> float | None:
    from autograder.diagnosis.byhand import evaluate_expression

    try:
        return float(evaluate_expression(expression, names))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def upstream_names(spec: ExerciseSpec, part: Part) -> list[str]:
    """The earlier parts the model answer uses, in order."""
    names = {name for name, _ in part.code_names}
    before = spec.part_names[: spec.part_names.index(part.name)]
    return [n for n in before if n in names]


def related_givens(spec: ExerciseSpec, part: Part) -> list[str]:
    """The givens the part's model answer is computed from (through earlier answers)."""
    assigned: dict[str, Part] = {}
    for p in spec.parts:
        if p.kind in ("function", "class"):
            continue
        for name, context in p.code_names:
            if context == "Store":
                assigned.setdefault(name, p)
    found: list[str] = []
    seen: set[str] = set()
    stack = [part]
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        for name, context in current.code_names:
            if context != "Load":
                continue
            if name in spec.given_names and name not in found:
                found.append(name)
            elif name in assigned:
                stack.append(assigned[name])
    return found


def _follow_on(q: Quantity, value: float, answers: Answers) -> str | None:
    spec, part = q.spec, q.part
    if spec is None or part is None:
        return None
    wrong: dict[str, float] = {}
    for name in upstream_names(spec, part):
        theirs = _number(answers.get(name))
        if theirs is not None and not matches(float(q.values[name]), theirs):
            wrong[name] = theirs
    if not wrong:
        return None
    redone = _evaluate(part.answer, {**q.values, **wrong})
    if redone is None or not matches(redone, value):
        return None
    first = next(iter(wrong))
    earlier = spec.part(first)
    return (
        f"Consistent with your {earlier.label} = {format_value(wrong[first])}: "
        f"the step is right, the number it starts from is not; fix Part "
        f"{spec.letter(first)} ({earlier.label}) first."
    )


def _givens_problem(q: Quantity, ref: float, value: float) -> tuple[str, str] | None:
    spec, part = q.spec, q.part
    if spec is None or part is None or ref == 0:
        return None
    givens = {
        n: float(q.values[n]) for n in spec.given_names if abs(float(q.values[n])) not in (0.0, 1.0)
    }
    in_chain = [f.expr for f in flat_factors(spec, part) if f.role == "given"]
    for name in in_chain:
        g = float(q.values[name])
        if g == 0:
            continue
        for other, h in givens.items():
            if other != name and abs(h) != abs(g) and matches(ref / g * h, value):
                return "given_swap", (
                    f"{other} = {format_value(h)} is used where {name} = {format_value(g)} "
                    f"belongs. {q.hint}"
                )
    for name in in_chain:
        g = float(q.values[name])
        if abs(g) not in (0.0, 1.0) and matches(ref / g, value):
            return "given_missing", (
                f"The factor {name} = {format_value(g)} is missing from the chain. {q.hint}"
            )
    for other in related_givens(spec, part):
        extra = givens.get(other)
        if extra is not None and matches(ref * extra, value):
            return "given_extra", (f"One factor {other} = {format_value(extra)} too many. {q.hint}")
    return None


def _slope_problem(q: Quantity, ref: float, value: float) -> tuple[str, str] | None:
    spec, part = q.spec, q.part
    if spec is None or part is None or ref == 0:
        return None
    for factor in flat_factors(spec, part):
        if factor.role not in ("slope", "calls"):
            continue
        s = _evaluate(factor.expr, q.values)
        if s is None or abs(s) in (0.0, 1.0):
            continue
        if matches(ref / s, value):
            if factor.role == "calls":
                return "calls_missing", (
                    f"That is the gradient of one call; {factor.label} add up in .grad."
                )
            return "slope_missing", (
                f"The factor {format_value(s)}, {factor.label}, is missing. {q.hint}"
            )
        if matches(ref * s, value):
            return "slope_extra", (
                f"The factor {format_value(s)}, {factor.label}, is counted twice."
            )
    return None


def _accumulation_problem(q: Quantity, ref: float, value: float) -> tuple[str, str] | None:
    """Whole multiples, in a part whose gradient comes from repeated backward() calls."""
    if q.spec is None or q.name not in q.spec.repeated_backward or ref == 0:
        return None
    for k in range(2, MAX_MULTIPLE + 1):
        if matches(ref * k, value):
            return "accumulation", (
                f"{k} × PyTorch's value: gradients accumulated over {k} backward calls? "
                "Zero .grad before each backward()."
            )
    return None


def _forward_problem(q: Quantity, value: float) -> tuple[str, str] | None:
    part = q.part
    if part is None or q.kind not in ("gradient", "local_slope"):
        return None
    for node in part.of:
        forward = _number(q.values.get(node))
        if forward is not None and forward != 0 and matches(forward, value):
            return "forward_value", (
                f"That is the forward value {node} = {format_value(forward)}, not a slope: "
                f"the backward pass multiplies local slopes. {q.hint}"
            )
    return None


def explain(
    q: Quantity, value: float, answers: Answers, written: Mapping[str, HandAnswer] | None = None
) -> tuple[str, str]:
    """(reason, explanation) for a wrong number: from the formula when `written` holds it,
    else (or when the formula names nothing) in the order of this module's docstring."""
    read = False
    if written is not None and q.part is not None and q.name in written:
        from autograder.diagnosis.formula_match import read_formula

        reading = read_formula(q, value, written, answers)
        if reading.finding is not None:
            return reading.finding
        read = reading.read
    reason, why = _explain_value(q, value, answers)
    known = {r for r, _, _ in q.part.mistakes} if q.part is not None else set()
    if read and (reason in FORMULA_CHECKED or reason in known):
        shown = written[q.name].detail if written is not None else ""
        return "mismatch", (
            f"You wrote `{q.name} = {shown}`: no single slip turns it into the chain. "
            f"{q.hint or 'Recompute it one step at a time.'}"
        )
    if reason == "mismatch":
        lesson = lesson_answer(q)
        if lesson is not None and matches(lesson, value):
            return "lesson_number", (
                "That is the lesson's answer, worked with the lesson's numbers; yours are "
                "different (see the given cell)."
            )
    return reason, why


def lesson_answer(q: Quantity) -> float | None:
    """The part's value for the lesson's own numbers (None if it cannot be had)."""
    spec = q.spec
    if spec is None or q.kind not in ("forward", "local_slope", "gradient"):
        return None
    from autograder.diagnosis.references import reference_quantities

    lesson = {**spec.lesson_givens, **spec.constants}
    if all(q.values.get(g) == v for g, v in lesson.items()):
        return None
    theirs = reference_quantities(spec.name, lesson).get(q.name)
    if theirs is None or matches(float(q.value), float(theirs.value)):
        return None
    return float(theirs.value)


def _explain_value(q: Quantity, value: float, answers: Answers) -> tuple[str, str]:
    """(reason, explanation) from the value alone, in the order of the module's docstring."""
    ref = float(q.value)
    part = q.part
    if part is not None:
        for reason, expression, why in part.mistakes:
            wrong = _evaluate(expression, q.values)
            if wrong is not None and not matches(ref, wrong) and matches(wrong, value):
                return reason, why
    follow_on = _follow_on(q, value, answers)
    if follow_on is not None:
        return "follow_on", follow_on
    if q.gate == "shut" and matches(0.0, ref):
        return "gate_shut", (
            "The ReLU on this path is shut (h < 0): its slope 0 multiplies "
            "everything behind it, so this is 0."
        )
    if q.gate == "open" and matches(0.0, value):
        return "gate_open", (
            f"Nothing on the way back multiplies by zero here: the gradient gets through. {q.hint}"
        )
    for problem in (
        _accumulation_problem(q, ref, value),
        _givens_problem(q, ref, value),
        _slope_problem(q, ref, value),
        _forward_problem(q, value),
    ):
        if problem is not None:
            return problem
    if ref != 0 and matches(-ref, value):
        where = "forward computation" if q.kind == "forward" else "factor on the way back"
        return "sign", f"Right size, wrong sign: check the sign of each {where}."
    digits = too_rounded(ref, value)
    if digits is not None:
        return "rounded", f"Close, but rounded too much: {ROUNDING_RULE}."
    return "mismatch", q.hint or "Recompute it one step at a time."
