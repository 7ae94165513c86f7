"""Reference values computed ahead, in a process of their own, while the grader starts.

A course graded for the first time has none of its learners' reference values stored
(`references.stored_in`), and computing them needs PyTorch: about a second to import. In
the grader's own process that import holds the interpreter while nbgrader is imported
and the first notebooks are prepared. `Prefetch` starts `python -m
autograder.diagnosis.prefetch STORE` instead, at once, on the machine's other core: it
imports PyTorch and the specs, then reads one request a line, `[problem, givens]`, stores
in STORE what the judge will read for that learner (the values at their givens, the
fresh draws, the lesson's own numbers) and answers with the same line. The judge waits
for a learner's line before it reads their values (`Prefetch.wait`), then finds them
stored. Nothing depends on the process: if it fails or ends, `wait` returns and the
judge computes what is missing itself, as without it.

The process imports PyTorch without its Python meta kernels (`WITHOUT_META_KERNELS`):
a third of the import, on the cold grade's critical path, for code a reference value
never runs. Should that import fail (another PyTorch), the process starts again with
the whole of PyTorch (`--whole-torch`).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import IO

from autograder.core.startup import loading


def request_line(problem: str, givens: Mapping[str, float]) -> str:
    """One request (and its answer): the problem and the learner's givens, as JSON."""
    return json.dumps([problem, sorted((name, float(v)) for name, v in givens.items())])


class Prefetch:
    """The grader's side: ask for a learner's values, wait until they are stored."""

    def __init__(self, store: Path) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.asked: set[str] = set()
        self.answered: set[str] = set()
        self.lock = threading.Lock()
        with contextlib.suppress(OSError):
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder.diagnosis.prefetch", str(store)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )

    def ask(self, problem: str, givens: Mapping[str, float]) -> bool:
        """Ask for the values of `problem` at `givens`; False when the process is gone."""
        line = request_line(problem, givens)
        with self.lock:
            if line in self.asked:
                return True
            if self.process is None or self.process.stdin is None:
                return False
            try:
                self.process.stdin.write(line + "\n")
                self.process.stdin.flush()
            except (OSError, ValueError):
                return False
            self.asked.add(line)
            return True

    def wait(self, problem: str, givens: Mapping[str, float]) -> None:
        """Return once the values asked for are stored, or the process has ended (then
        the judge computes them itself)."""
        line = request_line(problem, givens)
        with self.lock:
            if line not in self.asked or self.process is None or self.process.stdout is None:
                return
            out: IO[str] = self.process.stdout
            while line not in self.answered:
                answer = out.readline()
                if not answer:
                    return  # ended: nothing more will be stored
                self.answered.add(answer.rstrip("\n"))

    def close(self) -> None:
        """End the process (what it stored so far stays)."""
        if self.process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None


EXERCISE_MARK = b"Exercise("
"""What an instructor notebook that sets one of the course's exercises holds (its locked
cell calls `Exercise("<name>")`); a notebook without it never asks for reference values."""


def may_ask(instructor_notebooks: Iterable[Path]) -> bool:
    """Whether grading the assignments of `instructor_notebooks` may ask for reference
    values: unless some were found and none of them names an exercise (nbgrader's own
    course, say). Only a first look, to spare a process that would import PyTorch for
    nothing; the judge still decides from the gradebook, and computes what it needs."""
    found = False
    for path in instructor_notebooks:
        found = True
        try:
            if EXERCISE_MARK in path.read_bytes():
                return True
        except OSError:
            return True
    return not found


def for_new_store(store: Path, instructor_notebooks: Iterable[Path] = ()) -> Prefetch | None:
    """A `Prefetch` when `store` holds no values of this code yet (a course graded for
    the first time, or since the specs or PyTorch changed) and the assignments may ask
    for some (`may_ask`); else None: then the few learners not stored yet are computed
    in the grader, as before."""
    from autograder.diagnosis.references import holds_values

    if holds_values(store) or not may_ask(instructor_notebooks):
        return None
    return Prefetch(store)


WITHOUT_META_KERNELS = ("torch._meta_registrations", "torch.distributed._meta_registrations")
"""PyTorch's Python meta kernels: what tensors on the "meta" device and torch.compile's
fake tensors run. Eager autograd on the CPU (every reference value) never calls them,
and registering them is about a third of `import torch` (0.35 of 1.3 s here)."""


class _Empty(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds each of `names` as an empty module, before any other finder."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in self.names else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return ModuleType(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing runs: the module stays empty."""


def import_torch_for_references() -> None:
    """Import PyTorch without `WITHOUT_META_KERNELS` (raises what the import raises)."""
    skipping = _Empty(WITHOUT_META_KERNELS)
    sys.meta_path.insert(0, skipping)
    try:
        import torch  # noqa: F401
    finally:
        sys.meta_path.remove(skipping)


def serve(store: Path, requests: IO[str], answers: IO[str], whole_torch: bool = False) -> None:
    """Store each requested learner's values in `store`; answer each request line.
    PyTorch is imported before the first request, while the grader starts: without its
    meta kernels, unless `whole_torch` (or that import fails: then this process starts
    again with `--whole-torch`, no request read yet)."""
    with loading():
        if whole_torch:
            import torch  # noqa: F401
        else:
            try:
                import_torch_for_references()
            except Exception:  # noqa: BLE001  (another PyTorch: import all of it instead)
                module = [sys.executable, "-m", "autograder.diagnosis.prefetch"]
                os.execv(sys.executable, [*module, "--whole-torch", str(store)])

        from autograder.core import engine  # noqa: F401
        from autograder.diagnosis.fresh_points import fresh_draws
        from autograder.diagnosis.references import reference_values, stored_in
        from autograder.specs import exercise_spec

    with stored_in(store):
        for line in requests:
            with contextlib.suppress(Exception):  # the judge computes it again, and says why
                problem, pairs = json.loads(line)
                spec = exercise_spec(problem)
                givens = {str(name): float(value) for name, value in pairs}
                reference_values(problem, {**spec.constants, **givens})
                fresh_draws(problem, givens)
                reference_values(problem, {**spec.lesson_givens, **spec.constants})
            answers.write(line)
            answers.flush()


if __name__ == "__main__":
    whole = sys.argv[1:2] == ["--whole-torch"]
    serve(Path(sys.argv[-1]), sys.stdin, sys.stdout, whole_torch=whole)
