"""Every exercise's spec, one module each; `SPECS` maps the assignment name to its spec,
`exercise_spec(name)` finds one, and `learner_givens(name, learner)` draws a learner's numbers.

The modules `exNN_<name>.py` are found by name, in order: adding an exercise is writing
its module (with a `SPEC`) and the prose of its solution notebook, whose graded cells
`python -m autograder.authoring.notebooks --write` generates; then `make exercises`.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import random
from collections.abc import Mapping
from typing import Final

from autograder.core.givens import PUBLIC, Site, draw, seed
from autograder.core.spec import ExerciseSpec, Structure
from autograder.core.tasks import ClassTask, FunctionTask


def _discover() -> dict[str, ExerciseSpec]:
    found: dict[str, ExerciseSpec] = {}
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ex"))
    for module_name in names:
        spec = importlib.import_module(f"{__name__}.{module_name}").SPEC
        if not isinstance(spec, ExerciseSpec) or module_name != f"ex{spec.name}":
            raise TypeError(
                f"{__name__}.{module_name}: SPEC must be the ExerciseSpec {module_name[2:]}"
            )
        found[spec.name] = spec
    return found


SPECS: dict[str, ExerciseSpec] = _discover()


@functools.lru_cache(maxsize=4096)
def _learner_givens(
    exercise: str, learner: str, site: Site, key: str | None
) -> tuple[tuple[str, float], ...]:
    values = draw(exercise_spec(exercise), random.Random(seed(exercise, learner, site, key)))
    return tuple(values.items())


def learner_givens(
    exercise: str, learner: str, site: Site = PUBLIC, key: str | None = None
) -> dict[str, float]:
    """The learner's given values for `exercise` in installation `site` (or from the
    learner's `key`), by name (pure, deterministic, fast)."""
    return dict(_learner_givens(exercise, learner, site, key))


def exercise_spec(exercise: str) -> ExerciseSpec:
    """The spec of `exercise`, or of one learner's problem `<exercise>[<structure>]`
    (`learner_problem`); KeyError listing the valid names."""
    base, bracket, tag = exercise.partition("[")
    if base not in SPECS:
        raise KeyError(f"unknown exercise {exercise!r}; valid names: {', '.join(SPECS)}")
    if not bracket:
        return SPECS[base]
    if not tag.endswith("]"):
        raise KeyError(f"unknown exercise {exercise!r}: a structure is named <exercise>[<tag>]")
    return _varied(base, tag[:-1])


def lesson_spec(problem: str) -> ExerciseSpec:
    """The lesson's spec for a learner's problem `<exercise>[<tag>]` (or `<exercise>`)."""
    return exercise_spec(problem.partition("[")[0])


@functools.lru_cache(maxsize=256)
def _varied(exercise: str, tag: str) -> ExerciseSpec:
    return SPECS[exercise].varied(tag)


def _admitted(exercise: str, givens: Mapping[str, float]) -> list[Structure]:
    """The structures of `exercise` whose own constraints `givens` meet (numbers are drawn
    for the lesson's structure: a structure whose loss they would make zero, say, is left
    out); RuntimeError when none is."""
    admitted = [
        s
        for s in SPECS[exercise].variants
        if all(test(givens) for _, test in _varied(exercise, s.tag).constraints)
    ]
    if not admitted:
        raise RuntimeError(f"{exercise}: no structure fits the numbers {dict(givens)}")
    return admitted


def learner_problem(
    exercise: str, learner: str, site: Site = PUBLIC, key: str | None = None
) -> str:
    """The learner's problem: `exercise` itself (the lesson's structure) without a key or
    secret, or where the exercise has one structure; in a class, `<exercise>[<tag>]`, the
    structure drawn from the learner's key (its own draw: their numbers stay the same)
    among those their numbers fit."""
    variants = exercise_spec(exercise).variants
    key = key or site.learner_key(learner)
    if not variants or key is None:
        return exercise
    admitted = _admitted(exercise, learner_givens(exercise, learner, site, key))
    chosen = random.Random(seed(f"{exercise}\0structure", learner, site, key)).choice(admitted)
    return f"{exercise}[{chosen.tag}]"


MAX_PRACTICE_DRAWS: Final = 1000


def practice(exercise: str, own: str, new_structure: bool = False) -> tuple[str, dict[str, float]]:
    """(the problem, fresh numbers) to practise on, outside the graded record: the learner's
    own problem `own` with fresh numbers it fits; with `new_structure` (in a class, where the
    exercise varies), another structure drawn at random among those the numbers fit."""
    rng = random.Random()
    spec = exercise_spec(exercise)
    if new_structure and spec.variants and own != exercise:
        givens = draw(spec, rng)
        admitted = [f"{exercise}[{s.tag}]" for s in _admitted(exercise, givens)]
        return rng.choice([p for p in admitted if p != own] or admitted), givens
    fits = [test for _, test in exercise_spec(own).constraints]
    for _ in range(MAX_PRACTICE_DRAWS):
        givens = draw(spec, rng)
        if all(test(givens) for test in fits):
            return own, givens
    raise RuntimeError(f"{own}: no practice numbers fit it in {MAX_PRACTICE_DRAWS} draws")


def practice_words(problem: str, own: str) -> str:
    """What the practice numbers' Given cell says of the problem: the learner's own, or,
    when practising another structure, that it is not theirs."""
    words = problem_words(problem)
    if problem == own or not words:
        return words
    return (
        f"{words} Practice on another structure than yours: every message is about this one; "
        "practise() goes back to yours with fresh numbers, practise(False) to your own numbers."
    )


def problem_words(problem: str) -> str:
    """What the Given cell says of the learner's problem ('' for an exercise with one
    structure): theirs, and whether it is the lesson's."""
    spec = exercise_spec(problem)
    if spec.structure is None:
        return ""
    lesson = lesson_spec(problem).structure
    assert lesson is not None
    if spec.structure == lesson:
        return f"Your problem: {spec.structure.words} (the lesson's)."
    return (
        f"Your problem: {spec.structure.words} (the lesson's is {lesson.words}: "
        "every part below is about yours)."
    )


def function_tasks(exercise: str) -> dict[str, FunctionTask]:
    """The code exercises of `exercise`, by function name (from its spec)."""
    spec = exercise_spec(exercise)
    return {p.name: p.task for p in spec.parts if p.kind == "function" and p.task is not None}


def class_tasks(exercise: str) -> dict[str, ClassTask]:
    """The class parts of `exercise`, by part name (from its spec)."""
    spec = exercise_spec(exercise)
    return {p.name: p.build for p in spec.parts if p.kind == "class" and p.build is not None}
