"""Numbers of one's own: in a class of 100, few learners share their whole set of givens.

The bound is stated once (SHARING_BOUND); benchmarks/draw_numbers.py --collisions prints
the same figure per exercise, with the number of sets each spec allows.
"""

from __future__ import annotations

import random

import pytest

from autograder.core.givens import draw, seed
from autograder.specs import SPECS

CLASS_SIZE = 100
CLASSES = 10
SHARING_BOUND = 0.12
"""At most this share of a class of 100 may hold the same set as a classmate (mean)."""
FEWEST_VALUES = 8
"""Each given takes at least this many values: one given's answer is no class-wide secret."""


def _sharing(exercise: str) -> float:
    shared = 0
    for k in range(CLASSES):
        sets = [
            tuple(
                sorted(draw(SPECS[exercise], random.Random(seed(exercise, f"c{k}-s{i}"))).items())
            )
            for i in range(CLASS_SIZE)
        ]
        shared += sum(sets.count(s) > 1 for s in sets)
    return shared / (CLASS_SIZE * CLASSES)


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_few_learners_of_a_class_share_their_numbers(exercise: str) -> None:
    assert _sharing(exercise) <= SHARING_BOUND


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_every_given_takes_many_values(exercise: str) -> None:
    for given in SPECS[exercise].givens:
        assert len(set(given.choices) - {given.lesson}) >= FEWEST_VALUES, given.name
