"""Answer kinds beyond a hand number: a learner's function or class, judged on cases.

`functions`: code exercises judged by their results against PyTorch's; `classes` and
`value_graphs`: the capstone's `Value` class built on random graphs and judged, naming
the classic bug.
"""
