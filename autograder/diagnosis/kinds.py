"""Every diagnosis kind (`Verdict.reason`) in plain words, in one table.

The feedback names a mistake in the learner's own terms, case by case (`diagnose`,
`formula_edits`, the specs' known mistakes); an instructor reading a class report needs the
kind itself, worded once for all cases. `tests/report/test_report.py` checks that every kind the
diagnoses, the formula edits, the specs and the corpus can give has its words here.

Each kind is also sorted into one of three groups:
- `CONCEPT`: a misconception worth re-teaching (a factor, a sign, a rule of the chain);
- `FORM`: the answer is not in a form that can be judged (unanswered, a tensor, autograd);
- `UNNAMED`: wrong, but no single slip is named (or two readings fit).
`FOLLOW_ON` is apart from all three: a right step from the learner's own wrong earlier
answer, a consequence and never a root cause.
"""

from __future__ import annotations

from typing import Final, Literal

Group = Literal["concept", "form", "unnamed", "follow_on"]

FOLLOW_ON: Final = "follow_on"
PART_SPECIFIC: Final = frozenset({"known_mistake"})
"""Kinds whose meaning depends on the part (a classic bug of that part's code): over the
class, one misconception per part and bug named, never lumped together."""

_CONCEPT: Final = {
    # numbers in the chain
    "given_missing": "a given factor left out of the chain",
    "given_extra": "a given factor multiplied in once too often",
    "given_swap": "one given used where another belongs",
    "factor_missing": "a factor of the chain left out",
    "extra_factor": "a factor that does not belong",
    "slope_missing": "a local slope left out of the chain",
    "slope_extra": "a local slope counted twice",
    "calls_missing": "the gradient of one backward call, not of all of them added up",
    "accumulation": "gradients accumulated over several backward calls (.grad not zeroed)",
    "forward_value": "the forward value given where a slope was asked",
    "wrong_quantity": "a name used where another quantity belongs",
    "other_quantity": "another part's quantity given for this one",
    # signs, sums and products
    "sign": "the sign flipped",
    "sum_for_product": "local slopes added where they multiply",
    "product_for_sum": "two paths' shares multiplied where they add",
    "divided": "divided where it multiplies",
    "times_for_divide": "multiplied where it divides",
    "term_missing": "a term of the formula left out",
    "extra_term": "a term that does not belong",
    "constant_kept": "a constant kept in a derivative (its slope is 0)",
    # powers, squares and the loss
    "doubled_not_squared": "doubled instead of squared",
    "square_forgotten": "the square forgotten",
    "power_rule": "the power rule not applied (the slope of x² is 2x)",
    "wrong_power": "the wrong power",
    "extra_power": "squared where nothing is squared",
    "half_mse": "the MSE/2 habit: the loss halved",
    # ReLU and gates
    "relu_forgotten": "the ReLU forgotten",
    "relu_for_leaky": "the ReLU's value used where the LeakyReLU's belongs",
    "gate_shut": "a shut ReLU treated as open (its slope is 0)",
    "gate_open": "a zero where the ReLU is open",
    # a step of gradient descent
    "rate_forgotten": "the learning rate forgotten",
    "step_with_slope": "a step up the slope instead of down",
    # numbers copied
    "lesson_number": "the lesson's own number copied, not the learner's",
    "lesson_structure": "the lesson's formula answered, not the learner's own structure's",
    # the specs' named mistakes
    "term_dropped": "a term's slope left out",
    "term_kept_x": "a term kept where its slope belongs (-2x for -2)",
    "term_sign": "a term's slope with the wrong sign",
    "other_path": "the share of the other path",
    "total": "the total over both paths where one path's share was asked",
    "slope_alone": "a local slope alone, not the whole chain",
    "one_path": "one path only where two paths add",
    "multiplied": "two paths' shares multiplied where they add",
    "both_paths": "a detached path counted (it sends nothing back)",
    "wrong_path": "the wrong path taken as cut",
    "known_mistake": "a classic bug of this part's code",
}
_FORM: Final = {
    "unanswered": "not answered",
    "autograd": "computed with autograd, not by hand",
    "not_arithmetic": "not plain arithmetic",
    "tensor": "a tensor, not a number",
    "not_a_number": "not a plain number",
    "not_a_bool": "not True or False",
    "not_finite": "not a finite number",
    "error": "a cell that cannot be read",
    "stale": "the notebook's value differs from the cell (not run again)",
    "not_run": "the code could not be run",
    "rounded": "rounded too early (the rule: within 0.1%, so write the arithmetic)",
    "no_arithmetic": "a number without its arithmetic",
    "unverified": "a formula that could not be checked at other numbers",
    "undecided": "a formula that could not be decided as an expression",
    "numerical_derivative": "a numerical derivative (a difference quotient), not the chain rule",
    "lookup": "an answer chosen by comparing the numbers (a lookup table)",
    "branch": "a branch the chain does not take (a condition that is no gate of it)",
    "rounded_formula": "round() or int() of a formula",
}
_UNNAMED: Final = {
    "mismatch": "wrong, no single slip named",
    "ambiguous": "wrong, two readings fit",
    "only_here": "right at the learner's numbers only, not as a formula",
    "unknown": "wrong, no diagnosis given",
    "no diagnosis recorded": "wrong, graded without a stored diagnosis",
}

WORDS: Final[dict[str, str]] = {
    **_CONCEPT,
    **_FORM,
    **_UNNAMED,
    FOLLOW_ON: "right step from the learner's own wrong earlier answer",
}
"""Every kind, in plain words."""


def plain(kind: str) -> str:
    """`kind` in plain words (an unlisted kind shows as itself, so nothing is hidden)."""
    return WORDS.get(kind, kind.replace("_", " "))


def group(kind: str) -> Group:
    """Which group `kind` belongs to (see the module); an unlisted kind counts as a concept,
    so a new diagnosis is reported rather than hidden."""
    if kind == FOLLOW_ON:
        return "follow_on"
    if kind in _FORM:
        return "form"
    if kind in _UNNAMED:
        return "unnamed"
    return "concept"
