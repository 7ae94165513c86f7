"""Where the fixed start-up of `autograder grade` goes, for one resubmission.

Builds a course with one assignment graded for one student, resubmits it, then times
in one process, phase by phase: the imports of the command, the sandbox check, discovery,
and the run (worker start, execution, recording, shutdown), with cProfile over the run
to name the costly calls. The whole command is also timed as a subprocess (the baseline
the phases add up to, interpreter start included).

`--per-notebook` times only what each notebook costs in a started, sandboxed worker (the
fork, the isolation, a small torch notebook, the round trip); with `--against DIR` it
does the same, in alternating rounds, for the checkout at DIR (e.g. a worktree of main),
so two versions of the worker are compared side by side under the same load.

    python benchmarks/startup_profile.py
    python benchmarks/startup_profile.py --per-notebook --against ../main-worktree
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"
NOTEBOOK = [
    "import torch\nfrom autograder import Exercise",
    "x = torch.tensor(2.0, requires_grad=True)\ny = x * x + 3 * x\ny.backward()",
    "print(x.grad)",
]
TIME_NOTEBOOKS = """
import json, sys, tempfile, time
from pathlib import Path
from autograder.sandbox.workers import Sandbox, Worker
cells, count = json.loads(sys.argv[1]), int(sys.argv[2])
worker = Worker(Sandbox(wall_seconds=60), Path(tempfile.mkdtemp()) / "logs")
worker.start()
walls, children = [], []
for n in range(count):
    started = time.perf_counter()
    result = worker.execute(cells, learner=f"student{n}")
    walls.append(time.perf_counter() - started)
    children.append(result.elapsed)
    assert result.status == "ok", result.detail
worker.stop()
print(json.dumps({"wall": walls, "child": children}))
"""


def per_notebook(repos: list[Path], rounds: int, count: int) -> None:
    """Median cost of one notebook in a started worker, per checkout, rounds alternating."""
    times: dict[Path, dict[str, list[float]]] = {r: {"wall": [], "child": []} for r in repos}
    for _ in range(rounds):
        for repo in repos:
            env = {**os.environ, "PYTHONPATH": str(repo)}
            command = [sys.executable, "-c", TIME_NOTEBOOKS, json.dumps(NOTEBOOK), str(count)]
            out = subprocess.run(command, env=env, cwd=repo, check=True, capture_output=True)
            measured = json.loads(out.stdout.decode().strip().splitlines()[-1])
            for key in ("wall", "child"):
                times[repo][key] += measured[key]
    with open("/proc/loadavg") as load:
        print(f"{rounds} rounds x {count} notebooks per checkout; load average {load.read()[:14]}")
    for repo, measured in times.items():
        wall, child = measured["wall"], measured["child"]
        print(
            f"  {repo}: per notebook {statistics.median(wall) * 1000:6.1f} ms median "
            f"(p90 {sorted(wall)[int(len(wall) * 0.9)] * 1000:6.1f} ms), in the worker "
            f"{statistics.median(child) * 1000:6.1f} ms median"
        )


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-notebook", action="store_true")
    parser.add_argument("--against", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--notebooks", type=int, default=10)
    options = parser.parse_args()
    if options.per_notebook:
        per_notebook(
            [REPO, *(p.resolve() for p in options.against)], options.rounds, options.notebooks
        )
    else:
        main()
