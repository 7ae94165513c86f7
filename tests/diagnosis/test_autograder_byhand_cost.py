"""Reading hand answers costs work in proportion to the cell, whatever the cell holds.

Work is counted, not timed (`reading_work`). The stated budget is `WORK_PER_CHAR` per
character of the cell (an honest cell of worked answers costs about 25);
`benchmarks/byhand_cost.py` prints the seconds per KB.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reading_work import budget, work

from autograder.diagnosis.byhand import (
    MAX_CELL_CHARS,
    HandAnswer,
    read_hand_answers,
)
from benchmarks.byhand_cost import ATTACKS, honest


@pytest.mark.parametrize("family", sorted(ATTACKS))
def test_attack_cells_cost_at_most_the_budget_per_char(family: str) -> None:
    """Each attack family, at 8 KB and 32 KB, stays within the linear budget."""
    for size in (8_000, 32_000):
        cell = ATTACKS[family](size)
        spent, _ = work([cell])
        assert spent <= budget([cell]), f"{family} at {len(cell)} chars: {spent} > budget"


def test_an_honest_cell_is_well_within_the_budget() -> None:
    cell = honest(16_000)
    spent, answers = work([cell])
    assert spent <= budget([cell]) // 2
    assert answers["dL_dw3"].status == "number"


def test_a_chained_assignment_evaluates_its_value_once() -> None:
    """`a = b = ... = expr` binds every target to the same value, computed once: the work of
    a thousand targets is about that of one, plus the targets themselves."""
    value = "+".join(["2"] * 40)
    one, _ = work([f"a = {value}"])
    many, answers = work(["a=" * 1000 + value])
    assert many < one + 50 * 2000
    assert answers["a"] == HandAnswer("a", 80.0, "number", answers["a"].detail)


def test_targets_take_the_value_computed_before_any_binding() -> None:
    """Like Python: in `a = b = a + 1` both names get the old `a` plus one."""
    answers = read_hand_answers(["a = 1", "a = b = a + 1"])
    assert (answers["a"].value, answers["b"].value) == (2.0, 2.0)


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("x = " + "+".join(["1"] * 500), "expression too long"),
        ("x = " + "abs(" * 60 + "1" + ")" * 60, "nested too deeply"),
        ("x = 3**300", "number too large"),
        ("x = round(1.5, 10**6)", "small whole number of digits"),
        ("\n".join(["x = [" + "1," * 40] * 150), "too costly to recover"),
        ("x = 1\n" * (MAX_CELL_CHARS // 6 + 1), "cell too long to read"),
    ],
    ids=["nodes", "depth", "int-bits", "round-digits", "salvage-work", "cell-size"],
)
def test_each_cap_is_that_answers_failure_with_a_reason(cell: str, reason: str) -> None:
    spent, answers = work([cell])
    assert answers["x"].status == "error"
    assert reason in answers["x"].detail
    assert spent <= budget([cell])


def test_details_never_grow_with_what_they_quote() -> None:
    cell = ATTACKS["error_details"](20_000)
    answers = read_hand_answers([cell])
    assert max(len(a.detail) for a in answers.values()) <= 160
    assert all(a.status == "error" for a in answers.values())


FRAGMENTS = st.sampled_from(
    [
        "a=",
        "(a,b)=",
        "a,b=",
        "*c,=",
        "1",
        "+1",
        "*2",
        "**9",
        "-",
        "(",
        ")",
        "[",
        "]",
        ",",
        "(b:=1)",
        "abs(",
        "round(",
        "x.grad",
        "'s'",
        "\n",
        "\n    ",
        "\n@d\n",
        "def f():",
        "%time ",
        "!ls\n",
        "raise NotImplementedError()\n",
        "1/0",
        "a",
        "b",
        " if a else ",
        "\nfor i in a:\n  b=1\n",
        "#",
        "\\\n",
    ]
)


@st.composite
def cells(draw: st.DrawFn) -> str:
    """A random cell: attack families and random fragments, up to 24 KB."""
    parts: list[str] = []
    size = draw(st.integers(100, 24_000))
    while sum(map(len, parts)) < size:
        if draw(st.booleans()):
            family = draw(st.sampled_from(sorted(ATTACKS)))
            parts.append(ATTACKS[family](draw(st.integers(20, 4_000))) + "\n")
        else:
            parts.append("".join(draw(st.lists(FRAGMENTS, min_size=1, max_size=400))))
    return "".join(parts)[:size]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(cells(), min_size=1, max_size=3))
def test_random_and_hostile_cells_stay_within_the_budget(sources: list[str]) -> None:
    spent, answers = work(sources)
    assert spent <= budget(sources)
    assert all(len(a.detail) <= 160 for a in answers.values())
