"""Feedback: reading hand answers, the reference values, diagnosing, wording.

`byhand` reads answer cells without running them (`byhand_cells` splits a cell into
statements, `byhand_arithmetic` evaluates plain arithmetic within caps); `references`
computes every graded quantity for one learner's numbers; `diagnose` turns a wrong value
into a message that teaches, reading the learner's formula first (`formula`, over
`formulas` and the edit catalogue `formula_edits`); `judge` is the one interface over every
answer kind; `mistakes` measures how often typical mistakes are named right, and `corpus`
holds the realistic wrong answers, written as learners write them, that it judges.
"""
