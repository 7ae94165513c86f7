"""`autograder serve`: the grading service and its intake.

`serve`: the warm service that grades each hand-in as it arrives; `collect`: from
nbgrader's exchange into submitted/, refusing unsafe folders; `handin`: what the gradebook
says of hand-ins and where refused ones go; `release_feedback`: feedback generated and
released by warm processes; `clean_grades`: `make clean-grades`.
"""
