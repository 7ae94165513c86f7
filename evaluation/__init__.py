"""How well the diagnosis names realistic mistakes: tooling for the course's authors.

`corpus`: realistic wrong answers, each with the mistake it makes; `mistakes`: the
specs' known mistakes replayed and judged. Tests and benchmarks measure the diagnosis
with them; no learner or grader imports them (`.importlinter`).
"""
