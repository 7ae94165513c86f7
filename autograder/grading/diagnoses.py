"""The grader's diagnoses, kept machine-readable for class analytics (`autograder report`).

The verdicts `trusted` computes become the test cells' messages; this module also keeps
them as data: for every checked quantity of every test cell, whether it passed, the
diagnosis kind (`Verdict.reason`, whatever names the diagnoses use), the learner's
value and, for a wrong hand answer, its formula in the given names
(`autograder.diagnosis.normal_form`: the same text for every learner who wrote it).
`autograder grade` writes one file per submission,
`.autograder/diagnoses/<assignment>/<student>.json`, carrying the fingerprint of the
graded files so a reader can tell a current file from a stale one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.core.verdict import Verdict, format_value
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.normal_form import normal_form
from autograder.grading import trusted
from autograder.specs import exercise_spec

DIAGNOSES_DIR = "diagnoses"


def notebook_checks(
    plan: trusted.TrustedPlan,
    cells: list[Any],
    found: dict[int, list[Verdict]],
    givens: dict[str, float],
) -> list[dict[str, Any]]:
    """One record per check of one notebook (`found`: its trusted verdicts by cell index):
    part (grade_id), quantity, passed, kind, value, formula (None: right, code, or no
    formula read)."""
    code_sources = [cell.source for cell in cells if cell.cell_type == "code"]
    answers = read_hand_answers(code_sources, givens if plan.exercise else None)
    keep = exercise_spec(plan.exercise).part_names if plan.exercise else ()
    records = []
    for index, verdicts in sorted(found.items()):
        part = cells[index].metadata.get("nbgrader", {}).get("grade_id", f"cell-{index}")
        names = list(plan.hand_checks.get(index, []))
        if index in plan.function_checks:
            names.append(plan.function_checks[index])
        if index in plan.class_checks:
            names.append(plan.class_checks[index])
        for name, verdict in zip(names, verdicts, strict=True):
            answer = answers.get(name)
            hand = name in plan.hand_checks.get(index, [])
            formula = (
                None if verdict.passed or not hand else normal_form(name, answers, givens, keep)
            )
            if not hand:  # code: the verdict tells (the classic bug it names, when it names one)
                lines = verdict.message.splitlines()
                named = verdict.reason == "known_mistake" and len(lines) > 1
                value = "" if verdict.passed else (lines[1].strip() if named else lines[0])
            elif answer is None:
                value = "(not assigned)"
            else:
                value = format_value(answer.value) if answer.value is not None else answer.detail
            records.append(
                {
                    "part": part,
                    "quantity": name,
                    "passed": verdict.passed,
                    "kind": verdict.reason or ("match" if verdict.passed else "unknown"),
                    "value": value,
                    "formula": formula,
                }
            )
    return records


def diagnoses_path(state_dir: Path, assignment: str, student: str) -> Path:
    return state_dir / DIAGNOSES_DIR / assignment / f"{student}.json"


def write_diagnoses(
    state_dir: Path,
    assignment: str,
    student: str,
    fingerprint: str,
    notebooks: dict[str, list[dict[str, Any]]],
) -> None:
    """Store one submission's checks (notebook id -> records), replacing older ones."""
    from autograder.grading.state import atomic_write_json

    atomic_write_json(
        diagnoses_path(state_dir, assignment, student),
        {"fingerprint": fingerprint, "notebooks": notebooks},
    )


def read_diagnoses(state_dir: Path, assignment: str, student: str) -> dict[str, Any] | None:
    """A submission's stored checks, or None when there are none or they are stale."""
    try:
        stored = json.loads(diagnoses_path(state_dir, assignment, student).read_text())
        marker = json.loads((state_dir / "graded" / assignment / f"{student}.json").read_text())
    except (OSError, ValueError):
        return None
    if marker.get("status") != "graded" or marker.get("fingerprint") != stored.get("fingerprint"):
        return None
    return dict(stored)
