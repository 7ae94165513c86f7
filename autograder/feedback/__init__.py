"""Feedback: reading hand answers, the reference values, diagnosing, wording.

`byhand` reads answer cells without running them; `references` computes every graded
quantity for one learner's numbers; `diagnose` turns a wrong value into a message that
teaches; `judge` is the one interface over every answer kind; `mistakes` measures how
often typical mistakes are named right.
"""
