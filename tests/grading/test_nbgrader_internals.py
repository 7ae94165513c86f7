"""nbgrader's internals are used in one module, against the versions it was checked with;
a grading run's state reaches nbgrader's preprocessors only through the run's object."""

from __future__ import annotations

import nbgrader
import nbgrader.api
import nbgrader.nbgraderformat.common as metadata_format
import pytest

from autograder.grading import recording
from autograder.grading.nbgrader_internals import (
    CHECKED_VERSIONS,
    UncheckedNbgrader,
    check_version,
    shared_gradebook_work,
)


def test_the_installed_nbgrader_is_one_the_internals_were_checked_against() -> None:
    """Fails after an nbgrader upgrade until nbgrader_internals is read against it."""
    assert nbgrader.__version__ in CHECKED_VERSIONS
    check_version()


def test_another_nbgrader_version_is_refused_before_anything_is_patched() -> None:
    with pytest.raises(UncheckedNbgrader, match=r"nbgrader 0\.10\.0 is installed"):
        check_version("0.10.0")


def test_what_is_patched_is_put_back() -> None:
    before = (nbgrader.api.create_engine, nbgrader.api.inspect, metadata_format.jsonschema)
    with shared_gradebook_work():
        assert nbgrader.api.create_engine is not before[0]
        assert metadata_format.jsonschema is not before[2]
    after = (nbgrader.api.create_engine, nbgrader.api.inspect, metadata_format.jsonschema)
    assert after == before
    assert "create_all" not in vars(nbgrader.api.Base.metadata)


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
