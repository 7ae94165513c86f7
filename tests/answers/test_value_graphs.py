"""autograder.answers.value_graphs: a learner's Value class judged on random graphs against PyTorch.

The correct class is the lesson's own (autograd_lessons.value.Value). The buggy ones
are written here, one classic mistake each, in the way learners write them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from autograd_lessons.value import Value
from autograder.answers.value_graphs import (
    BUGS,
    describe,
    draw_graphs,
    draw_unit,
    evaluate_with,
    judge,
)
from autograder.core.value_build import apply_op

GRAPHS = draw_graphs(random.Random(2026), 200)


class Mini:
    """micrograd, with a switch for each classic bug, and two ways to write ``-``.

    ``own_minus``: ``__neg__`` and ``__sub__`` are nodes of their own (the exercise's
    solution); otherwise ``-a`` is ``a * -1`` and ``a - b`` is ``a + (-b)`` (micrograd's).
    """

    bug = ""
    own_minus = False

    def __init__(self, data: float, children: tuple[Mini, ...] = ()) -> None:
        self.data, self.grad, self._prev = float(data), 0.0, children
        self._backward: Callable[[], None] = lambda: None

    def _send(self, node: Mini, amount: float) -> None:
        if self.bug == "overwrite":
            node.grad = amount
        else:
            node.grad += amount

    def _new(self, data: float, children: tuple[Mini, ...]) -> Mini:
        return type(self)(data, children)

    def __add__(self, other: Any) -> Mini:
        other = other if isinstance(other, Mini) else type(self)(other)
        out = self._new(self.data + other.data, (self, other))

        def back() -> None:
            self._send(self, out.grad)
            self._send(other, out.grad)

        out._backward = back
        return out

    def __sub__(self, other: Any) -> Mini:
        other = other if isinstance(other, Mini) else type(self)(other)
        if not self.own_minus:
            return self + (-other)
        out = self._new(self.data - other.data, (self, other))

        def back() -> None:
            self._send(self, out.grad)
            self._send(other, out.grad if self.bug == "minus_sign" else -out.grad)

        out._backward = back
        return out

    def __mul__(self, other: Any) -> Mini:
        other = other if isinstance(other, Mini) else type(self)(other)
        out = self._new(self.data * other.data, (self, other))

        def back() -> None:
            if self.bug == "mul_factor":  # the local factor forgotten
                mine, theirs = 1.0, 1.0
            elif self.bug == "mul_own":  # each side's own value
                mine, theirs = self.data, other.data
            else:
                mine, theirs = other.data, self.data
            self._send(self, mine * out.grad)
            self._send(other, theirs * out.grad)

        out._backward = back
        return out

    def __pow__(self, k: float) -> Mini:
        out = self._new(self.data**k, (self,))

        def back() -> None:
            factor = 1.0 if self.bug == "pow_factor" else k
            self._send(self, factor * self.data ** (k - 1) * out.grad)

        out._backward = back
        return out

    def relu(self) -> Mini:
        out = self._new(max(self.data, 0.0), (self,))

        def back() -> None:
            open_gate = self.data <= 0 if self.bug == "relu_side" else self.data > 0
            self._send(self, out.grad if open_gate else 0.0)

        out._backward = back
        return out

    def __neg__(self) -> Mini:
        if not self.own_minus:
            return self * -1.0
        out = self._new(-self.data, (self,))

        def back() -> None:
            self._send(self, out.grad if self.bug == "minus_sign" else -out.grad)

        out._backward = back
        return out

    def __radd__(self, other: float) -> Mini:
        return self + other

    def __rsub__(self, other: float) -> Mini:
        return type(self)(other) - self

    def __rmul__(self, other: float) -> Mini:
        return self * other

    def __truediv__(self, other: Any) -> Mini:
        return self * other**-1

    def __rtruediv__(self, other: float) -> Mini:
        return other * self**-1

    def _order(self) -> list[Mini]:
        if self.bug == "order":  # the usual wrong walk: breadth first, each node once
            order, seen = [self], {id(self)}
            for node in order:
                for child in node._prev:
                    if id(child) not in seen:
                        seen.add(id(child))
                        order.append(child)
            return order
        topo: list[Mini] = []
        seen = set()

        def visit(node: Mini) -> None:
            if self.bug == "no_visited" or id(node) not in seen:  # no visited set: repeats
                seen.add(id(node))
                for child in node._prev:
                    visit(child)
                topo.append(node)

        visit(self)
        return topo[::-1]

    def backward(self) -> None:
        order = self._order()
        if self.bug != "no_seed":
            self.grad = 1.0
        for node in order:
            node._backward()


def buggy(name: str, own_minus: bool = False) -> type[Mini]:
    return type(f"Mini_{name}", (Mini,), {"bug": name, "own_minus": own_minus})


def run(cls: Any) -> list[dict[str, Any]]:
    return [evaluate_with(cls, graph) for graph in GRAPHS]


def test_the_graphs_are_plain_json_drawn_from_a_seed() -> None:
    assert json.loads(json.dumps(GRAPHS)) == GRAPHS
    assert draw_graphs(random.Random(2026), 200) == GRAPHS
    assert draw_graphs(random.Random(7), 5) != GRAPHS[:5]


def test_most_graphs_share_a_subexpression() -> None:
    def shares(graph: dict[str, Any]) -> bool:
        uses = [arg for op in graph["ops"] for arg in op["args"]]
        return len(uses) != len(set(uses))

    assert sum(shares(g) for g in GRAPHS) > 150


def test_every_operation_of_the_interface_is_drawn() -> None:
    drawn = {op["op"] for graph in GRAPHS for op in graph["ops"]}
    assert drawn == {
        "add", "sub", "mul", "add_const", "radd_const", "sub_const", "rsub_const",
        "mul_const", "rmul_const", "div", "div_const", "rdiv_const", "neg", "pow", "relu",
    }  # fmt: skip


def test_evaluating_returns_numbers_only() -> None:
    result = evaluate_with(Value, GRAPHS[0])
    assert set(result) == {"output", "grads"}
    assert json.loads(json.dumps(result)) == result


@pytest.mark.parametrize("cls", [Value, Mini], ids=["lesson Value", "micrograd"])
def test_a_correct_value_scores_full_marks_on_200_graphs(cls: Any) -> None:
    verdict = judge(GRAPHS, run(cls))
    assert verdict.passed and (verdict.correct, verdict.total) == (200, 200), verdict.text
    assert verdict.text.startswith("✓ 200/200")


MINI_BUGS = {  # Mini's switch -> the bug it is, and the operation judged on its graphs
    "order": ("order", "backward"),
    "no_visited": ("no_visited", "backward"),
    "no_seed": ("no_seed", "backward"),
    "relu_side": ("relu_side", "relu"),
    "pow_factor": ("pow_factor", "pow"),
    "mul_factor": ("mul_factor", "mul"),
    "mul_own": ("mul_own", "mul"),
    "overwrite": ("overwrite_add", "add"),
}


@pytest.mark.parametrize("switch", sorted(MINI_BUGS))
def test_each_classic_bug_is_caught_and_named_on_its_operations_graphs(switch: str) -> None:
    key, unit = MINI_BUGS[switch]
    graphs = draw_unit(random.Random(4), unit, 200)
    verdict = judge(graphs, [evaluate_with(buggy(switch), g) for g in graphs], unit)
    assert not verdict.passed and verdict.correct < 200, verdict.text
    assert f"Likely bug {BUGS[key].line()}." in verdict.text.splitlines(), verdict.text
    assert "First wrong graph" in verdict.text


def test_an_overwrite_in_one_operation_is_blamed_on_that_operation() -> None:
    class AddOverwrites(Mini):
        def __add__(self, other: Any) -> Mini:
            other = other if isinstance(other, Mini) else type(self)(other)
            out = type(self)(self.data + other.data, (self, other))

            def back() -> None:
                self.grad = out.grad  # the bug, in + only
                other.grad = out.grad

            out._backward = back
            return out

    graphs = draw_unit(random.Random(5), "add", 200)
    verdict = judge(graphs, [evaluate_with(AddOverwrites, g) for g in graphs], "add")
    assert f"Likely bug {BUGS['overwrite_add'].line()}." in verdict.text, verdict.text
    # judged as *'s graphs, the class is right: + is not on them
    mul = draw_unit(random.Random(5), "mul", 200)
    assert judge(mul, [evaluate_with(AddOverwrites, g) for g in mul], "mul").passed


def test_a_class_that_raises_fails_with_its_error() -> None:
    class NoRightHand(Value):
        __rmul__ = None  # type: ignore[assignment]

    verdict = judge(GRAPHS, run(NoRightHand))
    assert not verdict.passed and "the class raised TypeError" in verdict.text


@pytest.mark.parametrize(
    "bad",
    [
        {"output": True, "grads": [1.0]},
        {"output": 1.0, "grads": "1.0"},
        {"output": 1.0, "grads": []},
        {"output": 1.0, "grads": [None, None, None, None]},
        "nothing",
        None,
    ],
)
def test_results_that_are_not_numbers_fail_closed(bad: object) -> None:
    results: list[object] = list(run(Value))
    results[0] = bad
    verdict = judge(GRAPHS, results)
    assert not verdict.passed and verdict.correct == 199
    assert "First wrong graph (#0)" in verdict.text


def test_a_missing_result_fails() -> None:
    verdict = judge(GRAPHS, run(Value)[:-1])
    assert not verdict.passed and "expected 200 results, got 199" in verdict.text


def test_a_graph_reads_as_code() -> None:
    graph = {"leaves": [3.0], "ops": [{"op": "pow", "args": [0], "exponent": 2},
                                      {"op": "mul", "args": [0, 1]}]}  # fmt: skip
    assert describe(graph) == "v0 = 3.0; v1 = v0**2; v2 = v0 * v1; backward from v2"
    assert evaluate_with(Value, graph) == {"output": 27.0, "grads": [27.0]}
    assert judge([graph], [{"output": 27.0, "grads": [27.0]}]).passed
    assert not judge([graph], [{"output": 27.0, "grads": [9.0]}]).passed


def test_a_part_can_grade_a_few_operations_only() -> None:
    graphs = draw_graphs(random.Random(1), 50, ops=("mul", "pow"))
    drawn = {op["op"] for graph in graphs for op in graph["ops"]}
    assert drawn <= {"mul", "pow"}  # unused leaves are joined with * too
    assert {"mul", "pow"} <= drawn
    assert judge(graphs, [evaluate_with(Value, g) for g in graphs]).passed
    with pytest.raises(ValueError, match="unknown operations"):
        draw_graphs(random.Random(1), 1, ops=("mod",))


def test_a_bug_in_pow_found_by_the_division_graphs_is_blamed_on_pow() -> None:
    """Lesson 9's a / b is a * b**-1: ** without its factor n shows in /'s graphs too, and
    costs **'s point, not /'s."""
    graphs = draw_unit(random.Random(6), "div", 200)
    verdict = judge(graphs, [evaluate_with(buggy("pow_factor"), g) for g in graphs], "div")
    assert verdict.passed and verdict.correct < 200, verdict.text
    assert BUGS["pow_factor"].line() in verdict.text, verdict.text


def test_no_graph_divides_by_a_value_near_zero() -> None:
    divisors = 0
    for graph in draw_unit(random.Random(8), "div", 200):
        values = [float(v) for v in graph["leaves"]]
        for op in graph["ops"]:
            divisor = {"div": 1, "rdiv_const": 0}.get(op["op"])
            if divisor is not None:
                divisors += 1
                assert abs(values[op["args"][divisor]]) >= 0.25, describe(graph)
            a = values[op["args"][0]]
            values.append(a ** op["exponent"] if op["op"] == "pow" else float(apply_op(op, values)))
    assert divisors > 200


def test_shared_nodes_simulate_exactly_what_each_variant_simulates_alone() -> None:
    """Within `shared_nodes` (a judging), the variants that build the same nodes for a
    graph share them; every variant of every bug still gives, on every graph, the outcome
    (or the error) it gives simulated alone."""
    from autograder.answers import value_bugs, value_graphs

    graphs = value_graphs.draw_graphs(random.Random(7), 5)
    variants = [
        variant
        for style in value_bugs.styles_for(graphs)
        for key in value_bugs.BUGS
        for variant in value_bugs._with_bug(value_bugs.Variant(style), key)
    ]

    def outcomes() -> list[object]:
        found: list[object] = []
        for variant in variants:
            for graph in graphs:
                try:
                    found.append(value_bugs.simulate(graph, variant))
                except (OverflowError, ZeroDivisionError, ValueError) as error:
                    found.append((type(error), error.args))
        return found

    alone = outcomes()
    with value_bugs.shared_nodes():
        shared, again = outcomes(), outcomes()  # built once, then read back
        assert value_bugs._shared  # what the variants share was kept meanwhile
    assert shared == alone and again == alone
    assert value_bugs._shared is None
    assert len(variants) > 100 and None in alone  # some variants raise: shared too
