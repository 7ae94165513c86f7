"""Structures that vary per learner (issue 27): every structure of every varied exercise is
the same exercise (the same givens, parts, kinds and points), PyTorch agrees with every
chain and model answer for 200 class learners' numbers, what the Given cell says of the
learner's problem holds in the program, a class learner never gets the lesson's structure
and self-study always does, and the public solutions earn only what does not depend on
the structure while each learner's own formulas earn every point."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from autograder.core.engine import _column, compute
from autograder.core.givens import PUBLIC, Site
from autograder.core.spec import ExerciseSpec
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.learner.check import Exercise
from autograder.specs import (
    SPECS,
    exercise_spec,
    learner_givens,
    learner_problem,
    lesson_spec,
    practice,
    problem_words,
)
from autograder.specs.ex07_try_it import Closing
from evaluation.public_solutions import formula_points, own_sources, solution_sources

CLASS = Site("variants-test-class", "a test secret")
LEARNERS = [f"variant-learner-{i}" for i in range(200)]
VARIED = [name for name, spec in SPECS.items() if spec.variants]
PROBLEMS = [f"{name}[{s.tag}]" for name in VARIED for s in SPECS[name].variants]
NEURON_MATH = (r"w·x \+ b", r"\(a − y\)²", r"\b2\(a − y\)", r"dh/dw = x\b", r"dh/db = 1\b")
LESSON_MATH = {
    "01_what_a_gradient_is": (r"y = x²(?!/)", r"\b2x\b"),
    "02_the_computation_graph": (r"x²", r"x\*\*2", r"c·y \+ d", r"c\*y \+ d", r"\b2c?·?x\b"),
    "03_a_neuron_by_hand": NEURON_MATH,
    "04_the_dead_relu": NEURON_MATH,
    "09_autograd_by_hand": (
        r"w \\cdot x \+ b",
        r"\(a - y\)\^2",
        r"w_v \* x_v \+ b_v",
        *NEURON_MATH,
    ),
    "05_three_mechanics": (r"k·y", r"y \* k", r"× k", r"3k·x²", r"x²", r"x\*\*2", r"\b2x\b"),
    "06_one_backward_every_parameter": (
        r"\(y − target\)²(?!/)",
        r"\b2\(y − target\)",
        r"f = u ?[·*] ?sq",
        r"u \\cdot sq",
        r"u \\cdot u",
    ),
    "07_try_it": (
        r"x³ [−-] 2x",
        r"3x² [−-] 2",
        r"\(out − target\)²(?!/)",
        r"\b2\(out − target\)",
    ),
    "08_when_backward_complains": (r"x\^2", r"c·x²", r"c \* xt?\*\*2", r"\b2c·x\b"),
}
"""The lesson's structure in math, which the shared notebook may name only as the lesson's."""


def test_some_exercise_varies() -> None:
    assert "01_what_a_gradient_is" in VARIED


def _shape(spec: ExerciseSpec) -> object:
    return (
        spec.givens,
        dict(spec.constants),
        [(p.name, p.kind, p.points, p.of, p.title, p.formula, p.gate) for p in spec.parts],
        spec.written,
        spec.repeated_backward,
    )


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_structure_is_the_same_exercise(problem: str) -> None:
    """Same parts, same skills, and the same prompts in the (shared) notebook."""
    base = problem.partition("[")[0]
    varied = exercise_spec(problem)
    assert varied.name == problem
    assert _shape(varied) == _shape(SPECS[base])
    assert varied.structure != SPECS[base].structure
    assert varied.structure in SPECS[base].variants


def _words_hold(spec: ExerciseSpec, rows: list[dict[str, object]]) -> None:
    """Each claim of the structure's words equals the program's node, row by row."""
    import torch

    assert spec.structure is not None
    assert spec.structure.claims
    columns = {
        name: torch.tensor([float(r[name]) for r in rows], dtype=torch.float64)  # type: ignore[arg-type]
        for name in (*spec.given_names, *spec.constants)
    }
    for node, expression in spec.structure.claims:
        stated = _column(expression, columns).tolist()
        for row, value in zip(rows, stated, strict=True):
            assert math.isclose(value, row[node], rel_tol=1e-12, abs_tol=1e-12), (node, row)  # type: ignore[arg-type]


@pytest.mark.parametrize("problem", PROBLEMS)
def test_pytorch_agrees_with_every_chain_for_200_class_learners(problem: str) -> None:
    """`compute` checks every gradient by finite differences and every chain and model
    answer against PyTorch (SpecError otherwise); the words the Given cell prints hold."""
    base = problem.partition("[")[0]
    spec = exercise_spec(problem)
    _words_hold(spec, compute(spec, [learner_givens(base, n, CLASS) for n in LEARNERS]))


@pytest.mark.parametrize("exercise", VARIED)
def test_the_lesson_structure_holds_its_words_too(exercise: str) -> None:
    spec = SPECS[exercise]
    assert spec.structure is not None and spec.vary is not None
    assert spec.structure not in spec.variants
    _words_hold(spec, compute(spec, [learner_givens(exercise, n) for n in LEARNERS[:50]]))


@pytest.mark.parametrize("exercise", VARIED)
def test_a_class_draws_every_structure_but_never_the_lessons(exercise: str) -> None:
    drawn = Counter(learner_problem(exercise, learner, CLASS) for learner in LEARNERS)
    assert set(drawn) == {f"{exercise}[{s.tag}]" for s in SPECS[exercise].variants}
    assert learner_problem(exercise, "ada", CLASS) == learner_problem(exercise, "ada", CLASS)
    key = CLASS.learner_key("ada")
    assert learner_problem(exercise, "ada", PUBLIC, key) == learner_problem(exercise, "ada", CLASS)
    # the numbers are the learner's own as before: drawn apart from the structure
    assert learner_givens(exercise, "ada", CLASS) == learner_givens(exercise, "ada", PUBLIC, key)


@pytest.mark.parametrize("exercise", VARIED)
def test_self_study_is_the_lessons_structure(exercise: str) -> None:
    assert {learner_problem(exercise, learner) for learner in LEARNERS} == {exercise}
    assert practice(exercise, exercise)[0] == exercise
    assert practice(exercise, exercise, new_structure=True)[0] == exercise  # none in self-study


def _fits(problem: str, givens: dict[str, float]) -> bool:
    return all(test(givens) for _, test in exercise_spec(problem).constraints)


@pytest.mark.parametrize("exercise", VARIED)
def test_a_class_learner_draws_only_a_structure_their_numbers_fit(exercise: str) -> None:
    """Numbers are drawn for the lesson's structure; a structure whose own constraints they
    miss (03's loss of 0 where h = 2(w·x + b) = y) is never a learner's, nor practised."""
    for learner in LEARNERS:
        givens = learner_givens(exercise, learner, CLASS)
        own = learner_problem(exercise, learner, CLASS)
        assert _fits(own, givens), (learner, givens)
        assert _fits(*practice(exercise, own)) and _fits(*practice(exercise, own, True))


def test_some_class_numbers_do_not_fit_every_neuron() -> None:
    """The filter above is not idle: some class learners' numbers in 03 make one structure's
    loss zero (h = 8(w·x + b) = y at w·x + b = 1, y = 8), and they draw among the others."""
    exercise = "03_a_neuron_by_hand"
    problems = [f"{exercise}[{s.tag}]" for s in SPECS[exercise].variants]
    misfits = [
        (learner, problem)
        for learner in (f"fit-{i}" for i in range(3000))
        for problem in problems
        if not _fits(problem, learner_givens(exercise, learner, CLASS))
    ]
    assert misfits
    for learner, problem in misfits:
        assert learner_problem(exercise, learner, CLASS) != problem


def test_an_unknown_structure_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(KeyError, match="valid: c1_2, c3_2, c3_4"):
        exercise_spec("01_what_a_gradient_is[k9]")
    with pytest.raises(KeyError, match="unknown exercise"):
        exercise_spec("01_what_a_gradient_is[c2")


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_given_cell_prints_the_learners_own_problem(
    problem: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rendered as the learner's kernel renders it: a class learner whose key draws this
    structure sees their numbers and their problem, in words and math, not the lesson's."""
    base, _, tag = problem.partition("[")
    learner = next(
        name for name in (f"render-{i}" for i in range(500))
        if learner_problem(base, name, CLASS) == problem
    )  # fmt: skip
    key = CLASS.learner_key(learner)
    monkeypatch.setenv("JUPYTERHUB_USER", learner)
    monkeypatch.setenv("AUTOGRADER_LEARNER_KEY", f"{learner}:{key}")
    exercise = Exercise(base)
    assert exercise.problem == problem
    exercise.given(*SPECS[base].given_names)
    shown = capsys.readouterr().out
    structure = exercise_spec(problem).structure
    lesson = SPECS[base].structure
    assert structure is not None and lesson is not None
    assert f"Your problem: {structure.words}" in shown
    assert f"the lesson's is {lesson.words}" in shown
    assert shown == problem_words(problem).join(shown.split(problem_words(problem)))
    # the hints the checks give are the learner's structure, never the lesson's
    hints = " ".join(p.hint for p in exercise_spec(problem).parts)
    assert not re.search(re.escape(lesson.words) + r"(?![\w²/])", hints), hints
    assert structure.words in hints


def test_self_study_given_cell_says_nothing_new(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    monkeypatch.delenv("AUTOGRADER_LEARNER_KEY", raising=False)
    exercise = Exercise("01_what_a_gradient_is")
    assert exercise.problem == "01_what_a_gradient_is"
    exercise.given("x")
    assert "Your problem: the loss y = x² (the lesson's)." in capsys.readouterr().out


@pytest.mark.parametrize("exercise", VARIED)
def test_own_formulas_earn_every_point_for_200_class_learners(exercise: str) -> None:
    """Each learner's own right formulas hold as derivations in their structure: fresh
    draws keeping every branch exist for every learner (no value sits at 0)."""
    for learner in LEARNERS:
        problem = learner_problem(exercise, learner, CLASS)
        givens = learner_givens(exercise, learner, CLASS)
        own, total = formula_points(problem, givens, own_sources(problem))
        assert own == total, (learner, problem, givens)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_public_solutions_fail_where_the_structure_matters_and_own_formulas_earn_all(
    problem: str,
) -> None:
    base = problem.partition("[")[0]
    learners = [n for n in LEARNERS if learner_problem(base, n, CLASS) == problem][:3]
    assert learners
    for learner in learners:
        givens = learner_givens(base, learner, CLASS)
        own, total = formula_points(problem, givens, own_sources(problem))
        assert own == total
        copied, _ = formula_points(problem, givens, solution_sources(base))
        assert copied <= total // 3, (learner, copied, total)
        # and the feedback says why: the lesson's problem answered, not theirs
        context = JudgeContext(problem, givens, read_hand_answers(solution_sources(base), givens))
        for part in exercise_spec(problem).parts:
            if part.code != SPECS[base].part(part.name).code:
                verdict = judge(problem, part.name, context)  # the slope at 0 is 0 in all
                # behind 04's shut ReLU the lesson's formula has the right value (0): the
                # derivation names the factor of the learner's structure it lacks
                named = verdict.reason == "slope_missing" and "gain" in verdict.message
                assert verdict.passed or verdict.reason == "lesson_structure" or named, (
                    verdict.message
                )
    # and in self-study the public solutions are right, as today
    givens = learner_givens(base, "ada")
    copied, total = formula_points(base, givens, solution_sources(base))
    assert copied == total


def test_the_notebook_prose_names_no_lesson_formula_as_the_learners() -> None:
    """The released notebook (one for the whole class) names the lesson's structure only
    as the lesson's, in its prose and its answer cells' stubs."""
    import json

    from evaluation.public_solutions import ROOT

    assert set(LESSON_MATH) == set(VARIED)
    for exercise in VARIED:
        path = ROOT / "exercises" / exercise / f"{exercise}.ipynb"
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            text = "".join(cell["source"])
            for sentence in re.split(r"(?<=[.?!])\s+", text):
                if any(re.search(math, sentence) for math in LESSON_MATH[exercise]):
                    assert "lesson" in sentence, sentence


@pytest.mark.parametrize("exercise", VARIED)
def test_practice_in_a_class_keeps_the_structure_unless_asked(
    exercise: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """practise() keeps the learner's own structure with fresh numbers (issue 45: it switched
    in 25 of 36 draws and then marked their own right formulas wrong); practise(
    new_structure=True) draws another, and the Given cell says it is not theirs."""
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    monkeypatch.setenv("AUTOGRADER_LEARNER_KEY", f"ada:{CLASS.learner_key('ada')}")
    learner = Exercise(exercise)
    own, numbers = learner.problem, learner.givens
    practised = []
    for _ in range(20):
        learner.practise()
        assert learner.problem == own
        assert "another structure" not in capsys.readouterr().out
        practised.append(learner.givens)
    # fresh numbers: one draw may repeat the learner's own (09's pools are small), not all
    assert any(drawn != numbers for drawn in practised)
    drawn = set()
    for _ in range(60):  # each structure missed with chance (2/3)**60, about 1e-11
        learner.practise(new_structure=True)
        drawn.add(learner.problem)
        assert "Practice on another structure than yours" in capsys.readouterr().out
    others = {f"{exercise}[{s.tag}]" for s in SPECS[exercise].variants} - {own}
    assert drawn == others
    learner.practise(False)
    assert learner.problem == own


def test_a_parts_label_is_about_the_learners_own_structure() -> None:
    """The label the check and the feedback print for a part ("✓ d(x³ + 3x)/dx at
    x_cubic") names the learner's own structure, never the lesson's other one (issue 45)."""
    for problem in PROBLEMS:
        spec, lesson = exercise_spec(problem), lesson_spec(problem)
        structure = spec.structure
        if problem.startswith("07_try_it"):
            assert isinstance(structure, Closing)
            assert structure.poly_words in spec.part("cubic_slope").label, problem
            assert structure.poly_words in spec.part("cubic_value").label, problem
        if problem.startswith("06_one_backward") and getattr(structure, "factor", 1) != 1:
            label = spec.part("grad_detached").label
            assert label != lesson.part("grad_detached").label, problem
