"""Honest derivations and cheats, written from the learner's side (issue 45): every honest
form must earn its part's points, every cheat none, in the live check and in the grader.

An entry is (exercise, part, how the learner writes it, the reason a cheat is refused
with; None for an honest form). "How the learner writes it" is a function of the learner's
numbers (their givens and PyTorch's values of every part), since some forms use them:
the arithmetic written with one's own numbers, a lookup on them.

    python -m evaluation.derivations        # prints honest credited / tried, cheats earning / tried
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from autograder.diagnosis.references import reference_values
from autograder.specs import exercise_spec, learner_givens

Numbers = Mapping[str, float]

E1, E3, E6, E7 = (
    "01_what_a_gradient_is",
    "03_a_neuron_by_hand",
    "06_one_backward_every_parameter",
    "07_try_it",
)
LEARNERS = ("learner-0", "learner-1", "learner-2", "tester")


def n(value: float) -> str:
    """A number as a learner types it: 7 for 7.0, (-5) for -5.0, 4.9365 as it is."""
    text = repr(float(value)).removesuffix(".0")
    return f"({text})" if value < 0 else text


@dataclass(frozen=True)
class Entry:
    exercise: str
    part: str
    write: Callable[[Numbers], str]
    refused: frozenset[str] = frozenset()
    """The reasons a cheat may be refused with (empty: an honest form, credited)."""
    costs: tuple[str, ...] = ()
    """Earlier parts the lines themselves spoil (an earlier answer written so it is refused):
    they lose their points, the entry's part keeps its own."""

    @property
    def honest(self) -> bool:
        return not self.refused

    def lines(self, learner: str) -> str:
        return self.write(numbers(self.exercise, learner))


def numbers(exercise: str, learner: str) -> dict[str, float]:
    """The learner's givens and PyTorch's value of every named quantity."""
    spec = exercise_spec(exercise)
    givens = learner_givens(exercise, learner)
    values = reference_values(exercise, {**spec.constants, **givens})
    return {k: float(v) for k, v in values.items() if type(v) in (int, float)}


def honest(exercise: str, part: str, *forms: str | Callable[[Numbers], str]) -> list[Entry]:
    """Honest forms of `part`: a right-hand side, whole lines (with a `=`), or a function of
    the learner's numbers that writes the lines."""
    return [Entry(exercise, part, _writer(part, form)) for form in forms]


def _writer(part: str, form: str | Callable[[Numbers], str]) -> Callable[[Numbers], str]:
    if callable(form):
        return form
    lines = form if "=" in form.replace("==", "") else f"{part} = {form}"
    return lambda _numbers: lines


def carried(exercise: str, part: str, lines: str, spoiled: str) -> Entry:
    """An honest step from an earlier answer that is refused (`spoiled`): the step earns
    its points all the same, as an examiner carries an error forward."""
    return Entry(exercise, part, _writer(part, lines), costs=(spoiled,))


def cheat(exercise: str, part: str, reasons: str, form: str | Callable[[Numbers], str]) -> Entry:
    """A cheat at `part`, refused with one of `reasons` (space-separated)."""
    return Entry(exercise, part, _writer(part, form), frozenset(reasons.split()))


DERIVATIVE = "numerical_derivative"

HONEST: list[Entry] = [
    *honest(E1, "y_start", "x ** 2", "x * x", "pow(x, 2)", "x ** 2.0", "float(x) ** 2"),
    *honest(
        E1,
        "y_start",
        "import math\ny_start = math.pow(x, 2)",
        lambda v: f"y_start = {n(v['x'])} ** 2",
        lambda v: f"y_start = {n(v['x'])} * {n(v['x'])}",
    ),
    *honest(E1, "slope_start", "2 * x", "x + x", "2.0 * x", "x * 2", "float(2 * x)"),
    *honest(
        E1,
        "slope_start",
        "two = 2\nslope_start = two * x",
        "slope_start = 2 * x if x > 0 else 2 * x",
        lambda v: f"slope_start = 2 * {n(v['x'])}",
    ),
    *honest(
        E1,
        "x_after_step",
        "x - step_size * slope_start",
        "x - step_size * 2 * x",
        "x * (1 - 2 * step_size)",
        lambda v: f"x_after_step = {n(v['x'])} - {n(v['step_size'])} * {n(v['slope_start'])}",
    ),
    *honest(
        E3,
        "dL_dw",
        "2 * (a - y) * x",
        "dL_dh * x",
        "dL_dh * dh_dw",
        "x * dL_dh",
        "dL_da * da_dh * dh_dw",
        "2 * (max(h, 0) - y) * x",
        "2 * (max(w * x + b, 0) - y) * x",
        "(2 * a - 2 * y) * x",
        "2.0 * (a - y) * 1 * x",
        "pow(a - y, 1) * 2 * x",
        "2 * (a - y) * x if h > 0 else 0",
        "(2 * (a - y) if w * x + b > 0 else 0) * x",
        "g = 2 * (a - y)\ndL_dw = g * x",
        "import math\ndL_dw = math.pow(a - y, 1) * 2 * x",
        lambda v: f"dL_dw = 2 * ({n(v['a'])} - {n(v['y'])}) * {n(v['x'])}",
        lambda v: f"dL_dw = {n(v['dL_dh'])} * {n(v['x'])}",
        lambda v: f"dL_dw = 2 * (a - {n(v['y'])}) * x",
    ),
    carried(
        E3,
        "dL_dw",
        "import torch\na = torch.relu(torch.tensor(h)).item()\ndL_dw = 2.0 * (a - y) * x",
        "a",
    ),
    carried(E3, "dL_dw", "dL_dh = None\ndL_dw = dL_dh * x", "dL_dh"),
    *honest(
        E3,
        "dL_db",
        "dL_dh * 1",
        "dL_dh",
        "2 * (a - y)",
        "dL_dw / x",
        lambda v: f"dL_db = 2 * ({n(v['a'])} - {n(v['y'])})",
    ),
    *honest(E3, "a", "max(h, 0)", "h if h > 0 else 0", "max(0, w * x + b)", "h * (h > 0)"),
    *honest(E3, "da_dh", "1.0", "1 if h > 0 else 0", "float(h > 0)"),
    *honest(
        E6,
        "df_du",
        "3 * u ** 2",
        "share_direct + share_sq",
        "u ** 2 + 2 * u * u",
        "u * u * 3",
        lambda v: f"df_du = 3 * {n(v['u'])} ** 2",
    ),
    *honest(
        E7,
        "cubic_slope",
        "3 * x_cubic ** 2 - 2",
        "3 * x_cubic * x_cubic - 2",
        lambda v: f"cubic_slope = 3 * {n(v['x_cubic'])} ** 2 - 2",
    ),
]

CHEATS: list[Entry] = [
    cheat(
        E1, "slope_start", DERIVATIVE, "slope_start = ((x + 1e-3) ** 2 - (x - 1e-3) ** 2) / 2e-3"
    ),
    cheat(E1, "slope_start", DERIVATIVE, "slope_start = ((x + 0.5) ** 2 - (x - 0.5) ** 2) / 1"),
    cheat(
        E1, "slope_start", DERIVATIVE, "slope_start = round(((x + 1e-6) ** 2 - x ** 2) / 1e-6, 7)"
    ),
    cheat(E1, "slope_start", DERIVATIVE, "slope_start = (x ** 2 - (x - 1e-4) ** 2) / 1e-4"),
    cheat(
        E1,
        "slope_start",
        DERIVATIVE,
        "step = 0.001\nslope_start = ((x + step) ** 2 - (x - step) ** 2) * 500",
    ),
    cheat(
        E1,
        "slope_start",
        DERIVATIVE,
        "slope_start = ((x * 1.001) ** 2 - (x * 0.999) ** 2) / (0.002 * x)",
    ),
    cheat(
        E1,
        "slope_start",
        DERIVATIVE,
        "f_plus = (x + 1e-3) ** 2\nf_minus = (x - 1e-3) ** 2\n"
        "slope_start = (f_plus - f_minus) / 2e-3",
    ),
    cheat(
        E3,
        "dL_dw",
        DERIVATIVE,
        "eps = 1e-4\ndL_dw = ((max((w + eps) * x + b, 0) - y) ** 2 "
        "- (max((w - eps) * x + b, 0) - y) ** 2) / (2 * eps)",
    ),
    cheat(
        E3,
        "dL_dw",
        f"{DERIVATIVE} no_arithmetic",
        lambda v: (
            f"dL_dw = ((({n(v['w'])} + 0.0001) * {n(v['x'])} + {n(v['b'])} - {n(v['y'])}) ** 2"
            f" - (({n(v['w'])} - 0.0001) * {n(v['x'])} + {n(v['b'])} - {n(v['y'])}) ** 2) / 0.0002"
        ),
    ),
    cheat(E6, "df_du", DERIVATIVE, "df_du = ((u + 1e-4) ** 3 - (u - 1e-4) ** 3) / 2e-4"),
    cheat(
        E7,
        "cubic_slope",
        DERIVATIVE,
        "cubic_slope = round(((x_cubic + 1e-7) ** 3 - 2 * (x_cubic + 1e-7) "
        "- (x_cubic ** 3 - 2 * x_cubic)) / 1e-7, 4)",
    ),
    cheat(
        E3,
        "dL_dw",
        "lookup",
        lambda v: f"dL_dw = ({n(v['dL_dw'])} if w == {n(v['w'])} else 23.52) + 0 * w",
    ),
    cheat(
        E1,
        "slope_start",
        "lookup",
        lambda v: f"slope_start = {n(v['slope_start'])} if x == {n(v['x'])} else 2 * x + 1",
    ),
    cheat(
        E3,
        "dL_dw",
        "branch",
        lambda v: f"dL_dw = 2 * (a - y) * x if x > {n(v['x'] - 1)} else 0",
    ),
    cheat(E3, "dL_dw", "rounded_formula", "dL_dw = round(2 * (a - y) * x, 3)"),
    cheat(E1, "slope_start", "rounded_formula", "slope_start = int(2 * x)"),
    cheat(
        E3,
        "dL_dw",
        "autograd",
        "import torch\nt = torch.tensor(w, requires_grad=True)\n"
        "((torch.relu(t * x + b) - y) ** 2).backward()\ndL_dw = t.grad.item()",
    ),
    cheat(E3, "dL_dw", "no_arithmetic", lambda v: f"dL_dw = {n(v['dL_dw'])}"),
    cheat(E1, "slope_start", "no_arithmetic", lambda v: f"slope_start = {n(v['slope_start'])}"),
]


def judged(entry: Entry, learner: str) -> tuple[bool, str, str]:
    """(credited, reason, message) the grader's judge gives `entry` for `learner`."""
    from autograder.diagnosis.byhand import read_hand_answers
    from autograder.diagnosis.judge import JudgeContext, judge
    from evaluation.corpus import cells

    givens = learner_givens(entry.exercise, learner)
    hand = read_hand_answers(cells(entry.exercise, entry.part, entry.lines(learner)), givens)
    verdict = judge(entry.exercise, entry.part, JudgeContext(entry.exercise, givens, hand))
    return verdict.passed, verdict.reason, verdict.message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    credited = sum(judged(e, who)[0] for e in HONEST for who in LEARNERS)
    earning = sum(judged(e, who)[0] for e in CHEATS for who in LEARNERS)
    print(f"honest forms credited: {credited} / {len(HONEST) * len(LEARNERS)}")
    print(f"cheats earning points: {earning} / {len(CHEATS) * len(LEARNERS)}")


if __name__ == "__main__":
    main()
