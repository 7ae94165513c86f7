"""The `autograder` command's help, refusals and clear errors (no grading needed)."""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
import stall_guard
from accounts import NOBODY, as_account
from courses import make_course
from nbgrader.api import Gradebook

from autograder.authoring.sample_class import (
    expected_scores,
    gradebook_scores,
    submit_sample_class,
)
from autograder.cli import main
from autograder.grading.nbgrader_internals import shared_gradebook_work
from autograder.grading.recording import use_this_environment
from autograder.sandbox.workers import Sandbox, SandboxUnavailable, check_sandbox

ASSIGNMENT = "03_a_neuron_by_hand"

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
use_this_environment()  # nbgrader's gradebook runs `alembic` by name, from PATH


def empty_gradebook(folder: Path) -> None:
    """An empty gradebook in `folder`, made as our commands make one (no `alembic` process)."""
    with shared_gradebook_work(), Gradebook(f"sqlite:///{folder / 'gradebook.db'}"):
        pass


@pytest.mark.processes
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


@pytest.mark.processes
def test_without_bubblewrap_grading_refuses_and_says_how_to_proceed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.Sandbox.bwrap = '/nonexistent/bwrap'\n"
    )
    empty_gradebook(tmp_path)
    assert main(["grade", "--course-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "refusing to grade" in err
    assert "bubblewrap is not installed" in err
    assert "--no-sandbox" in err


def test_check_sandbox_names_the_missing_tool() -> None:
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        check_sandbox(Sandbox(bwrap="/nonexistent/bwrap"))


@pytest.mark.processes
def test_unknown_assignment_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    empty_gradebook(tmp_path)
    code = main(["grade", "no_such_assignment", "--course-dir", str(tmp_path), "--no-sandbox"])
    assert code == 2
    assert "no_such_assignment" in capsys.readouterr().err


@pytest.mark.parametrize(
    "words",
    [["grade", "--jobs", "0"], ["serve", "-j", "-1"], ["serve", "--feedback-processes", "0"]],
)
def test_a_count_below_one_is_a_usage_error(
    words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*words, "--course-dir", str(tmp_path)]) == 2
    option = words[1] if words[1] != "-j" else "--jobs"
    assert f"{option} must be at least 1" in capsys.readouterr().err


def test_outside_a_course_folder_is_an_error_that_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grade", "--course-dir", str(tmp_path)]) == 2
    assert "not an nbgrader course folder" in capsys.readouterr().err
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert main(["grade", "--course-dir", str(tmp_path)]) == 2
    assert "no gradebook at" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nbgrader_config.py"]


@pytest.fixture(scope="module")
def small_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = make_course(tmp_path_factory.mktemp("cli") / "course", [ASSIGNMENT])
    submit_sample_class(course, [ASSIGNMENT])
    return course


@pytest.mark.processes
def test_an_unknown_student_is_named_and_nothing_is_graded(
    small_course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grade", "--course-dir", str(small_course), "--student", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "no submission from 'nobody'" in err and "ada" in err
    assert not (small_course / "autograded").exists()


@pytest.mark.processes
def test_grading_refuses_where_limits_cannot_be_enforced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = make_course(
        tmp_path / "course", [ASSIGNMENT], "c.Sandbox.cgroup_parent = '/no/such/delegation'\n"
    )
    assert main(["grade", "--course-dir", str(course)]) == 2
    err = capsys.readouterr().err
    assert "refusing to grade" in err and "cgroup" in err and "require_cgroups = False" in err


@pytest.mark.processes
def test_ctrl_c_stops_cleanly_and_a_rerun_finishes(small_course: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    command = [str(BIN / "autograder"), "grade", "--quiet", "-j", "1", "--seed", "3"]
    process = subprocess.Popen(
        command,
        cwd=small_course,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    markers = small_course / ".autograder" / "graded"
    stall_guard.wait_until(
        lambda: process.poll() is not None or list(markers.rglob("*.json")),
        "autograder grade, before its first student was recorded",
        [stall_guard.cpu_of(process.pid)],
    )
    process.send_signal(signal.SIGINT)
    out, err = stall_guard.communicate(process, "autograder grade, stopping on Ctrl-C")
    assert process.returncode == 130, out + err
    assert "Traceback" not in err and "interrupted" in err
    done = len(list(markers.rglob("*.json")))
    students = len(list((small_course / "submitted").iterdir()))
    assert 1 <= done < students, (done, out, err)
    again = subprocess.run(command, cwd=small_course, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{students - done} graded, 0 failed, {done} skipped" in again.stdout
    assert sorted(gradebook_scores(small_course)) == sorted(
        k for k in expected_scores() if k[1] == ASSIGNMENT
    )


@pytest.mark.processes
def test_learner_chosen_names_reach_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A notebook named with terminal escapes (clear screen, cursor, bidi override) is
    named in the summary as escapes, never as the sequences themselves."""
    course = make_course(tmp_path / "course", [ASSIGNMENT])
    folder = course / "submitted" / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    evil = "\x1bc\x1b7graded ada 10\x08\u202e.ipynb"
    source = course / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    (folder / evil).write_bytes(source.read_bytes())
    assert main(["grade", "--course-dir", str(course), "--quiet", "-j", "1"]) == 1
    out, err = capsys.readouterr()
    assert "FAILED ada/" in out and "\\x1bc\\x1b7graded ada 10\\x08\\u202e.ipynb" in out, out
    assert not [c for c in out + err if c in "\x1b\x08\u202e"]


def bare_course(course: Path, site: str = "") -> Path:
    """A course folder with a config (and `site` as its site_config.py) and an empty
    gradebook: enough for a command to get as far as reading the course."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(
        (REPO / "nbgrader_config.py")
        .read_text()
        .replace("os.path.dirname(os.path.abspath(__file__))", repr(str(course)))
    )
    if site:
        (course / "site_config.py").write_text("c = get_config()\n" + site)
    empty_gradebook(course)
    return course


GRADING = [["grade"], ["serve", "--no-collect"]]
EVERY = [*GRADING, ["report"]]


@pytest.mark.parametrize(
    ("site", "said", "commands"),
    [
        (
            "c.Sandbox.memory_mb = (\n",
            "site_config.py, line 2: SyntaxError",
            [*GRADING, ["report"]],
        ),
        (
            "c.Sandbox.memory_mb = lots\n",
            "site_config.py, line 2: NameError",
            [*GRADING, ["report"]],
        ),
        ("c.Sandbox.memory_mb = 'lots'\n", "'memory_mb' trait of a Sandbox instance", GRADING),
    ],
    ids=["syntax", "name", "value"],
)
@pytest.mark.processes
def test_a_broken_configuration_is_one_line_naming_the_file(
    site: str,
    said: str,
    commands: list[list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each command that reads the broken part of the configuration says where it is."""
    course = bare_course(tmp_path / "course", site)
    for words in commands:
        assert main([*words, "--course-dir", str(course)]) == 2, words
        err = capsys.readouterr().err
        assert err.startswith("error: ") and said in err, (words, err)
        assert "Traceback" not in err
    assert not (course / "autograded").exists()


@pytest.mark.processes
def test_a_missing_site_config_named_by_the_environment_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    course = bare_course(tmp_path / "course")
    monkeypatch.setenv("NBGRADER_SITE_CONFIG", str(tmp_path / "nowhere.py"))
    assert main(["grade", "--course-dir", str(course)]) == 2
    err = capsys.readouterr().err
    assert "NBGRADER_SITE_CONFIG names" in err and "nowhere.py" in err


@pytest.mark.processes
def test_a_secret_that_is_empty_or_not_a_file_stops_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = bare_course(tmp_path / "course")
    secret = course / ".autograder" / "givens_secret"
    secret.parent.mkdir()
    secret.write_text("\n")
    assert main(["grade", "--no-sandbox", "--course-dir", str(course)]) == 2
    assert "givens_secret is empty" in capsys.readouterr().err
    secret.unlink()
    secret.symlink_to(tmp_path / "moved_away")
    assert main(["grade", "--no-sandbox", "--course-dir", str(course)]) == 2
    assert "givens_secret is a link to a file that is not there" in capsys.readouterr().err
    secret.unlink()
    secret.mkdir()
    assert main(["grade", "--no-sandbox", "--course-dir", str(course)]) == 2
    err = capsys.readouterr().err
    assert "givens_secret cannot be read (Is a directory)" in err and "Restore it" in err
    assert sorted(p.name for p in secret.parent.iterdir()) == ["givens_secret"]  # no logs


@pytest.mark.processes
def test_a_secret_the_instructor_cannot_read_stops_grading_before_anything_runs() -> None:
    """`sudo autograder secret` leaves a secret only root may read: an instructor grading
    without it would give every learner numbers that are not theirs."""
    folder = Path(tempfile.mkdtemp(prefix="secret-"))
    try:
        folder.chmod(0o755)
        course = bare_course(folder / "course")
        secret = course / ".autograder" / "givens_secret"
        secret.parent.mkdir(mode=0o755)
        secret.write_text("0" * 64 + "\n")
        command = [str(BIN / "autograder"), "grade", "--no-sandbox", "--course-dir", str(course)]
        if os.geteuid() == 0:
            secret.chmod(0o600)  # root's alone; the grader runs as nobody
            command = as_account(NOBODY, NOBODY, command)
        else:
            secret.chmod(0)
        run = stall_guard.run(command, capture_output=True, text=True, check=False)
        assert run.returncode == 2, run.stderr
        assert "givens_secret cannot be read (Permission denied)" in run.stderr
        assert "Traceback" not in run.stderr
        assert sorted(p.name for p in secret.parent.iterdir()) == ["givens_secret"]
        assert not (course / "autograded").exists()
    finally:
        shutil.rmtree(folder)


@pytest.mark.processes
def test_the_secret_is_made_once_and_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = bare_course(tmp_path / "course")
    assert main(["secret", "--course-dir", str(course)]) == 0
    secret = course / ".autograder" / "givens_secret"
    made = secret.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}\n", made)
    assert secret.stat().st_mode & 0o777 == 0o600
    assert main(["secret", "--course-dir", str(course)]) == 2
    assert "a new secret would change every learner's numbers" in capsys.readouterr().err
    assert secret.read_text() == made
    assert sorted(p.name for p in secret.parent.iterdir()) == ["givens_secret"]
    other = bare_course(tmp_path / "other")
    (other / ".autograder").write_text("not a folder")
    assert main(["secret", "--course-dir", str(other)]) == 2
    err = capsys.readouterr().err
    assert "cannot create" in err and "Not a directory" in err
    assert (other / ".autograder").read_text() == "not a folder"


def hand_in(course: Path, student: str, cells: list[Any], like: Any) -> None:
    """`student` hands in a notebook of `cells`, with the metadata of `like`."""
    notebook = copy.deepcopy(like)
    notebook.cells = cells
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{ASSIGNMENT}.ipynb")


@pytest.mark.processes
def test_what_cannot_be_graded_fails_with_its_reason_and_nothing_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-in in a folder named after no assignment, a timestamp nbgrader cannot read
    and an autograded/ nbgrader cannot write each fail that submission, saying why."""
    course = make_course(tmp_path / "course", [ASSIGNMENT])
    submit_sample_class(course, [ASSIGNMENT], ["ada", "ben"])
    timestamp = course / "submitted" / "ada" / ASSIGNMENT / "timestamp.txt"
    timestamp.write_text("next tuesday-ish")
    stray = course / "submitted" / "ben" / "03_a_neuron_by_hnad"
    shutil.copytree(course / "submitted" / "ben" / ASSIGNMENT, stray)
    ben = nbformat.read(stray / f"{ASSIGNMENT}.ipynb", as_version=4)
    # ben's answers, plus a "task" cell the assignment does not have: nbgrader would
    # record it, failing halfway with the grades before it saved and no late penalty.
    task = nbformat.v4.new_markdown_cell("my own task")
    flags = {"task": True, "grade": False, "solution": False, "locked": False, "points": 5}
    task.metadata["nbgrader"] = {**flags, "grade_id": "bonus_task"}
    hand_in(course, "tia", [*ben.cells, task], ben)
    # ben's answers from a kernel whose execution count the learner set below zero
    counted = copy.deepcopy(ben)
    counted.cells.insert(0, nbformat.v4.new_code_cell("get_ipython().execution_count = -7"))
    hand_in(course, "neg", counted.cells, ben)
    # ben's answers, and a million empty objects of metadata (4 MB, under the file limit)
    heavy = copy.deepcopy(ben)
    heavy.cells[0].metadata["x"] = [{}] * 1_000_000
    hand_in(course, "fat", heavy.cells, ben)
    assert main(["grade", "--course-dir", str(course), "--quiet", "-j", "1"]) == 1
    out = capsys.readouterr().out
    assert "3 graded, 3 failed" in out, out
    scores = gradebook_scores(course)
    assert scores[("tia", ASSIGNMENT)] == scores[("neg", ASSIGNMENT)] == scores[("ben", ASSIGNMENT)]
    assert "unknown graded cell id 'bonus_task' (ignored)" in out
    assert f"FAILED fat/{ASSIGNMENT}" in out and "c.Budgets.max_json_values" in out
    assert f"FAILED ada/{ASSIGNMENT}" in out and "timestamp.txt holds 'next tuesday-ish'" in out
    assert "FAILED ben/03_a_neuron_by_hnad" in out, out
    assert "not an assignment in the gradebook" in out and f"({ASSIGNMENT})" in out
    assert stray.is_dir() and timestamp.read_text() == "next tuesday-ish"  # nothing moved
    assert not (course / "autograded" / "ada").exists()

    # The report of what was graded: to a folder, or one line saying why it cannot be.
    reports = tmp_path / "reports"
    assert main(["report", "--course-dir", str(course), "--out", str(reports)]) == 0
    written = sorted(p.name for p in reports.iterdir())
    assert written == ["course.csv", "course.html", "course_progress.csv", "course_students.csv"]
    (tmp_path / "a_file").write_text("kept")
    for out in (tmp_path / "a_file", tmp_path / "a_file" / "below", Path("/proc/no/such")):
        assert main(["report", "--course-dir", str(course), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: cannot write the report in {out}") and err[-1] == "\n"
        assert "Traceback" not in err
    assert (tmp_path / "a_file").read_text() == "kept"

    shutil.rmtree(course / "autograded")
    (course / "autograded").write_text("not a folder")
    timestamp.unlink()
    assert main(["grade", "--course-dir", str(course), "--quiet", "--student", "ada"]) == 1
    out = capsys.readouterr().out
    assert f"FAILED ada/{ASSIGNMENT}" in out and "nbgrader could not record it: " in out, out
    assert "see the above traceback" not in out
    assert (course / "autograded").read_text() == "not a folder"


@pytest.mark.processes
def test_nothing_to_grade_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = bare_course(tmp_path / "course")
    assert main(["grade", "--no-sandbox", "--quiet", "--course-dir", str(course)]) == 0
    out, err = capsys.readouterr()
    assert "0 graded, 0 failed" in out
    assert "nothing to grade: submitted/ holds no hand-in of any recorded assignment" in err


@pytest.mark.processes
def test_serve_refuses_an_assignment_not_in_the_gradebook_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = bare_course(tmp_path / "course")
    words = ["serve", "nosuch", "--no-collect", "--no-sandbox", "--course-dir", str(course)]
    assert main(words) == 2
    out = capsys.readouterr().out
    assert "error: not in the gradebook: nosuch" in out and "serving" not in out


@pytest.mark.parametrize("interval", ["-1", "0", "nan", "inf", "soon"])
def test_an_interval_that_is_not_a_positive_number_is_a_usage_error(
    interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--interval", interval])
    assert stopped.value.code == 2
    assert f"{interval!r} is not a positive number of seconds" in capsys.readouterr().err


@pytest.mark.parametrize("student", ["..", "../ada", "-rf", "a*", ".hidden"])
def test_a_hostile_student_id_is_a_usage_error(
    student: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`autograder grade --student` follows the one rule for ids (check_student_name)."""
    with pytest.raises(SystemExit) as stopped:
        main(["grade", f"--student={student}"])
    assert stopped.value.code == 2
    assert f"student id {student!r} refused" in capsys.readouterr().err


@pytest.mark.processes
def test_clean_grades_says_when_there_was_no_gradebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from autograder.service.clean_grades import main as clean_grades

    course = bare_course(tmp_path / "course")
    assert clean_grades(["--course-dir", str(course)]) == 0
    assert "removed the SQLite gradebook" in capsys.readouterr().out
    assert not (course / "gradebook.db").exists()
    assert clean_grades(["--course-dir", str(course)]) == 0
    assert "no SQLite gradebook at" in capsys.readouterr().out
    (course / "site_config.py").write_text("c = get_config()\nc.CourseDirectory.db_url = (\n")
    assert clean_grades(["--course-dir", str(course)]) == 2
    assert "site_config.py, line 2: SyntaxError" in capsys.readouterr().err


def test_a_failed_recording_puts_the_previous_autograded_copy_back(tmp_path: Path) -> None:
    """nbgrader deletes a submission's autograded copy before it records the new one: the
    grader sets it aside first and puts it back when the recording fails."""
    from autograder.grading.recording import put_back, set_aside

    target = tmp_path / "autograded" / "ben" / ASSIGNMENT
    empty = set_aside(target)  # a first hand-in: nothing to keep, an empty folder aside
    assert empty is not None and list(empty.iterdir()) == [] and not target.exists()
    target.mkdir(parents=True)
    (target / "half.ipynb").write_text("a first recording killed halfway")
    assert set_aside(target) == empty and not target.exists()  # never taken for a copy
    put_back(target, empty)
    assert not target.exists() and not empty.exists()  # none before, none after
    target.mkdir(parents=True)
    (target / "graded.ipynb").write_text("the previous version")
    aside = set_aside(target)
    assert aside == empty and not target.exists()
    target.mkdir()
    (target / "half.ipynb").write_text("what the failed recording began")
    put_back(target, aside)
    assert sorted(p.name for p in target.iterdir()) == ["graded.ipynb"]
    assert not aside.exists()
    # A run killed while recording: the copy it set aside is the one kept.
    aside = set_aside(target)
    target.mkdir()
    (target / "half.ipynb").write_text("killed halfway")
    assert set_aside(target) == aside and not target.exists()
    put_back(target, aside)
    assert (target / "graded.ipynb").read_text() == "the previous version"


def test_a_notebook_that_leaves_false_flags_out_is_not_called_tampered() -> None:
    """Older nbgrader metadata leaves out the flags that are false ("task"): the same cells
    as the instructor's. A flag set that the source does not have is still named."""
    from autograder.grading.preparation import tampering_notes

    path = REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    source = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader")
        if meta:
            flags = {key: meta[key] for key in ("grade", "solution", "locked", "task")}
            points = {"points": meta["points"]} if meta["grade"] else {}
            source[meta["grade_id"]] = {"source": cell.source, **flags, **points}
            del meta["task"]
    assert tampering_notes(notebook, source, ASSIGNMENT) == []
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    test_cell.metadata["nbgrader"]["task"] = True
    grade_id = test_cell.metadata["nbgrader"]["grade_id"]
    notes = tampering_notes(notebook, source, ASSIGNMENT)
    assert notes == [f"{ASSIGNMENT}: changed nbgrader metadata 'task' of {grade_id!r}"]


@pytest.mark.processes
def test_a_folder_the_grader_cannot_read_fails_that_student_alone() -> None:
    """An instructor grading a class where one student's folder is not readable to them:
    that student fails with the reason, the others are graded."""
    folder = Path(tempfile.mkdtemp(prefix="unreadable-"))
    try:
        folder.chmod(0o755)
        course = make_course(folder / "course", [ASSIGNMENT])
        submit_sample_class(course, [ASSIGNMENT], ["ada"])
        closed = course / "submitted" / "zed"
        shutil.copytree(course / "submitted" / "ada", closed)
        command = [str(BIN / "autograder"), "grade", "--no-sandbox", "--quiet", "-j", "1"]
        command += ["--course-dir", str(course)]
        if os.geteuid() == 0:  # the course is nobody's, zed's folder root's alone
            for path in [folder, *folder.rglob("*")]:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            os.chown(closed, 0, 0)
            command = as_account(NOBODY, NOBODY, command)
        closed.chmod(0o700 if os.geteuid() == 0 else 0)
        run = stall_guard.run(command, capture_output=True, text=True, check=False)
        assert run.returncode == 1, run.stdout + run.stderr
        assert "1 graded, 1 failed" in run.stdout, run.stdout
        assert f"FAILED zed/{ASSIGNMENT}" in run.stdout and "Permission denied" in run.stdout
        assert "Traceback" not in run.stdout + run.stderr
    finally:
        closed.chmod(0o700)
        shutil.rmtree(folder)
