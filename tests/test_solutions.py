"""The graded exercises: nbgrader grammar, coverage of the syllabus, and nbgrader validate.

solutions/ is the nbgrader source; exercises/ is the release generated from it. The
structural checks read the notebooks (fast); the `nbgrader`-marked ones run
`nbgrader validate` (solutions pass every test) and `nbgrader validate --invert` (the
release passes none) on every notebook, side by side on all cores.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbgrader_course import (
    EXPECTED_GRADES,
    REPO_ROOT,
    SAMPLE_CLASS,
    assignment_names,
    nbgrader_env,
    read_expected_grades,
)

from autograder.check import judge_hand_answer
from autograder.functions import FUNCTION_TASKS
from autograder.references import EXERCISES, reference_quantities

sys.path.insert(0, str(REPO_ROOT / "tools"))
import make_sample_class  # noqa: E402  (tools/ is not a package)

SOLUTIONS = REPO_ROOT / "solutions"
RELEASE = REPO_ROOT / "exercises"
NAMES = assignment_names(SOLUTIONS)
VALIDATE_TIMEOUT = 600
CHECK_CALL = re.compile(r'^exercise\.(check|check_function)\("(\w+)"\)$')


def solution_path(name: str) -> Path:
    return SOLUTIONS / name / f"{name}.ipynb"


def release_path(name: str) -> Path:
    return RELEASE / name / f"{name}.ipynb"


def release_generated() -> bool:
    return RELEASE.is_dir() and any(RELEASE.glob("*/*.ipynb"))


NO_RELEASE = "exercises/ has not been generated yet: run `make exercises`"


def read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)


def nbgrader_meta(cell: Any) -> dict[str, Any]:
    return dict(cell.metadata.get("nbgrader", {}))


def is_test_cell(cell: Any) -> bool:
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_answer_cell(cell: Any) -> bool:
    return cell.cell_type == "code" and bool(nbgrader_meta(cell).get("solution"))


def checked_names(nb: Any) -> list[tuple[str, str]]:
    """(kind, name) of every `exercise.check("name")` / `check_function` call, in order."""
    calls = []
    for cell in nb.cells:
        if is_test_cell(cell):
            last = cell.source.strip().splitlines()[-1]
            match = CHECK_CALL.match(last)
            assert match, f"test cell {nbgrader_meta(cell)['grade_id']} ends with {last!r}"
            calls.append((match.group(1), match.group(2)))
    return calls


# ------------------------------------------------------------------ the folders


def test_every_exercise_has_a_solution_notebook() -> None:
    assert list(EXERCISES) == NAMES
    for name in NAMES:
        assert [p.name for p in (SOLUTIONS / name).iterdir()] == [f"{name}.ipynb"]


def test_every_exercise_has_a_release_notebook() -> None:
    if not release_generated():
        pytest.skip(NO_RELEASE)
    assert sorted(p.name for p in RELEASE.iterdir() if p.is_dir()) == NAMES
    for name in NAMES:
        assert release_path(name).is_file(), f"{release_path(name)} is missing"


# ------------------------------------------------------------------ nbgrader grammar


@pytest.mark.parametrize("name", NAMES)
def test_title_states_the_rule_and_links_to_the_lesson(name: str) -> None:
    title = read(solution_path(name)).cells[0]
    assert title.cell_type == "markdown"
    assert re.match(rf"# {name[:2]}\. .+ — exercise\n", title.source)
    assert "by-hand rule" in title.source and ".backward()" in title.source
    link = f"](../../course/{name}.ipynb)"
    assert link in title.source, f"no link to the lesson ({link}) in the title cell"
    assert (REPO_ROOT / "course" / f"{name}.ipynb").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_setup_cell_is_locked_and_names_the_exercise(name: str) -> None:
    setup = read(solution_path(name)).cells[1]
    meta = nbgrader_meta(setup)
    assert meta["grade_id"] == "setup"
    assert meta["locked"] and not meta["grade"] and not meta["solution"]
    assert "from autograder import Exercise" in setup.source
    assert f'exercise = Exercise("{name}")' in setup.source


@pytest.mark.parametrize("name", NAMES)
def test_every_test_cell_follows_its_answer_with_a_docstring(name: str) -> None:
    cells = read(solution_path(name)).cells
    tests = [i for i, cell in enumerate(cells) if is_test_cell(cell)]
    assert tests, "no test cells"
    for i in tests:
        meta = nbgrader_meta(cells[i])
        answer = cells[i - 1]
        assert is_answer_cell(answer), f"{meta['grade_id']} is not directly under an answer"
        answer_id = nbgrader_meta(answer)["grade_id"]
        assert meta["grade_id"] == f"correct_{answer_id}"
        assert meta["locked"], f"{meta['grade_id']} is not locked"
        first = ast.parse(cells[i].source).body[0]
        assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        docstring = first.value.value
        assert isinstance(docstring, str) and "\n" not in docstring.strip()
        assert cells[i].source.startswith('"""'), f"{meta['grade_id']}: docstring first"
        assert cells[i].source.count("\n") == 1, f"{meta['grade_id']}: one check per cell"


@pytest.mark.parametrize("name", NAMES)
def test_every_grade_cell_has_points_and_a_heading(name: str) -> None:
    cells = read(solution_path(name)).cells
    for i, cell in enumerate(cells):
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        points = meta.get("points")
        assert isinstance(points, int | float) and points > 0, f"{meta['grade_id']}: points"
        # The part heading above the answer announces the same points.
        heading_index = i - 2 if is_test_cell(cell) else i - 1
        heading = cells[heading_index].source
        unit = "point" if points == 1 else "points"
        assert re.match(rf"## Part [A-Z] \({points:g} {unit}[,)]", heading), heading[:60]


@pytest.mark.parametrize("name", NAMES)
def test_answer_cells_hold_a_formula_and_a_solution_region(name: str) -> None:
    for cell in read(solution_path(name)).cells:
        if not is_answer_cell(cell):
            continue
        grade_id = nbgrader_meta(cell)["grade_id"]
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        assert cell.source.lstrip().startswith(("#", "def ")), f"{grade_id}: formula first"


@pytest.mark.parametrize("name", NAMES)
def test_one_written_answer_graded_by_hand(name: str) -> None:
    written = [
        c
        for c in read(solution_path(name)).cells
        if c.cell_type == "markdown" and nbgrader_meta(c).get("solution")
    ]
    assert len(written) == 1
    meta = nbgrader_meta(written[0])
    assert meta["grade"] and meta["points"] == 1 and not meta["locked"]
    assert written[0].source.startswith("### BEGIN SOLUTION\n")
    assert written[0].source.endswith("\n### END SOLUTION")


# ------------------------------------------------------------------ coverage of the syllabus


@pytest.mark.parametrize("name", NAMES)
def test_every_graded_quantity_is_checked_once(name: str) -> None:
    calls = checked_names(read(solution_path(name)))
    hand = [n for kind, n in calls if kind == "check"]
    code = [n for kind, n in calls if kind == "check_function"]
    assert sorted(hand) == sorted(reference_quantities(name)), "hand answers vs references"
    assert sorted(code) == sorted(FUNCTION_TASKS.get(name, {})), "code exercises"


@pytest.mark.parametrize("name", NAMES)
def test_solutions_obey_the_by_hand_rule(name: str) -> None:
    """Read statically, as the grader reads a submission: every hand answer is right."""
    from autograder.byhand import read_hand_answers

    cells = [c.source for c in read(solution_path(name)).cells if c.cell_type == "code"]
    answers = read_hand_answers(cells)
    for quantity in reference_quantities(name):
        verdict = judge_hand_answer(name, quantity, answers.get(quantity))
        assert verdict.passed, verdict.message


# ------------------------------------------------------------------ the sample class


def test_expected_grades_cover_the_class_with_the_notebooks_points() -> None:
    expected = read_expected_grades()
    students = [s.name for s in make_sample_class.STUDENTS]
    assert set(expected) == {(s, a) for s in students for a in NAMES}, EXPECTED_GRADES
    for name in NAMES:
        points = sum(
            nbgrader_meta(c).get("points", 0)
            for c in read(solution_path(name)).cells
            if nbgrader_meta(c).get("grade")
        )
        for student in students:
            score, max_score = expected[(student, name)]
            assert max_score == points, f"{name}: max_score {max_score}, notebook has {points}"
            assert 0 <= score <= max_score


def test_sample_class_is_generated_from_the_current_release() -> None:
    if not release_generated():
        pytest.skip(NO_RELEASE)
    code = make_sample_class.main(
        ["--release", str(RELEASE), "--out", str(SAMPLE_CLASS), "--check"]
    )
    assert code == 0, "run `python tools/make_sample_class.py` and commit instructor/sample_class"


# ------------------------------------------------------------------ nbgrader validate


VALIDATING = "[ValidateApp | INFO] Validating '"


def _validate(paths: list[Path], invert: bool) -> dict[str, str]:
    """Run one `nbgrader validate` over `paths`; its output split per notebook name."""
    args = [str(Path(sys.executable).parent / "nbgrader"), "validate"]
    args += ["--invert"] if invert else []
    result = subprocess.run(
        [*args, *map(str, paths)],
        cwd=REPO_ROOT,
        env=nbgrader_env(),  # unbuffered: the log (stderr) and results (stdout) stay in order
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=VALIDATE_TIMEOUT,
        check=False,
    )
    outputs = {}
    for chunk in result.stdout.split(VALIDATING)[1:]:
        path = Path(chunk.split("'", 1)[0])
        outputs[path.stem] = f"exit {result.returncode}: {VALIDATING}{chunk}"
    return outputs


@pytest.fixture(scope="module")
def validations() -> dict[tuple[str, bool], str]:
    """`nbgrader validate` of every solution and `--invert` of every release notebook.

    One nbgrader process per core, each validating a share of the notebooks in turn.
    """
    jobs = [(solution_path(n), False) for n in NAMES]
    if release_generated():
        jobs += [(release_path(n), True) for n in NAMES if release_path(n).is_file()]
    workers = max(1, min(os.cpu_count() or 1, len(jobs)))
    batches = []
    for i in range(workers):
        share = jobs[i::workers]
        for invert in (False, True):
            paths = [path for path, inv in share if inv == invert]
            if paths:
                batches.append((paths, invert))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda batch: _validate(*batch), batches))
    found: dict[tuple[str, bool], str] = {}
    for (_, invert), outputs in zip(batches, results, strict=True):
        found.update({(name, invert): text for name, text in outputs.items()})
    return found


@pytest.mark.nbgrader
@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_validate_passes_on_the_solution(
    name: str, validations: dict[tuple[str, bool], str]
) -> None:
    output = validations.get((name, False), "nbgrader validate never reached it")
    assert "Success! Your notebook passes all the tests." in output, output


@pytest.mark.nbgrader
@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_validate_invert_passes_on_the_release(
    name: str, validations: dict[tuple[str, bool], str]
) -> None:
    if not release_generated():
        pytest.skip(NO_RELEASE)
    assert (name, True) in validations, f"{release_path(name)} is missing"
    output = validations[(name, True)]
    assert "Success! The notebook does not pass any tests." in output, output
