"""The `autograder` command's help, refusals and clear errors (no grading needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.cli import main
from autograder.sandbox import Sandbox, SandboxUnavailable, check_sandbox

BIN = Path(sys.executable).parent


def test_help_explains_the_command() -> None:
    result = subprocess.run(
        [str(BIN / "autograder"), "grade", "--help"], capture_output=True, text=True, check=True
    )
    for words in ("--jobs", "--course-dir", "--no-sandbox", "resubmitted", "exit status"):
        assert words in result.stdout


def test_a_missing_course_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grade", "--course-dir", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_without_bubblewrap_grading_refuses_and_says_how_to_proceed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.Sandbox.bwrap = '/nonexistent/bwrap'\n"
    )
    assert main(["grade", "--course-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "refusing to grade" in err
    assert "bubblewrap is not installed" in err
    assert "--no-sandbox" in err


def test_check_sandbox_names_the_missing_tool() -> None:
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        check_sandbox(Sandbox(bwrap="/nonexistent/bwrap"))


def test_unknown_assignment_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    code = main(["grade", "no_such_assignment", "--course-dir", str(tmp_path), "--no-sandbox"])
    assert code == 2
    assert "no_such_assignment" in capsys.readouterr().err
