"""The grading side of the course: checks that teach, and a safe, parallel grader."""

from autograder.byhand import HandAnswer, read_hand_answers
from autograder.check import AnswerMismatch, Exercise, judge_hand_answer
from autograder.diagnose import Verdict, diagnose
from autograder.quantities import Quantity
from autograder.references import EXERCISES, reference_quantities

__all__ = [
    "EXERCISES",
    "AnswerMismatch",
    "Exercise",
    "HandAnswer",
    "Quantity",
    "Verdict",
    "diagnose",
    "judge_hand_answer",
    "read_hand_answers",
    "reference_quantities",
]
