"""The students' answer-free packages are written from this repository's own files."""

from __future__ import annotations

from pathlib import Path

from autograder.checks import learner_package

REPO = Path(__file__).resolve().parents[2]


def test_the_students_packages_are_written_from_the_repository(tmp_path: Path) -> None:
    """Every source is a file of this repository (a wrong root, as after a move of the
    module, failed `make class` and the image's learner stage with FileNotFoundError)."""
    assert learner_package.REPO == REPO
    written = learner_package.install(tmp_path)
    client = (tmp_path / "autograder" / "__init__.py").read_text()
    assert client == (REPO / "autograder_client" / "__init__.py").read_text()
    assert (tmp_path / "autograd_lessons" / "__init__.py").is_file()
    assert not (tmp_path / "autograder" / "specs").exists()  # the answer key never
    assert len(written) == len(learner_package.learner_files())
