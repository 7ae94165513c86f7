"""Class exercises: a class the learner writes, judged on random graphs against PyTorch.

09_autograd_by_hand's parts of kind "class" each name a `ClassTask`: which class to build
with (`Value`) and which of its operations the part credits, one point each. The grader
draws each operation's graphs (`value_graphs.draw_graphs` over `value_graphs.UNIT_OPS`),
the learner's class builds them where no answer is (`value_build.evaluate_all`, in the
sandbox or the kernel), and `judge_class_results` compares the numbers with PyTorch's,
operation by operation, and names the classic bug: a bug costs the operation that holds
it, not the others its graphs pass through.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from autograder.core.tasks import ClassTask
from autograder.core.verdict import Verdict


def judge_class_results(
    task: ClassTask, graphs: Sequence[dict[str, Any]], results: Sequence[object]
) -> Verdict:
    """The learner's numbers on `graphs` against PyTorch's, one verdict line per operation
    (the classic bug named if one fits); the part earns a point per operation right."""
    from autograder.answers.value_bugs import UNITS
    from autograder.answers.value_graphs import judge

    if len(results) != len(graphs):
        return Verdict(
            False, f"✗ {task.label}: expected {len(graphs)} results, got {len(results)}.",
            "mismatch",
        )  # fmt: skip
    lines: list[str] = []
    right, named = 0, False
    for unit in task.units:
        mine = [i for i, graph in enumerate(graphs) if graph.get("unit") == unit]
        found = judge([graphs[i] for i in mine], [results[i] for i in mine], unit)
        right += found.passed
        named = named or any(line.startswith("Likely ") for line in found.text.splitlines())
        text = f"{found.text[:2]}{UNITS[unit]}: {found.text[2:]}"
        if not found.passed and "Likely " not in found.text and "cannot be checked" not in text:
            text += "\n  No classic bug explains these numbers. What this operation checks: "
            text += task.hint
        lines.append(text)
    message = f"{task.label}: {right} of {len(task.units)} operations right.\n" + "\n".join(lines)
    if right == len(task.units):
        return Verdict(True, f"✓ {message}", "match")
    reason = "known_mistake" if named else "mismatch"
    return Verdict(False, f"✗ {message}", reason, points=float(right) if right else None)


def draw_graphs_for(task: ClassTask, rng: random.Random) -> list[dict[str, Any]]:
    """The graphs a class part is judged on (plain JSON), drawn with `rng`: `task.count`
    for each operation it credits, each marked with its operation."""
    from autograder.answers.value_graphs import draw_unit

    drawn = [(unit, draw_unit(rng, unit, task.count)) for unit in task.units]
    return [{**graph, "unit": unit} for unit, graphs in drawn for graph in graphs]
