"""Grading: the plan, the run, the record.

`trusted`: which exercise and test cells a notebook has (from the gradebook) and the
verdicts only the grader computes; `runner`: `autograder grade`, parallel and resumable,
recording through nbgrader; `diagnoses`: the verdicts kept as data; `submissions`,
`budgets` and `inert`: what a submission may hold, what the grader reads, and what
reaches the instructor's browser.
"""
