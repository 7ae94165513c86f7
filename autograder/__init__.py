"""The grading side of the course: checks that teach, and a safe, parallel grader."""

from autograder.core.quantities import Quantity
from autograder.core.verdict import Verdict
from autograder.feedback.byhand import HandAnswer, read_hand_answers
from autograder.feedback.diagnose import diagnose
from autograder.feedback.references import EXERCISES, reference_quantities
from autograder.learner.check import AnswerMismatch, Exercise, judge_hand_answer

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
