"""Prose true for every learner: each sentence of an exercise that states a relation between
numbers holds for 200 learners' own numbers (computed by the spec's PyTorch program), in
self-study and, for an exercise whose structure varies, in every structure a class's learners
draw (200 class learners each), and
the one rounding rule is stated once per notebook, with the grader's own tolerance."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from autograder.core.engine import compute
from autograder.core.givens import Site
from autograder.core.verdict import REL_TOL
from autograder.specs import SPECS, exercise_spec, learner_givens

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = [f"prose-learner-{i}" for i in range(200)]
CLASS = Site("prose-class", "a test secret")
Row = Mapping[str, Any]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


CLAIMS: list[tuple[str, str, Callable[[Row], bool]]] = [
    ("01_what_a_gradient_is", "At `x_other` the slope is negative", lambda r: r["slope_other"] < 0),
    ("01_what_a_gradient_is", "A positive slope means", lambda r: r["slope_start"] > 0),
    ("01_what_a_gradient_is", "The new x should be a little closer to 0 than `x` (you step left)",
     lambda r: abs(r["x_after_step"]) < abs(r["x"]) and r["x_after_step"] < r["x"]),
    ("01_what_a_gradient_is", "It should be lower than `y_start`",
     lambda r: r["y_after_step"] < r["y_start"]),
    ("03_a_neuron_by_hand", "With your numbers h is positive: the ReLU is open",
     lambda r: r["h"] > 0),
    ("03_a_neuron_by_hand", "why dL/dw is x times dL/db",
     lambda r: _close(r["dL_dw"], r["x"] * r["dL_db"])),
    ("03_a_neuron_by_hand", "dL/dw exactly x times dL/db",
     lambda r: _close(r["dL_dw"], r["x"] * r["dL_db"])),
    ("04_the_dead_relu", "this time h is negative, so the ReLU is shut", lambda r: r["h"] < 0),
    ("09_autograd_by_hand", "the ReLU is open for your numbers", lambda r: r["h"] > 0),
]  # fmt: skip


def _prose(exercise: str) -> str:
    path = ROOT / "solutions" / exercise / f"{exercise}.ipynb"
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def rows() -> dict[str, list[dict[str, Any]]]:
    exercises = {exercise for exercise, _, _ in CLAIMS}
    found: dict[str, list[dict[str, Any]]] = {}
    for e in exercises:
        found[e] = compute(SPECS[e], [learner_givens(e, learner) for learner in LEARNERS])
        in_class = [learner_givens(e, learner, CLASS) for learner in LEARNERS]
        for structure in SPECS[e].variants:
            found[e] += compute(exercise_spec(f"{e}[{structure.tag}]"), in_class)
    return found


@pytest.mark.parametrize(("exercise", "text", "holds"), CLAIMS, ids=[c[1] for c in CLAIMS])
def test_a_stated_relation_holds_for_200_learners(
    rows: dict[str, list[dict[str, Any]]], exercise: str, text: str, holds: Callable[[Row], bool]
) -> None:
    assert text in " ".join(_prose(exercise).split())
    wrong = [row for row in rows[exercise] if not holds(row)]
    count = len(rows[exercise])
    assert not wrong, f"{text!r} is false for {len(wrong)} of {count} learners, e.g. {wrong[0]}"


def test_no_relation_that_holds_only_for_the_lessons_numbers() -> None:
    """The slips of issue 19: true only at the lesson's x = 2, or x given as a tensor."""
    for exercise in SPECS:
        prose = " ".join(_prose(exercise).split())
        assert "twice dL/db" not in prose
        assert "`x` (created with `requires_grad=True`)" not in prose


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_one_rounding_rule_stated_once_with_the_graders_tolerance(exercise: str) -> None:
    prose = " ".join(_prose(exercise).split())
    rules = re.findall(r"within ([\d.]+)%", prose)
    assert rules == [f"{REL_TOL * 100:g}"], rules
    assert "significant digits" not in prose
