"""docs/exercises.md, generated from the specs: every exercise's givens, parts and points.

python -m autograder.authoring.docs --check   # exit 1 when docs/exercises.md is stale
python -m autograder.authoring.docs --write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.core.spec import ExerciseSpec
from autograder.core.verdict import format_value
from autograder.specs import SPECS

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET = Path("docs") / "exercises.md"


def _givens(spec: ExerciseSpec) -> str:
    rows = [
        "| given | meaning | drawn from (never the lesson's) | lesson |",
        "| --- | --- | --- | --- |",
    ]
    for g in spec.givens:
        choices = ", ".join(format_value(c) for c in g.choices if c != g.lesson)
        rows.append(f"| `{g.name}` | {g.meaning} | {choices} | {format_value(g.lesson)} |")
    return "\n".join(rows)


def _parts(spec: ExerciseSpec) -> str:
    rows = [
        "| part | assign | what | kind | points | answer |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in spec.parts:
        answer = "code" if p.kind in ("function", "class") else f"`{p.answer}`"
        kind = p.kind + (f" (gate {p.gate})" if p.gate else "")
        rows.append(
            f"| {spec.letter(p.name)} | `{p.name}` | {p.label} | {kind} | {p.points} | {answer} |"
        )
    for grade_id, points in spec.written:
        rows.append(
            f"| {spec.letter(grade_id)} | `{grade_id}` | in words | read by the teacher "
            f"| {points} | |"
        )
    return "\n".join(rows)


def render() -> str:
    """The whole page."""
    lines = [
        "# The exercises (generated from `autograder/specs/`; do not edit)",
        "",
        "Regenerate with `python -m autograder.authoring.docs --write`. Each learner's numbers are",
        "drawn from the choices below, seeded by the course, the assignment and the learner;",
        "the constraints hold for every draw. The lesson's numbers are the worked example of",
        "docs/syllabus.md and are never drawn.",
        "",
        "| exercise | parts | points (with the written answer) |",
        "| --- | --- | --- |",
    ]
    for spec in SPECS.values():
        lines.append(f"| {spec.name} | {len(spec.parts)} | {spec.max_points} |")
    for spec in SPECS.values():
        lines += ["", f"## {spec.name}: {spec.title}", "", _givens(spec), ""]
        if spec.constraints:
            lines.append("Constraints: " + "; ".join(what for what, _ in spec.constraints) + ".")
            lines.append("")
        if spec.repeated_backward:
            shown = ", ".join(f"`{n}`" for n in spec.repeated_backward)
            lines.append(f"Backward is called repeatedly for {shown}.")
            lines.append("")
        lines.append(_parts(spec))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Check or rewrite docs/exercises.md."""
    parser = argparse.ArgumentParser(prog="python -m autograder.authoring.docs")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if docs/exercises.md is stale")
    mode.add_argument("--write", action="store_true", help="rewrite docs/exercises.md")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help="course repository root")
    args = parser.parse_args(argv)
    path = args.repo / TARGET
    text = render()
    if args.write:
        path.write_text(text)
        print(f"wrote {path}")
        return 0
    if not path.is_file() or path.read_text() != text:
        print(f"{path} is stale: run python -m autograder.authoring.docs --write")
        return 1
    print(f"{path} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
