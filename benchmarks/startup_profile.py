"""Where the fixed start-up of `autograder grade` goes, for one resubmission.

Builds a course with one assignment graded for one student, resubmits it, then times
in one process, phase by phase: the imports of the command, the sandbox check, discovery,
and the run (worker start, execution, recording, shutdown), with cProfile over the run
to name the costly calls. The whole command is also timed as a subprocess (the baseline
the phases add up to, interpreter start included).

    python benchmarks/startup_profile.py
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"


def main() -> None:
    from autograder.authoring.sample_class import SAMPLE_CLASS, make_course

    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        course = make_course(Path(tmp) / "course", [ASSIGNMENT])
        target = course / "submitted" / "ada" / ASSIGNMENT
        shutil.copytree(SAMPLE_CLASS / "ada" / ASSIGNMENT, target)
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        command = [str(BIN / "autograder"), "grade", "--quiet"]
        subprocess.run(command, cwd=course, env=env, check=True, capture_output=True)
        notebook = target / f"{ASSIGNMENT}.ipynb"
        notebook.write_text(notebook.read_text() + " ")  # a resubmission
        started = time.perf_counter()
        subprocess.run(command, cwd=course, env=env, check=True, capture_output=True)
        whole = time.perf_counter() - started
        notebook.write_text(notebook.read_text() + " ")
        started = time.perf_counter()
        baseline = [str(BIN / "nbgrader"), "autograde", ASSIGNMENT, "--force"]
        subprocess.run(baseline, cwd=course, env=env, check=True, capture_output=True)
        nbgrader = time.perf_counter() - started
        notebook.write_text(notebook.read_text() + " ")

        phases: list[tuple[str, float]] = []
        mark = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            phases.append((name, now - mark))
            mark = now

        for label, code in (
            ("interpreter start (python -c pass)", "pass"),
            (
                "imports of the command (subprocess)",
                "import autograder.cli, autograder.grading.runner, tqdm",
            ),
            ("import autograder.grading.trusted (the judge)", "import autograder.grading.trusted"),
        ):
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
            lap(label)
        from autograder.grading.runner import Grader
        from autograder.sandbox.workers import Sandbox, Worker, check_sandbox, load_config

        check_sandbox(Sandbox(config=load_config(course)))
        lap("check_sandbox")
        grader = Grader(course)
        grader.total()
        lap("Grader() and discovery (fingerprints)")
        known = grader.known_assignments()
        todo, _ = grader.discover()
        grader.prepare(todo[0], known[ASSIGNMENT])
        lap("prepare: read and sanitise with nbgrader's preprocessors")
        sources = [
            todo[0].notebooks[0].notebook.cells[i].source for i in todo[0].notebooks[0].code_cells
        ]
        for sandboxed in (True, False):
            sandbox = Sandbox(config=load_config(course))
            sandbox.enabled = sandboxed
            how = "sandboxed" if sandboxed else "not sandboxed (--no-sandbox), for comparison"
            worker = Worker(sandbox, Path(tmp) / "logs")
            worker.start()
            lap(f"worker start, {how}: fork server, import torch")
            result = worker.execute(sources)
            lap(f"execute one notebook in a child, {how} (child: {result.elapsed:.2f} s)")
            worker.stop()
            lap(f"worker stop, {how}")
        profile = cProfile.Profile()
        profile.enable()
        outcomes = list(grader.run())
        profile.disable()
        lap("run: worker start, execute, record, stop")
        assert [o.status for o in outcomes] == ["graded"], outcomes
    print(f"`autograder grade`, one resubmission, as a command: {whole:.2f} s")
    print(f"`nbgrader autograde --force`, the same, as a command: {nbgrader:.2f} s "
          f"(ratio {whole / nbgrader:.2f}; goal: at most 0.5)")  # fmt: skip
    for name, seconds in phases:
        print(f"  {seconds:6.2f} s  {name}")
    total = sum(s for name, s in phases if "for comparison" not in name)
    print(f"  {total:6.2f} s  sum of the phases in one process (the comparison left out)")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main()
