"""nbgrader's internals are used in one module, against the versions it was checked with;
a grading run's state reaches nbgrader's preprocessors only through the run's object."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbgrader
import nbgrader.api
import nbgrader.nbgraderformat.common as metadata_format
import pytest
from nbgrader.api import Gradebook
from sqlalchemy import text

from autograder.grading import recording
from autograder.grading.nbgrader_internals import (
    ACTIVE,
    CHECKED_VERSIONS,
    GradebookWork,
    UncheckedNbgrader,
    alembic_head,
    check_version,
    shared_gradebook_work,
)
from autograder.sandbox.workers import load_config


def test_the_installed_nbgrader_is_one_the_internals_were_checked_against() -> None:
    """Fails after an nbgrader upgrade until nbgrader_internals is read against it."""
    assert nbgrader.__version__ in CHECKED_VERSIONS
    check_version()


def test_another_nbgrader_version_is_refused_before_anything_is_patched() -> None:
    with pytest.raises(UncheckedNbgrader, match=r"nbgrader 0\.10\.0 is installed"):
        check_version("0.10.0")


def patched_now() -> tuple[object, ...]:
    return (
        nbgrader.api.create_engine,
        nbgrader.api.inspect,
        nbgrader.api.get_alembic_version,
        metadata_format.jsonschema,
    )


def test_what_is_patched_is_put_back() -> None:
    before = patched_now()
    with shared_gradebook_work():
        assert all(now is not then for now, then in zip(patched_now(), before, strict=True))
    assert patched_now() == before
    assert "create_all" not in vars(nbgrader.api.Base.metadata)


@pytest.mark.processes  # nbgrader's own `alembic heads`, for the revision to compare
def test_a_new_gradebook_is_stamped_as_nbgrader_stamps_it_without_an_alembic_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` by name
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    stamped_by_nbgrader = nbgrader.api.get_alembic_version()
    assert alembic_head() == stamped_by_nbgrader
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no `alembic` to start now
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with shared_gradebook_work(), Gradebook(url, "course") as gb:
        version = gb.db.execute(text("SELECT version_num FROM alembic_version")).scalars()
        assert list(version) == [stamped_by_nbgrader]


def test_no_preprocessor_keeps_state_on_its_class() -> None:
    """What one run hands over is its own object's: two runs never see each other's."""
    first, second = recording.RecordingRun(), recording.RecordingRun()
    key = ("ada", "01", "01")
    first.hand_over(key, {"cells": []}, {"cells": []})
    assert key in first.sanitized and key not in second.sanitized
    assert recording.UseSanitized(first).run is first
    assert recording.InjectOutputs(second).run is second
    for cls in (recording.UseSanitized, recording.InjectOutputs):
        assert not any(isinstance(v, dict) for k, v in vars(cls).items() if not k.startswith("_"))
    first.take_back(key)
    assert not first.sanitized and not first.executed


def test_instructor_cells_are_kept_only_within_a_run() -> None:
    run = recording.RecordingRun()
    assert run.instructor_cells is None
    with recording.recording_caches(run) as same:
        assert same is run and run.instructor_cells == {}
    assert run.instructor_cells is None


def test_a_nested_sharing_leaves_the_outer_one_in_place() -> None:
    with shared_gradebook_work():
        patched = nbgrader.api.create_engine
        with shared_gradebook_work():
            assert nbgrader.api.create_engine is patched
        assert nbgrader.api.create_engine is patched and ACTIVE
    assert not ACTIVE


def test_kept_work_keeps_its_engine_for_the_next_time(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    kept = GradebookWork()
    with shared_gradebook_work(kept) as work:
        assert work is kept
        engine = nbgrader.api.create_engine(url)
    assert kept.engines == {url: engine} and engine.pool.checkedin() == 0
    with shared_gradebook_work(kept):
        assert nbgrader.api.create_engine(url) is engine
    kept.close()
    assert not kept.engines


@pytest.mark.processes  # forks
def test_a_child_forked_meanwhile_opens_its_own_connections(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with shared_gradebook_work():
        with Gradebook(url, "course") as gb:
            gb.update_or_create_student("ada")
        engine = nbgrader.api.create_engine(url)
        parents = engine.pool
        assert parents.checkedin() == 1  # the parent's connection, kept in its pool
        pid = os.fork()
        if pid == 0:  # the child: a pool of its own, the same engine, the same data
            code = 1
            try:
                fresh = engine.pool is not parents and engine.pool.checkedin() == 0
                with Gradebook(url, "course") as gb:
                    code = 0 if fresh and gb.find_student("ada").id == "ada" else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert engine.pool is parents and parents.checkedin() == 1


@pytest.mark.processes  # the graded course is made by `autograder grade`
def test_a_lasting_grader_shares_the_gradebook_engine_across_runs_until_closed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from nbgrader_course import shared_autograded_course

    from autograder.grading.runner import Grader

    course = Path(shutil.copytree(shared_autograded_course(tmp_path_factory), tmp_path / "c"))
    url = str(load_config(course).CourseDirectory.db_url)
    original = nbgrader.api.create_engine
    grader = Grader(course, persistent=True)
    assert grader.gradebook_work is not None
    assert all(o.status == "skipped" for o in grader.run())  # all graded already
    engine = grader.gradebook_work.engines[url]
    assert nbgrader.api.create_engine is original and not ACTIVE  # nothing patched between
    list(grader.run())
    assert grader.gradebook_work.engines[url] is engine
    grader.close()
    assert not grader.gradebook_work.engines


@pytest.mark.processes  # the graded course is made by `autograder grade`
def test_the_worker_preloads_torch_for_an_assignment_whose_setup_uses_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Said from the instructor's cells in the gradebook: 05 and 08 import torch in their
    locked setup cells, the others do not (02 only names it in a question's text)."""
    from nbgrader_course import shared_autograded_course

    from autograder.core.givens import COURSE_ID
    from autograder.grading.recording import read_source_cells, uses_torch

    course = shared_autograded_course(tmp_path_factory)
    url = f"sqlite:///{course / 'gradebook.db'}"
    assignments = sorted(p.name for p in (course / "solutions").iterdir() if p.is_dir())
    assert len(assignments) == 9
    preloaded = [a for a in assignments if uses_torch(read_source_cells(url, COURSE_ID, a, a))]
    assert preloaded == ["05_three_mechanics", "08_when_backward_complains"]


WITHOUT_EXTENSIONS = """
import sys
from autograder.grading import nbgrader_internals
{before}
print(nbgrader_internals.without_server_extensions())
import nbgrader, nbgrader.converters, autograder.grading.runner
from nbgrader.apps import NbGraderAPI
print(nbgrader.__version__, hasattr(nbgrader, "load_formgrader"))
print(any(name.startswith("nbgrader.server_extensions") for name in sys.modules))
"""


@pytest.mark.processes
@pytest.mark.parametrize("checked", [True, False])
def test_a_grading_command_skips_nbgraders_server_extensions(checked: bool) -> None:
    """What a grader imports works without the package's __init__ (its Jupyter server
    extensions); an nbgrader version not checked here is imported as usual."""
    before = "" if checked else "nbgrader_internals.CHECKED_VERSIONS = ()"
    program = WITHOUT_EXTENSIONS.format(before=before)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    skipped, version_line, extensions = done.stdout.splitlines()
    assert skipped == str(checked)
    assert version_line == f"{nbgrader.__version__} {not checked}"
    assert extensions == str(not checked)
