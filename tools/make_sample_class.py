"""Build the sample class: seven students' nbgrader submissions of every exercise, each
student with their own numbers, and the grades they must get.

Each student's mistakes are stated once, in `autograder/authoring/sample_students.py`: per
assignment, which parts they got wrong, the line they wrote (with the given names, so it is
wrong for their own numbers) and what went wrong. Everything else is derived: the right
answers come from the specs (`autograder/specs/`), and the expected grades from the
statement and the specs' points: a part scores its points unless the student slipped on it,
or on an earlier part its answer is computed from (unless the statement names it as
unaffected, e.g. behind a shut ReLU where every value is 0 anyway). Written answers are
graded by the teacher, so they count 0. No grader's verdict is used.

Output (deterministic): instructor/sample_class/<student>/<name>/<name>.ipynb, a
timestamp.txt each, and instructor/sample_class/expected_grades.csv. `--check` writes
nothing and exits 1 naming every file that differs.
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime
import io
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from autograder.authoring.notebooks import given_source  # noqa: E402
from autograder.authoring.sample_students import AUTOGRAD, STUDENTS, Slip, Student  # noqa: E402
from autograder.core.spec import CODE_KINDS, ExerciseSpec  # noqa: E402
from autograder.core.spreadsheet import InertWriter  # noqa: E402
from autograder.core.verdict import format_value, matches  # noqa: E402
from autograder.diagnosis.byhand import read_hand_answers  # noqa: E402
from autograder.diagnosis.fresh_points import NUMERIC as NUMERIC_KINDS  # noqa: E402
from autograder.diagnosis.fresh_points import fixed_by_branches  # noqa: E402
from autograder.diagnosis.references import reference_quantities  # noqa: E402
from autograder.specs import SPECS, learner_givens  # noqa: E402

STUB_MARKER = "raise NotImplementedError()"
ANSWER_MARKER = "YOUR ANSWER HERE"
EXPECTED = "expected_grades.csv"


def assignments(release: Path) -> list[str]:
    """The assignment names found in the release folder, in order."""
    return sorted(p.name for p in release.iterdir() if (p / f"{p.name}.ipynb").is_file())


def function_answers(name: str) -> dict[str, str]:
    """The model code of the code parts (functions, classes), read from the solution notebook."""
    path = REPO_ROOT / "solutions" / name / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    found = {}
    for part in SPECS[name].parts:
        if part.kind not in CODE_KINDS:
            continue
        cell = next(
            c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part.name
        )
        region = cell.source.split("### BEGIN SOLUTION\n", 1)[1].split("### END SOLUTION", 1)[0]
        found[part.name] = textwrap.dedent(region).strip()
    return found


def _literal(value: float | bool) -> str:
    return repr(value) if isinstance(value, bool) else format_value(float(value))


def answers_of(student: Student, name: str) -> dict[str, str]:
    """The code each answer cell of `student` holds for assignment `name`."""
    spec = SPECS[name]
    mine = reference_quantities(name, learner_givens(name, student.name))
    code = {p.name: p.code for p in spec.parts if p.kind not in CODE_KINDS}
    if student.copied_from or name in student.literal:
        whose = student.copied_from or student.name
        theirs = reference_quantities(name, learner_givens(name, whose))
        code = {n: f"{n} = {_literal(q.value)}" for n, q in theirs.items()}
        if "out" in code:  # later parts of 07 use the `a` assigned with `out`
            code["out"] = f"a = {_literal(theirs['out'].values['a'])}\n" + code["out"]
    code.update(function_answers(name))
    code.update({part: slip.code for part, slip in student.slips.get(name, {}).items()})
    assert set(code) >= set(mine), name
    return code


def fill_code(source: str, answer: str) -> str:
    """Replace the stub's `raise NotImplementedError()` (and its comment) with `answer`."""
    lines = source.split("\n")
    index = next((i for i, line in enumerate(lines) if line.strip() == STUB_MARKER), None)
    if index is None:
        raise ValueError(f"no `{STUB_MARKER}` line in:\n{source}")
    start = index - 1 if index > 0 and ANSWER_MARKER in lines[index - 1] else index
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    new = [indent + line if line else line for line in answer.split("\n")] if answer else []
    return "\n".join(lines[:start] + new + lines[index + 1 :])


def submission(release_nb: Any, name: str, student: Student) -> Any:
    """The notebook `student` hands in for assignment `name`."""
    nb = copy.deepcopy(release_nb)
    if student.blank:
        return nb
    answers = answers_of(student, name)
    written = student.written.get(name, {})
    used: set[str] = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if not meta.get("solution"):
            continue
        if cell.cell_type == "code" and grade_id in answers:
            cell.source = fill_code(cell.source, answers[grade_id])
            used.add(grade_id)
        elif cell.cell_type == "markdown" and grade_id in written:
            cell.source = written[grade_id]
            used.add(grade_id)
    unknown = (set(answers) | set(written)) - used
    if unknown:
        raise ValueError(f"{name}: no answer cell for {sorted(unknown)}")
    return nb


def _assigned(code: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _loaded(code: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def wrong_parts(student: Student, name: str) -> set[str]:
    """The parts the statement makes wrong: slips, and what is computed from them."""
    spec = SPECS[name]
    slips = student.slips.get(name, {})
    code = answers_of(student, name)
    assigned_by = {n: part for part, source in code.items() for n in _assigned(source)}
    carried = _carried_forward(student, name, code)
    wrong: set[str] = set()
    for part in spec.part_names:  # in order: earlier parts are decided first
        if part in slips:
            wrong.add(part)
            continue
        sources = {assigned_by[n] for n in _loaded(code[part]) if n in assigned_by} - {part}
        if spec.part(part).kind == "class":  # every class part builds with the same class
            sources |= {p.name for p in spec.parts if p.kind == "class" and p.name != part}
        for source in sources & wrong:
            if part in carried:
                continue
            if part not in student.slips.get(name, {}).get(source, Slip("", "")).unaffected:
                wrong.add(part)
    if student.copied_from or name in student.literal:
        # a number written out earns nothing where the value follows the givens
        givens = learner_givens(name, student.name)
        fixed = fixed_by_branches(name, givens)
        for part in spec.parts:
            if part.kind in NUMERIC_KINDS and part.name not in fixed:
                wrong.add(part.name)
    if student.copied_from:
        mine = reference_quantities(name, learner_givens(name, student.name))
        theirs = reference_quantities(name, learner_givens(name, student.copied_from))
        for part, q in mine.items():
            if q.is_bool or theirs[part].is_bool:
                if q.value is not theirs[part].value:
                    wrong.add(part)
            elif not matches(float(q.value), float(theirs[part].value)):
                wrong.add(part)
    return wrong


def _carried_forward(student: Student, name: str, code: dict[str, str]) -> set[str]:
    """The parts judged as their own step because an earlier part they use is refused or
    unanswered, not a wrong number (`judge.carried_forward`): a slip there costs only its
    own part."""
    spec = SPECS[name]
    givens = learner_givens(name, student.name)
    cells = [given_source(spec), *(code[p] for p in spec.part_names if p in code)]
    answers = read_hand_answers(cells, givens)
    numeric = [p.name for p in spec.parts if p.kind in NUMERIC_KINDS]
    return {
        part
        for part, answer in answers.items()
        if part in numeric and answer.blocked_by in numeric and answer.recipe is not None
    }


def check_slips_are_wrong(student: Student, name: str) -> None:
    """Every stated hand slip must give a wrong number for the student's own numbers."""
    spec = SPECS[name]
    givens = learner_givens(name, student.name)
    mine = reference_quantities(name, givens)
    code = answers_of(student, name)
    cells = [given_source(spec), *(code[p] for p in spec.part_names if p in code)]
    answers = read_hand_answers(cells, givens)
    for part, slip in student.slips.get(name, {}).items():
        if part not in mine or slip.mistake == AUTOGRAD:
            continue
        answer = answers.get(part)
        if answer is not None and answer.status == "number" and answer.value is not None:
            q = mine[part]
            right = (
                answer.value is q.value
                if q.is_bool
                else matches(float(q.value), float(answer.value))
            )
            if right:
                raise ValueError(
                    f"{student.name}/{name}/{part}: the slip '{slip.mistake}' gives the right "
                    "number for this student's numbers; state another slip"
                )


def expected_grades(names: list[str]) -> list[tuple[str, str, int, int]]:
    """(student, assignment, score, max score), derived from the statement and the specs."""
    rows = []
    for student in STUDENTS:
        for name in names:
            spec: ExerciseSpec = SPECS[name]
            if student.blank or name in student.not_submitted:
                score = 0
            else:
                check_slips_are_wrong(student, name)
                wrong = wrong_parts(student, name)
                slips = student.slips.get(name, {})
                score = sum(p.points for p in spec.parts if p.name not in wrong)
                score += sum(slip.keeps for part, slip in slips.items() if part in wrong)
            rows.append((student.name, name, score, spec.max_points))
    return rows


def expected_csv(names: list[str]) -> str:
    """expected_grades.csv: what each submission must score (written answers count 0)."""
    out = io.StringIO()
    writer = InertWriter(out, lineterminator="\n")
    writer.writerow(["student", "assignment", "score", "max_score"])
    writer.writerows(expected_grades(names))
    return out.getvalue()


def timestamp(assignment_index: int, student: Student) -> str:
    """When the student submitted: a week per assignment, each student on their own day."""
    day = datetime.date(2026, 3, 1) + datetime.timedelta(
        days=1 + 7 * assignment_index + student.day_offset
    )
    return f"{day.isoformat()} {17 + student.day_offset % 3}:30:00.000000 UTC"


def build(release: Path, out: Path) -> list[Path]:
    """Write every submission and the expected grades under `out`; return the files."""
    written: list[Path] = []
    names = assignments(release)
    missing = set(SPECS) - set(names)
    if missing:
        raise SystemExit(f"error: {release} lacks release notebooks for {sorted(missing)}")
    for student in STUDENTS:
        for index, name in enumerate(names):
            if name in student.not_submitted:
                continue
            release_nb = nbformat.read(release / name / f"{name}.ipynb", as_version=4)
            nb = submission(release_nb, name, student)
            folder = out / student.name / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
            (folder / "timestamp.txt").write_text(timestamp(index, student) + "\n")
            written += [folder / f"{name}.ipynb", folder / "timestamp.txt"]
    out.mkdir(parents=True, exist_ok=True)
    (out / EXPECTED).write_text(expected_csv(names))
    written.append(out / EXPECTED)
    return written


def differences(generated: Path, committed: Path) -> list[str]:
    """Files that differ between a fresh build and the committed sample class."""

    def files(root: Path) -> set[Path]:
        found = {
            p.relative_to(root)
            for s in STUDENTS
            if (root / s.name).is_dir()
            for p in (root / s.name).rglob("*")
            if p.is_file()
        }
        return found | ({Path(EXPECTED)} if (root / EXPECTED).is_file() else set())

    fresh, stored = files(generated), files(committed)
    problems = [f"{rel}: missing" for rel in sorted(fresh - stored)]
    problems += [f"{rel}: not generated by this script" for rel in sorted(stored - fresh)]
    problems += [
        f"{rel}: differs"
        for rel in sorted(fresh & stored)
        if (generated / rel).read_bytes() != (committed / rel).read_bytes()
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: build the sample class, or --check that it is current."""
    parser = argparse.ArgumentParser(
        prog="make_sample_class",
        description=(__doc__ or "").split("\n\n")[0],
        epilog="Profiles: " + "; ".join(f"{s.name}: {s.profile}" for s in STUDENTS),
    )
    parser.add_argument(
        "--release",
        type=Path,
        default=REPO_ROOT / "exercises",
        help="folder of release notebooks <name>/<name>.ipynb (default: exercises/)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "instructor" / "sample_class",
        help="where to write <student>/<name>/<name>.ipynb (default: instructor/sample_class/)",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if --out is out of date"
    )
    args = parser.parse_args(argv)
    if not args.release.is_dir():
        print(f"error: no release folder {args.release} (run `make exercises`)", file=sys.stderr)
        return 2
    if args.check:
        with tempfile.TemporaryDirectory(prefix="sample-class-") as tmp:
            build(args.release, Path(tmp))
            problems = differences(Path(tmp), args.out)
        for line in problems:
            print(f"stale: {line}")
        if problems:
            print("the sample class is out of date: run `python tools/make_sample_class.py`")
            return 1
        print("the sample class is up to date")
        return 0
    files = build(args.release, args.out)
    print(f"wrote {len(files) // 2} submissions of {len(STUDENTS)} students to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
