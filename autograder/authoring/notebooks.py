"""The graded skeleton of each solution notebook, generated from its exercise's spec.

A solution notebook (solutions/<name>/<name>.ipynb) is hand-written prose around cells the
spec decides: the setup cell, the given cell, and for each part its heading line
("## Part D (1 point): the gradient at a"), its answer cell (the stub naming what to
assign, and the model answer) and its test cell. Written answers (read by the teacher)
keep their hand-written question and model answer; only their heading line is generated.

    python -m autograder.authoring.notebooks --check   # exit 1 naming every disagreement
    python -m autograder.authoring.notebooks --write   # rewrite the graded cells, keep the prose

`--write` orders the parts as the spec does (written answers last); prose cells travel
with the part that follows them. A part the notebook lacks gets a placeholder question.
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from autograder.core.spec import ExerciseSpec, Part
from autograder.specs import SPECS

REPO_ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "(Write the question of this part here.)"


def _meta(
    grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int = 0
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(cell_id: str, source: str, metadata: dict[str, Any]) -> Any:
    cell = nbformat.v4.new_code_cell(source, metadata=metadata)
    cell.id = cell_id
    return cell


def _markdown(cell_id: str, source: str, metadata: dict[str, Any] | None = None) -> Any:
    cell = nbformat.v4.new_markdown_cell(source, metadata=metadata or {})
    cell.id = cell_id
    return cell


def setup_source(spec: ExerciseSpec) -> str:
    """The locked setup cell."""
    imports = "import torch\n\n" if any(p.kind == "function" for p in spec.parts) else ""
    return f'{imports}from autograder import Exercise\n\nexercise = Exercise("{spec.name}")'


def given_source(spec: ExerciseSpec) -> str:
    """The locked given cell: the same text for every learner (nbgrader's checksum holds)."""
    names = spec.given_names
    quoted = ", ".join(f'"{n}"' for n in names)
    meanings = "; ".join(f"{g.name}: {g.meaning}" for g in spec.givens if g.meaning)
    return f"{', '.join(names)} = exercise.given({quoted})" + (
        f"\n# {meanings}" if meanings else ""
    )


def heading(spec: ExerciseSpec, grade_id: str, points: int, title: str, written: bool) -> str:
    """A part's heading line."""
    unit = "point" if points == 1 else "points"
    teacher = ", read by your teacher" if written else ""
    return f"## Part {spec.letter(grade_id)} ({points} {unit}{teacher}): {title}"


def answer_source(part: Part) -> str:
    """The answer cell of a hand-answered part: the stub, then the model answer."""
    return f"{part.stub}\n### BEGIN SOLUTION\n{part.code}\n### END SOLUTION"


def test_source(part: Part) -> str:
    """The test cell of a part."""
    if part.kind == "function":
        return f'exercise.check_function("{part.name}")'
    if part.kind == "class":
        return f'exercise.check_class("{part.name}")'
    return f'exercise.check("{part.name}")'


@dataclass
class Block:
    """One graded item and the cells that belong to it."""

    grade_id: str
    prose: list[Any] = field(default_factory=list)
    """Cells before the heading (section titles, explanations)."""
    heading: Any = None
    cells: list[Any] = field(default_factory=list)
    """The answer and test cells (or the written answer cell)."""


def _grade_id(cell: Any) -> str | None:
    meta = cell.metadata.get("nbgrader", {})
    value = meta.get("grade_id")
    return str(value) if value else None


def _item_of(spec: ExerciseSpec, grade_id: str) -> str | None:
    """The part or written answer a cell's grade id belongs to."""
    if grade_id in spec.part_names or grade_id in dict(spec.written):
        return grade_id
    if grade_id.startswith("correct_") and grade_id[8:] in spec.part_names:
        return grade_id[8:]
    return None


def split(spec: ExerciseSpec, nb: Any) -> tuple[list[Any], list[Any], dict[str, Block], list[Any]]:
    """(cells before setup, cells of the given section, blocks by grade id, trailing cells)."""
    cells = list(nb.cells)
    preamble: list[Any] = []
    given: list[Any] = []
    blocks: dict[str, Block] = {}
    pending: list[Any] = []
    stage = "preamble"
    for index, cell in enumerate(cells):
        gid = _grade_id(cell)
        item = _item_of(spec, gid) if gid else None
        if gid == "setup":
            stage = "given"
            continue
        if gid == "given":
            given.extend(pending)
            pending = []
            stage = "parts"
            continue
        if stage == "preamble":
            preamble.append(cell)
            continue
        if stage == "given" and item is None:
            pending.append(cell)
            continue
        if item is None:
            following = cells[index + 1] if index + 1 < len(cells) else None
            following_gid = _grade_id(following) if following is not None else None
            starts_part = (
                cell.cell_type == "markdown"
                and cell.source.startswith("## Part ")
                and following_gid is not None
                and _item_of(spec, following_gid) is not None
            )
            if starts_part and following_gid is not None:
                block = blocks.setdefault(following_gid, Block(following_gid))
                block.prose.extend(pending)
                block.heading = cell
                pending = []
            else:
                pending.append(cell)
            continue
        block = blocks.setdefault(item, Block(item))
        if not block.heading:
            block.prose.extend(pending)
            pending = []
        block.cells.append(cell)
    return preamble, given, blocks, pending


def _title(cell: Any, fallback: str) -> str:
    if cell is None:
        return fallback
    first = cell.source.split("\n", 1)[0]
    return first.split("): ", 1)[1] if "): " in first else fallback


def rebuild(spec: ExerciseSpec, nb: Any) -> Any:
    """The notebook with every graded cell as the spec says, the prose kept."""
    preamble, given_prose, blocks, trailing = split(spec, nb)
    out = copy.deepcopy(nb)
    cells: list[Any] = [*preamble]
    lock = {"grade": False, "solution": False, "locked": True}
    cells.append(_code("setup", setup_source(spec), _meta("setup", **lock)))
    cells.extend(given_prose)
    cells.append(_code("given", given_source(spec), _meta("given", **lock)))
    items: list[tuple[str, int, Part | None]] = [(p.name, p.points, p) for p in spec.parts]
    items += [(gid, points, None) for gid, points in spec.written]
    for grade_id, points, part in items:
        block = blocks.get(grade_id, Block(grade_id))
        cells.extend(block.prose)
        if part is not None:
            title = part.title or part.label
        else:
            title = _title(block.heading, grade_id.replace("_", " "))
        line = heading(spec, grade_id, points, title, written=part is None)
        if block.heading is not None:
            head = copy.deepcopy(block.heading)
            rest = head.source.split("\n", 1)
            head.source = line + ("\n" + rest[1] if len(rest) > 1 else "")
        else:
            head = _markdown(f"part-{grade_id}", f"{line}\n\n{PLACEHOLDER}")
        cells.append(head)
        if part is None:
            written = [c for c in block.cells if _grade_id(c) == grade_id]
            answer = written[0] if written else _markdown(grade_id, "")
            meta = _meta(grade_id, grade=True, solution=True, locked=False, points=points)
            if not written:
                answer.source = "### BEGIN SOLUTION\n(the model answer)\n### END SOLUTION"
            answer.metadata.update(meta)
            cells.append(answer)
            continue
        answer_meta = _meta(grade_id, grade=False, solution=True, locked=False)
        if part.kind in ("function", "class"):
            own = [c for c in block.cells if _grade_id(c) == grade_id]
            if not own:
                raise ValueError(f"{spec.name}: write the code of part {grade_id} by hand")
            answer = copy.deepcopy(own[0])
            answer.metadata.update(answer_meta)
        else:
            answer = _code(grade_id, answer_source(part), answer_meta)
        cells.append(answer)
        test_meta = _meta(
            f"correct_{grade_id}", grade=True, solution=False, locked=True, points=points
        )
        cells.append(_code(f"correct_{grade_id}", test_source(part), test_meta))
    cells.extend(trailing)
    out.cells = cells
    return out


def _comparable(nb: Any) -> list[tuple[str, str, Any]]:
    return [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in nb.cells]


def differences(spec: ExerciseSpec, nb: Any) -> list[str]:
    """Where the notebook disagrees with the spec (empty when it agrees)."""
    wanted = _comparable(rebuild(spec, nb))
    have = _comparable(nb)
    problems: list[str] = []
    for index in range(max(len(wanted), len(have))):
        w = wanted[index] if index < len(wanted) else None
        h = have[index] if index < len(have) else None
        if w != h:
            shown = (h[1].split("\n")[0] if h else "(no cell)")[:60]
            expected = (w[1].split("\n")[0] if w else "(no cell)")[:60]
            problems.append(f"cell {index}: has {shown!r}, the spec gives {expected!r}")
    return problems


def solution_path(repo: Path, name: str) -> Path:
    """Where the solution notebook of `name` lives."""
    return repo / "solutions" / name / f"{name}.ipynb"


def main(argv: list[str] | None = None) -> int:
    """Check (or rewrite) the graded cells of every solution notebook."""
    parser = argparse.ArgumentParser(prog="python -m autograder.authoring.notebooks")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if a notebook disagrees")
    mode.add_argument("--write", action="store_true", help="rewrite the graded cells")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT)
    parser.add_argument("names", nargs="*", help="exercises (default: all)")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.names or list(SPECS):
        spec = SPECS[name]
        path = solution_path(args.repo, name)
        if not path.is_file():
            print(f"{path}: missing (the spec {name} has no solution notebook)")
            failed += 1
            continue
        nb = nbformat.read(path, as_version=4)
        if args.write:
            nbformat.write(rebuild(spec, nb), path)
            print(f"wrote the graded cells of {path}")
            continue
        problems = differences(spec, nb)
        for line in problems[:20]:
            print(f"{path}: {line}")
        failed += bool(problems)
    if args.check:
        if failed:
            print(
                "solutions/ disagrees with the specs: run "
                "`python -m autograder.authoring.notebooks --write`, then `make exercises`"
            )
            return 1
        print(f"solutions/ agrees with the specs ({len(args.names or SPECS)} exercises)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
