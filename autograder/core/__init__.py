"""The exercise core: what an exercise is, independent of any course or grader.

The spec format (`spec`), drawing a learner's numbers (`givens`), the engine that runs a
spec's PyTorch program (`engine`), a graded quantity (`quantities`), a verdict and how
numbers are compared and printed (`verdict`), and building a graph with any `Value`
class (`value_build`, answer-free: the sandbox mounts it). Imports nothing else of
`autograder`.
"""
