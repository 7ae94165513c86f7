"""The classroom: a class served, collected, graded, fed back and reported.

`service`: `autograder serve`; `collect`: from nbgrader's exchange into submitted/;
`release_feedback`: feedback generated and released by a warm process;
`feedback_exporter`: nbconvert's HTML exporter, its templates compiled once a process;
`lms`: LMS file names for `nbgrader zip_collect`; `report`: `autograder report`;
`hub/`: JupyterHub's configuration and the launcher of `make class`.
"""
