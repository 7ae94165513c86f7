"""The grading side of the course: checks that teach, and a safe, parallel grader."""
