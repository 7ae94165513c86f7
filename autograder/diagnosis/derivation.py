"""A hand answer judged as a derivation, not as a number: right only when the arithmetic in
the learner's cells computes it the way the chain does.

The cells are never run: each answer's recipe (`byhand.Recipe`, every binding the reader
made up to it) is computed again at fresh draws of the givens (`fresh_points`) that keep
every branch the chain takes (each named value of the spec's PyTorch program keeps its
sign: the same ReLU side, the same signs), and compared with the spec's model answers
there. The learner's earlier answers stand in as their names: an earlier part the formula
uses, upstream in the chain, takes a free value of its own at each draw (so
`dL_dw = dL_dh * w` is told from `dL_dh * x` even where dL/dh is always 0), and every other
part the spec's value at the draw. So a copied number, right or wrong, does not follow the
givens and earns nothing ("a number without its arithmetic"); a formula that agrees with
PyTorch only at the learner's numbers is wrong, and the feedback says what differs.
Facts (True/False, a count) are not formulas and are left alone, and so is a part whose
value the branches fix (the slope 1 of an open ReLU): a literal is the answer there.

Everything is deterministic (the draws are seeded by the exercise and the learner's
numbers), so the notebook's check and the grader say the same.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from autograder.core.verdict import REL_TOL, Verdict, format_value, matches
from autograder.diagnosis.fresh_points import Point, points

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


def fixed_by_branches(found: list[Point], right_here: float) -> bool:
    """True when the part's value is the same at every draw (fixed by the branches)."""
    return all(matches(right_here, p.right) for p in found if not p.pinned)


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


def bare_number_verdict(q: Quantity, shown: str, passed_here: bool) -> Verdict:
    """The verdict on a number written out where arithmetic belongs (right or wrong)."""
    why = NO_ARITHMETIC.format(name=q.name)
    if passed_here:
        head = f"✗ {q.label} = {shown} is PyTorch's number, but written as a bare number."
    else:
        head = f"✗ {q.label} = {shown}, but PyTorch gives {format_value(float(q.value))}."
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
    passed_here: bool,
) -> Verdict | None:
    """The verdict when the answer does not hold as a derivation (a bare number where the
    value follows the givens, or a formula right at the learner's numbers only); None when
    it does, or when nothing here applies (a fact, an answer without a recipe)."""
    found = points(q, answer)
    if found is None or type(answer.value) not in (int, float):
        return None
    spec = q.spec
    assert spec is not None
    if not found:
        return Verdict(
            False,
            f"✗ {q.label}: your formula could not be checked at other numbers (no fresh draw "
            "kept every branch of the chain); ask your teacher.",
            "unverified",
        )
    if is_bare_number(spec, answer, found) and not fixed_by_branches(found, float(q.value)):
        return bare_number_verdict(q, format_value(answer.value), passed_here)  # type: ignore[arg-type]
    if not passed_here:
        return None
    wrong = next((p for p in found if not p.agrees), None)
    if wrong is not None:
        return only_here_verdict(q, answer, written, answers, wrong)
    if all(p.exact for p in found) or not differs_symbolically(q, written, answers, found):
        return None
    return hidden_by_size_verdict(q, answer, written, answers)


def differs_symbolically(
    q: Quantity,
    written: Mapping[str, HandAnswer],
    answers: Mapping[str, object],
    found: list[Point],
) -> bool:
    """True when SymPy shows that a formula agreeing with the chain only within the
    tolerance is another formula: it differs by more than a rounded constant factor (a
    `+ 1` kept inside 3·(4·c·x³ + 1), hidden by large numbers). The earlier answers it uses
    are symbols, as they are free at the draws. False when it is the chain up to a rounded
    factor (0.333 for 1/3), or cannot be read symbolically: then the numbers stand."""
    import sympy

    from autograder.diagnosis.formula_pair import Formulas, gap_to_spec

    try:
        world = Formulas(q, written, answers)
        world.givens = (*world.givens, *sorted(found[0].pinned))
        gap, right = gap_to_spec(world, world.expr, world.learner_defs)
        if gap == 0:
            return False
        if right == 0:
            return True
        ratio = sympy.cancel(sympy.together(gap / right))
        return bool(ratio.free_symbols) or abs(float(ratio)) > REL_TOL
    except Exception:  # noqa: BLE001  (unreadable, or whatever a hostile cell makes SymPy raise)
        return False


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
