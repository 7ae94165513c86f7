"""A hand answer judged as a derivation, not as a number: a formula part earns its points
only when the arithmetic in the learner's cells *is* the chain, decided as an expression
(`exact`: exact rational arithmetic, gates decided on the learner's branch), never by
closeness at a few numbers.

So a copied number, right or wrong, earns nothing ("a number without its arithmetic"),
unless its arithmetic, read with the learner's own numbers as the names they are, is the
chain; a difference quotient, a lookup on the numbers and `round` of a formula earn nothing
and are named; a formula that agrees with PyTorch at the learner's numbers only is wrong,
and the feedback says what differs, shown at fresh draws of the givens that keep every
branch (`fresh_points`). What cannot be decided earns nothing and says so. Facts
(True/False, a count) are not formulas and are left alone.

Everything is deterministic, so the notebook's check and the grader say the same.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from autograder.core.verdict import Verdict, format_value, matches
from autograder.diagnosis.exact import CHEATS, Judgement, judge_formula, readable_names
from autograder.diagnosis.fresh_points import NUMERIC, Point, free_parts, points

if TYPE_CHECKING:
    from autograder.core.quantities import Quantity
    from autograder.core.spec import ExerciseSpec
    from autograder.diagnosis.byhand import HandAnswer

NO_ARITHMETIC: Final = (
    "A number without its arithmetic earns no points: the check credits the computation. "
    "Write `{name} = ...` as arithmetic with the given names and your earlier answers, so it "
    "still holds when the numbers change."
)
"""Why a bare number earns nothing, in words that do not give the formula away."""


def is_bare_number(spec: ExerciseSpec, answer: HandAnswer, found: list[Point]) -> bool:
    """True when the answer is a number, not a formula: it uses no given and no earlier
    answer (through the learner's helper lines) and does not move with the givens."""
    from autograder.diagnosis.byhand import used_names

    value, recipe = answer.value, answer.recipe
    if type(value) not in (int, float) or recipe is None:
        return False
    used = used_names(recipe, spec.part_names)
    steps = recipe.steps[: recipe.length]
    from_givens = {s.name for s in steps if isinstance(s.source, str)}
    if used & (set(spec.part_names) | from_givens):
        return False
    return all(p.mine is not None and matches(float(value), p.mine) for p in found)  # type: ignore[arg-type]


def bare_number_verdict(q: Quantity, answer: HandAnswer, verdict: Verdict) -> Verdict:
    """The verdict on a number written out where arithmetic belongs (right or wrong): a
    wrong one also hears the slip its value fits, said as the guess it is."""
    from autograder.diagnosis.kinds import group

    shown = format_value(answer.value)
    why = NO_ARITHMETIC.format(name=q.name)
    assert answer.recipe is not None
    source = answer.recipe.steps[answer.recipe.length - 1].source
    if isinstance(source, ast.UnaryOp):
        source = source.operand
    lone = isinstance(source, ast.Constant)
    if verdict.passed:
        how = (
            "written as a bare number"
            if lone
            else "written with numbers that are none of your givens or earlier answers, so "
            "its arithmetic cannot be read as the chain"
        )
        return Verdict(
            False,
            f"✗ {q.label} = {shown} is PyTorch's number, but {how}.\n  {why}",
            "no_arithmetic",
        )
    head = f"✗ {q.label} = {shown}, but PyTorch gives {format_value(float(q.value))}."
    _, _, cause = verdict.message.partition("\n")
    if group(verdict.reason) == "concept" and cause.strip() and answer.value != 0:
        # (a zero fits too many slips to name one, even as a guess)
        why += (
            "\n  With no arithmetic to read, the cause can only be guessed from the value, "
            f"which fits this slip: {cause.strip()}"
        )
    return Verdict(False, f"{head}\n  {why}", "no_arithmetic")


def _shown_draw(q: Quantity, point: Point) -> str:
    spec = q.spec
    assert spec is not None
    shown = [f"{n} = {format_value(point.draw.givens[n])}" for n in spec.given_names]
    shown += [f"{n} = {format_value(v)}" for n, v in point.pinned.items()]
    return ", ".join(shown)


def _hidden_by(q: Quantity, answer: HandAnswer, written: Mapping[str, HandAnswer]) -> str:
    """What at the learner's numbers hides the difference: a name the formula uses that is 0
    (or 1) there, or a number in the formula that is one of their givens written out."""
    from autograder.diagnosis.byhand import used_names
    from autograder.diagnosis.formula_pair import STRUCTURAL, number_in

    assert answer.recipe is not None and q.spec is not None
    used = used_names(answer.recipe, q.spec.part_names)
    for name in sorted(used):
        held = q.values.get(name)
        if name in written and written[name].value is not None:
            held = written[name].value
        if type(held) in (int, float) and float(held) in (0.0, 1.0):  # type: ignore[arg-type]
            return (
                f" At your numbers `{name}` is {format_value(float(held))}"  # type: ignore[arg-type]
                ", which hides the difference."
            )
    steps = answer.recipe.steps[: answer.recipe.length]
    for step in steps:
        if not isinstance(step.source, ast.expr) or (
            step.name not in used and step is not steps[-1]
        ):
            continue
        for node in ast.walk(step.source):
            number = number_in(node)
            if number is None or abs(number) in STRUCTURAL:
                continue
            for given in q.spec.given_names:
                if matches(float(q.values[given]), number):  # type: ignore[arg-type]
                    return (
                        f" The number {format_value(number)} in it is your {given} written out: "
                        "use the name, so the formula holds for any numbers."
                    )
    return ""


def _named_or_hidden(
    q: Quantity,
    answer: HandAnswer,
    written: Mapping[str, HandAnswer],
    answers: Mapping[str, object],
    head: str,
) -> Verdict:
    """`head`, then the mistake when one edit of the formula names it, else what at the
    learner's numbers hides the difference."""
    from autograder.diagnosis.formula_match import read_formula

    reading = read_formula(q, float(answer.value), written, answers)  # type: ignore[arg-type]
    if reading.finding is not None:
        reason, why = reading.finding
        return Verdict(False, f"{head}\n  {why}", reason)
    return Verdict(False, f"{head}{_hidden_by(q, answer, written)}", "only_here")


def only_here_verdict(
    q: Quantity,
    answer: HandAnswer,
    written: Mapping[str, HandAnswer],
    answers: Mapping[str, object],
    point: Point,
) -> Verdict:
    """The verdict on a formula right at the learner's numbers only: the mistake when one
    edit of the formula makes it the chain at every draw, else what differs."""

    shown = format_value(answer.value)  # type: ignore[arg-type]
    mine = "cannot be computed" if point.mine is None else f"gives {format_value(point.mine)}"
    whose = "the chain" if point.pinned else "PyTorch"
    head = (
        f"✗ {q.label} = {shown} matches PyTorch at your numbers only: as a formula it is not "
        f"the chain. With {_shown_draw(q, point)}, your formula {mine}, but {whose} gives "
        f"{format_value(point.right)}."
    )
    return _named_or_hidden(q, answer, written, answers, head)


def derivation_verdict(
    q: Quantity,
    answer: HandAnswer,
    written: Mapping[str, HandAnswer],
    answers: Mapping[str, object],
    verdict: Verdict,
) -> Verdict | None:
    """The verdict when the answer does not hold as a derivation (not the chain, a bare
    number, a numerical derivative, a lookup, undecidable), or when it holds read with the
    learner's numbers as names; None when `verdict` (the value's, from `diagnose`) stands,
    or when nothing here applies (a fact, an answer without a recipe)."""
    spec, recipe = q.spec, answer.recipe
    if spec is None or q.part is None or recipe is None or q.kind not in NUMERIC:
        return None
    if type(answer.value) not in (int, float):
        return None
    shown = format_value(answer.value)  # type: ignore[arg-type]
    free, named = free_parts(spec, q.name, recipe), readable_names(q, answers)
    judged = judge_formula(q, recipe, free, named, verdict.passed)
    if judged.kind in CHEATS and not (judged.kind == "rounded_formula" and not verdict.passed):
        return cheat_verdict(q, shown, judged)  # (a value rounded off: `diagnose` says so)
    if judged.is_chain:
        if verdict.passed and judged.reading:
            return Verdict(
                True,
                f"✓ {q.label} = {shown}, read with your numbers as names: {judged.reading}, "
                "which is the chain. Write the names themselves next time, so it holds for "
                "any numbers.",
                verdict.reason,
            )
        return None
    found = points(q, answer) or []
    if judged.ambiguous:
        if not verdict.passed:
            return None
        return Verdict(
            False,
            f"✗ {q.label} = {shown} is written with numbers, and read as names none of the "
            f"ways is the chain ({'; '.join(judged.ambiguous)}). Write the names, so the "
            "check can read your arithmetic.",
            "no_arithmetic",
        )
    if is_bare_number(spec, answer, found):
        return bare_number_verdict(q, answer, verdict)
    if not verdict.passed:
        return None
    if judged.kind == "undecided":
        return Verdict(
            False,
            f"✗ {q.label} = {shown}: it cannot be decided whether your formula is the chain "
            f"({judged.detail}), so it earns no points. Write it with + - * / ** and the "
            "names, as the lesson does.",
            "undecided",
        )
    wrong = next((p for p in found if not p.agrees), None)
    if wrong is not None:
        return only_here_verdict(q, answer, written, answers, wrong)
    return hidden_by_size_verdict(q, answer, written, answers)


CHEAT_WORDS: Final = {
    "numerical_derivative": (
        "A numerical derivative earns no points, even where it comes out exact: write the "
        "derivative the chain rule gives, with the names."
    ),
    "lookup": "It earns no points: write one formula that holds for any numbers.",
    "branch": "It earns no points: write the chain's formula for your branch.",
    "rounded_formula": "It earns no points as it is.",
}
"""What to do instead, after what the answer does (`exact.Judgement.detail`)."""


def cheat_verdict(q: Quantity, shown: str, judged: Judgement) -> Verdict:
    """The verdict on an answer that is not a derivation whatever its value."""
    return Verdict(
        False,
        f"✗ {q.label} = {shown}: {judged.detail}.\n  {CHEAT_WORDS[judged.kind]}",
        judged.kind,
    )


def hidden_by_size_verdict(
    q: Quantity,
    answer: HandAnswer,
    written: Mapping[str, HandAnswer],
    answers: Mapping[str, object],
) -> Verdict:
    """The verdict on a formula within rounding of the chain only because the numbers are
    large: the mistake when one edit names it, else that it differs."""

    head = (
        f"✗ {q.label} = {format_value(answer.value)} comes within rounding of PyTorch only "
        "because the numbers are large: as a formula it is not the chain (checked "
        "symbolically, at any numbers)."
    )
    return _named_or_hidden(q, answer, written, answers, head)
