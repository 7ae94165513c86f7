"""Authoring: what is generated from the specs, and the release.

`notebooks`: the graded cells of the solution notebooks; `docs`: docs/exercises.md;
`release`: exercises/ from solutions/ with nbgrader; `hygiene`: notebook cleaning;
`sample_class`: throwaway courses with the sample class submitted.
"""
