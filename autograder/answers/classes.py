"""Class exercises: a class the learner writes, judged on random graphs against PyTorch.

09_autograd_by_hand's parts of kind "class" each name a `ClassTask`: which class to build
with (`Value`), which operations the graphs may use, and how many graphs to draw. The
grader draws the graphs (`value_graphs.draw_graphs`), the learner's class builds them
where no answer is (`value_build.evaluate_all`, in the sandbox or the kernel), and
`judge_class_results` compares the numbers with PyTorch's and names the classic bug.
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
    """The learner's numbers on `graphs` against PyTorch's; the classic bug named if one fits."""
    from autograder.answers.value_graphs import judge

    found = judge(graphs, results)
    if found.passed:
        return Verdict(True, f"✓ {task.label}: {found.text[2:]}", "match")
    named = any(line.startswith("Likely ") for line in found.text.splitlines())
    reason = "known_mistake" if named else "mismatch"
    message = f"✗ {task.label}: {found.text[2:]}"
    if not named:  # no classic bug fits: what the part checks, not a guess at the cause
        message += f"\n  No classic bug explains these numbers. What this part checks: {task.hint}"
    return Verdict(False, message, reason)


def draw_graphs_for(task: ClassTask, rng: random.Random) -> list[dict[str, Any]]:
    """The graphs a class part is judged on (plain JSON), drawn with `rng`."""
    from autograder.answers.value_graphs import draw_graphs

    return draw_graphs(rng, task.count, task.ops)
