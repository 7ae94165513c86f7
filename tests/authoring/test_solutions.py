"""The graded exercises: agreement with their specs, the by-hand rule, the sample class,
and nbgrader validate.

solutions/ is the nbgrader source (its graded cells generated from the specs by
`autograder.authoring.notebooks`); exercises/ is the release generated from it. The
structural checks read the notebooks (fast); the `nbgrader`-marked ones run
`nbgrader validate` (solutions pass every test) and `nbgrader validate --invert` (the
release passes none) on every notebook, the two side by side.
"""

from __future__ import annotations

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbgrader_course import (
    CACHE_ROOT,
    EXPECTED_GRADES,
    PACKAGE,
    REPO_ROOT,
    SAMPLE_CLASS,
    assignment_names,
    disk_cached,
    nbgrader_run_key,
    read_expected_grades,
    run_nbgrader_process,
)

from autograder.authoring import notebooks as spec_notebooks
from autograder.core.verdict import format_value
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.references import EXERCISES, reference_quantities
from autograder.learner.check import judge_hand_answer
from autograder.specs import SPECS, learner_givens

sys.path.insert(0, str(REPO_ROOT / "tools"))
import make_sample_class  # noqa: E402  (tools/ is not a package)

SOLUTIONS = REPO_ROOT / "solutions"
RELEASE = REPO_ROOT / "exercises"
NAMES = assignment_names(SOLUTIONS)


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
def test_the_graded_cells_are_those_of_the_spec(name: str) -> None:
    """Setup, given, headings, stubs, model answers and test cells come from the spec."""
    assert spec_notebooks.differences(SPECS[name], read(solution_path(name))) == []


def test_a_notebook_that_disagrees_with_its_spec_is_named_and_rewritten(tmp_path: Path) -> None:
    name = "03_a_neuron_by_hand"
    nb = read(solution_path(name))
    test_cell = next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "correct_dL_dw")
    test_cell.metadata["nbgrader"]["points"] = 5
    prose = next(c for c in nb.cells if c.source.startswith("## Part D"))
    prose.source += "\n\nA sentence the instructor added."
    problems = spec_notebooks.differences(SPECS[name], nb)
    assert len(problems) == 1 and 'exercise.check("dL_dw")' in problems[0]
    fixed = spec_notebooks.rebuild(SPECS[name], nb)
    assert spec_notebooks.differences(SPECS[name], fixed) == []
    assert any("A sentence the instructor added." in c.source for c in fixed.cells)


@pytest.mark.parametrize("name", NAMES)
def test_one_written_answer_graded_by_hand(name: str) -> None:
    written = [
        c
        for c in read(solution_path(name)).cells
        if c.cell_type == "markdown" and nbgrader_meta(c).get("solution")
    ]
    assert len(written) == 1
    assert written[0].source.startswith("### BEGIN SOLUTION\n")
    assert written[0].source.endswith("\n### END SOLUTION")


@pytest.mark.parametrize("name", NAMES)
def test_solutions_obey_the_by_hand_rule_for_every_learner(name: str) -> None:
    """Read statically with each learner's numbers, as the grader reads a submission."""
    cells = [c.source for c in read(solution_path(name)).cells if c.cell_type == "code"]
    for learner in ("ada", "ben", "someone-else"):
        givens = learner_givens(name, learner)
        answers = read_hand_answers(cells, givens)
        for quantity in reference_quantities(name, givens):
            verdict = judge_hand_answer(name, quantity, answers.get(quantity), givens=givens)
            assert verdict.passed, (learner, verdict.message)


@pytest.mark.parametrize("name", NAMES)
def test_no_prose_uses_the_lessons_numbers(name: str) -> None:
    """Each learner has their own numbers: the notebook's text names them, never the lesson's."""
    spec = SPECS[name]
    lesson = {f"{g.name} = {format_value(g.lesson)}" for g in spec.givens}
    text = "\n".join(c.source for c in read(solution_path(name)).cells)
    assert not [phrase for phrase in lesson if phrase in text]


# ------------------------------------------------------------------ the sample class


def test_the_sample_class_has_its_own_numbers() -> None:
    for name in NAMES:
        submitted = [s.name for s in make_sample_class.STUDENTS if name not in s.not_submitted]
        drawn = {tuple(sorted(learner_givens(name, s).items())) for s in submitted}
        assert len(drawn) >= len(submitted) - 1, name


def test_expected_grades_cover_the_class_with_the_specs_points() -> None:
    expected = read_expected_grades()
    students = [s.name for s in make_sample_class.STUDENTS]
    assert set(expected) == {(s, a) for s in students for a in NAMES}, EXPECTED_GRADES
    for (_, name), (score, max_score) in expected.items():
        assert max_score == SPECS[name].max_points and 0 <= score < max_score


def test_copied_numbers_score_only_where_they_coincide() -> None:
    """gus wrote ada's numbers: what depends on the numbers scores 0 for him."""
    expected = read_expected_grades()
    for name in NAMES:
        ada, gus = expected[("ada", name)][0], expected[("gus", name)][0]
        assert gus < ada, name


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
    result = run_nbgrader_process(
        "validate",
        *(["--invert"] if invert else []),
        *map(str, paths),
        cwd=REPO_ROOT,
        merge_output=True,  # unbuffered (nbgrader_env): the log and results in order
    )
    outputs = {}
    for chunk in result.stdout.split(VALIDATING)[1:]:
        path = Path(chunk.split("'", 1)[0])
        outputs[path.stem] = f"exit {result.returncode}: {VALIDATING}{chunk}"
    return outputs


PASSES = "Success! Your notebook passes all the tests."
PASSES_NONE = "Success! The notebook does not pass any tests."
VALIDATED = "validations.json"


def _validate_every_notebook() -> dict[tuple[str, bool], str]:
    """`nbgrader validate` of every solution and `--invert` of every release notebook.

    Two nbgrader processes side by side, one per kind, each validating its notebooks in
    turn: the fewest processes (each costs an nbgrader start) that keep both cores busy.
    """
    batches = [([solution_path(n) for n in NAMES], False)]
    if release_generated():
        releases = [release_path(n) for n in NAMES if release_path(n).is_file()]
        batches += [(releases, True)] if releases else []
    with ThreadPoolExecutor(max_workers=len(batches)) as pool:
        results = list(pool.map(lambda batch: _validate(*batch), batches))
    found: dict[tuple[str, bool], str] = {}
    for (_, invert), outputs in zip(batches, results, strict=True):
        found.update({(name, invert): text for name, text in outputs.items()})
    return found


class _NotKept(Exception):
    """A validation run in which some notebook did not give its expected result."""

    def __init__(self, found: dict[tuple[str, bool], str]) -> None:
        self.found = found


@pytest.fixture(scope="module")
def validations(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], str]:
    """Every notebook's `nbgrader validate` output, by (name, inverted).

    A run in which every notebook gave its expected result is kept on disk under the hash
    of what it depends on (the solutions, the release, this file, and what every nbgrader
    run of the repository depends on: nbgrader_course.nbgrader_run_key, with the files of
    the autograder package its processes read), and copied by a later session with the
    same inputs; a run with a failure is never kept."""

    def build(folder: Path) -> None:
        found = _validate_every_notebook()
        expected = [(n, False) for n in NAMES]
        expected += [(n, True) for n in NAMES] if release_generated() else []
        outcome = {key: PASSES_NONE if key[1] else PASSES for key in expected}
        if any(words not in found.get(key, "") for key, words in outcome.items()):
            raise _NotKept(found)
        folder.mkdir()
        (folder / VALIDATED).write_text(json.dumps([[*key, text] for key, text in found.items()]))

    inputs = [SOLUTIONS, *([RELEASE] if RELEASE.is_dir() else []), Path(__file__).resolve()]
    workdir = tmp_path_factory.mktemp("validations") / "run"
    try:
        key = nbgrader_run_key(inputs)
        disk_cached(CACHE_ROOT / "nbgrader-validate", key, workdir, build, code=PACKAGE)
    except _NotKept as failed:
        return failed.found
    kept = json.loads((workdir / VALIDATED).read_text())
    return {(name, invert): text for name, invert, text in kept}


@pytest.mark.nbgrader
@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_validate_passes_on_the_solution(
    name: str, validations: dict[tuple[str, bool], str]
) -> None:
    output = validations.get((name, False), "nbgrader validate never reached it")
    assert PASSES in output, output


@pytest.mark.nbgrader
@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_validate_invert_passes_on_the_release(
    name: str, validations: dict[tuple[str, bool], str]
) -> None:
    if not release_generated():
        pytest.skip(NO_RELEASE)
    assert (name, True) in validations, f"{release_path(name)} is missing"
    output = validations[(name, True)]
    assert PASSES_NONE in output, output


def test_a_slip_that_gives_the_right_number_is_refused() -> None:
    harmless = make_sample_class.Student(
        "ada",
        "a slip that is not one",
        slips={"03_a_neuron_by_hand": {"dL_db": make_sample_class.Slip("dL_db = dL_dh", "none")}},
    )
    with pytest.raises(ValueError, match="gives the right number"):
        make_sample_class.check_slips_are_wrong(harmless, "03_a_neuron_by_hand")
