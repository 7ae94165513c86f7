"""Benchmark: what nbgrader's OverwriteCells costs a notebook, and what reading at once saves.

The grader sanitises every notebook handed in with nbgrader's own preprocessors; one of
them, OverwriteCells, asks the gradebook two questions per graded or locked cell. The
grader runs `OverwriteCellsAtOnce` in its place (autograder/grading/checked_cells.py),
which reads the notebook's cells in one query each. Here both run over every notebook of
the sample class (three assignments, every student), in alternating rounds in this one
process, within the grader's shared gradebook work (as a grading run or the service
does): CPU seconds a notebook (medians over rounds), the ratio, and SQL statements.

    python benchmarks/sanitize_cost.py --rounds 5
"""

from __future__ import annotations

import argparse
import copy
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
ASSIGNMENTS = ["03_a_neuron_by_hand", "05_three_mechanics", "06_one_backward_every_parameter"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    args = parser.parse_args()
    logging.getLogger("traitlets").setLevel(logging.ERROR)  # the class's tampering, noted

    import nbformat
    from nbgrader.preprocessors import OverwriteCells
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from autograder.authoring.sample_class import make_course, submit_sample_class
    from autograder.grading.checked_cells import OverwriteCellsAtOnce
    from autograder.grading.nbgrader_internals import shared_gradebook_work
    from autograder.grading.recording import notebook_resources

    statements = {"count": 0}

    def count(*_: object) -> None:
        statements["count"] += 1

    with tempfile.TemporaryDirectory(prefix="sanitize-") as tmp:
        print("making the sample class's course (nbgrader generate_assignment)...", flush=True)
        course = make_course(Path(tmp) / "course", ASSIGNMENTS)
        submit_sample_class(course, ASSIGNMENTS)
        url = f"sqlite:///{course / 'gradebook.db'}"
        paths = sorted((course / "submitted").glob("*/*/*.ipynb"))
        notebooks = [(p, nbformat.read(p, as_version=4)) for p in paths]
        tools: dict[str, Any] = {"nbgrader": OverwriteCells, "at once": OverwriteCellsAtOnce}
        cpu: dict[str, list[float]] = {name: [] for name in tools}
        sql: dict[str, int] = {}
        with shared_gradebook_work():
            for _ in range(args.rounds):
                for name, tool in tools.items():
                    statements["count"] = 0
                    event.listen(Engine, "before_cursor_execute", count)
                    started = time.process_time()
                    for path, notebook in notebooks:
                        resources = notebook_resources(
                            path.parent.parent.name, path.parent.name, path.stem, url
                        )
                        tool().preprocess(copy.deepcopy(notebook), resources)
                    cpu[name].append((time.process_time() - started) / len(notebooks))
                    event.remove(Engine, "before_cursor_execute", count)
                    sql[name] = statements["count"] // len(notebooks)
    theirs, ours = statistics.median(cpu["nbgrader"]), statistics.median(cpu["at once"])
    print(f"{len(notebooks)} notebooks, {args.rounds} alternating rounds, medians")
    for name in tools:
        median = statistics.median(cpu[name])
        print(f"{name:9} {median * 1000:6.1f} ms CPU a notebook, {sql[name]} SQL statements")
    print(f"ratio {ours / theirs:.2f} ({(theirs - ours) * 1000:.1f} ms a notebook saved)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
