"""Reference values computed ahead in their own process are the ones the judge computes.

In a course graded for the first time, `autograder grade` starts `diagnosis.prefetch` at
once and asks it for each learner's values as their notebook is prepared; the judge
waits for a learner's answer, then reads the values from the store. Here several
learners, of the lesson's structure and of the class variants, are asked for through a
real prefetch process into one store, and computed in this process into another: the
two stores must hold the same files with the same values, and a prefetch that ended
must leave the judge to compute (never wait forever, never stand for a value). The
prefetch imports PyTorch without its meta kernels, the judge here with them: the same
stores show that the values do not depend on them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core.givens import COURSE_ID, Site
from autograder.diagnosis import fresh_points, references
from autograder.diagnosis.fresh_points import fresh_draws
from autograder.diagnosis.prefetch import (
    WITHOUT_META_KERNELS,
    Prefetch,
    for_new_store,
    may_ask,
    request_line,
)
from autograder.diagnosis.references import holds_values, reference_values, stored_in
from autograder.grading.trusted import givens_for, problem_for
from autograder.specs import SPECS, exercise_spec

pytestmark = pytest.mark.processes  # a prefetch is a process of its own

LEARNERS = ("ada", "ben", "s017", "s042")
EXERCISES = tuple(SPECS)


def asked(site: Site) -> list[tuple[str, dict[str, float]]]:
    """(problem, givens) of each learner of each exercise in installation `site`."""
    found = []
    for exercise in EXERCISES:
        for learner in LEARNERS:
            problem = problem_for(exercise, learner, site)
            assert problem is not None
            found.append((problem, givens_for(exercise, learner, site)))
    return found


def stored(folder: Path) -> dict[str, object]:
    return {
        str(path.relative_to(folder)): json.loads(path.read_text())
        for path in sorted(folder.rglob("*.json"))
    }


@pytest.mark.parametrize("secret", [None, "a class secret"])
def test_prefetched_values_are_the_ones_the_judge_computes(
    tmp_path: Path, secret: str | None
) -> None:
    site = Site(COURSE_ID, secret)
    learners = asked(site)
    if secret:
        assert len({problem for problem, _ in learners}) > len(EXERCISES), "variants too"
    ahead, here = tmp_path / "ahead", tmp_path / "here"
    prefetch = for_new_store(ahead)
    assert prefetch is not None, "a store that holds nothing yet is prefetched"
    try:
        for problem, givens in learners:
            assert prefetch.ask(problem, givens)
        for problem, givens in reversed(learners):
            prefetch.wait(problem, givens)
        assert holds_values(ahead)
        assert for_new_store(ahead) is None, "a store that holds values is not"
    finally:
        prefetch.close()
    references._values.cache_clear()  # computed afresh here, not remembered from elsewhere
    fresh_points._fresh.cache_clear()
    with stored_in(here):
        for problem, givens in learners:
            spec = exercise_spec(problem)
            reference_values(problem, {**spec.constants, **givens})
            fresh_draws(problem, givens)
            reference_values(problem, {**spec.lesson_givens, **spec.constants})
    computed = stored(here)
    assert len(computed) >= 4 * len(learners), "values, draws and the lesson's, per learner"
    assert stored(ahead) == computed


def test_a_prefetch_that_ended_leaves_the_judge_to_compute(tmp_path: Path) -> None:
    prefetch = Prefetch(tmp_path / "store")
    problem, givens = asked(Site(COURSE_ID, None))[0]
    assert prefetch.process is not None
    prefetch.process.kill()
    prefetch.process.wait()
    prefetch.ask(problem, givens)  # written into a closed pipe, or not at all
    prefetch.wait(problem, givens)  # returns: nothing more will come
    prefetch.close()
    assert not prefetch.ask(problem, givens), "a closed prefetch asks for nothing"
    assert not list((tmp_path / "store").rglob("*.json"))


LOADED = """
import sys
{prepare}
import torch
x = torch.tensor(3.0, requires_grad=True)
(2 * x**2 + 1).relu().backward()
print(x.grad.item(), [hasattr(sys.modules.get(name), "__file__") for name in {names!r}])
"""


@pytest.mark.parametrize("lean", [True, False])
def test_the_prefetch_imports_pytorch_without_its_meta_kernels(lean: bool) -> None:
    """`import_torch_for_references` leaves PyTorch's meta kernels empty (no file run),
    and autograd works; a plain `import torch` loads them (the difference it makes)."""
    prepare = (
        "from autograder.diagnosis.prefetch import import_torch_for_references\n"
        "import_torch_for_references()"
        if lean
        else ""
    )
    program = LOADED.format(prepare=prepare, names=WITHOUT_META_KERNELS[:1])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=1) == ["12.0", f"[{not lean}]\n"]


def test_a_prefetch_whose_lean_import_fails_imports_all_of_pytorch(tmp_path: Path) -> None:
    """Another PyTorch whose import fails without what `WITHOUT_META_KERNELS` names (here
    one that fails without `torch._C`): the process starts again with the whole of
    PyTorch and answers, its values stored, as if nothing had happened."""
    store = tmp_path / "store"
    program = (
        "import sys\nfrom pathlib import Path\n"
        "import autograder.diagnosis.prefetch as prefetch\n"
        "prefetch.WITHOUT_META_KERNELS = ('torch._C',)\n"
        "prefetch.serve(Path(sys.argv[1]), sys.stdin, sys.stdout)\n"
    )
    problem, givens = asked(Site(COURSE_ID, None))[0]
    line = request_line(problem, givens)
    done = subprocess.run(
        [sys.executable, "-c", program, str(store)],
        input=line + "\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == line + "\n"
    references._values.cache_clear()
    with stored_in(store):
        assert references.is_stored(problem, givens)


def test_no_prefetch_for_assignments_that_set_no_exercise(tmp_path: Path) -> None:
    """`autograder grade` starts the prefetch (and its PyTorch) only for assignments whose
    instructor notebooks may set one of the course's exercises: not for nbgrader's own
    user-guide course; still when it cannot tell (no instructor notebook found)."""
    import shutil

    import nbgrader

    from autograder.cli import instructor_notebooks
    from autograder.sandbox.settings import Sandbox, load_config

    repo = Path(__file__).resolve().parents[2]
    guide = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide" / "source"
    course = tmp_path / "course"
    shutil.copytree(repo / "solutions" / EXERCISES[0], course / "solutions" / EXERCISES[0])
    shutil.copytree(guide / "ps1", course / "solutions" / "ps1")
    shutil.copy(repo / "nbgrader_config.py", course)  # its source folder is solutions/
    sandbox = Sandbox(config=load_config(course))

    def notebooks(*names: str) -> list[Path]:
        return sorted(instructor_notebooks(sandbox, course, list(names) or None))

    assert [p.name for p in notebooks("ps1")] == ["problem1.ipynb", "problem2.ipynb"]
    assert len(notebooks()) == 3
    assert not may_ask(notebooks("ps1"))
    assert for_new_store(tmp_path / "store", notebooks("ps1")) is None
    assert may_ask(notebooks(EXERCISES[0])) and may_ask(notebooks())
    assert may_ask(notebooks("not_an_assignment")), "nothing found: it cannot tell"
    assert may_ask([course / "missing.ipynb"]), "unreadable: it cannot tell"
