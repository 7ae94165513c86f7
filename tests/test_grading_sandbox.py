"""Hostile and broken submissions, graded in one batch with honest ones (issue: safe grading).

Every attack answers every question wrongly (or not at all), so it has earned nothing:
whatever it does to the kernel, the notebook or the machine, it must score 0, the honest
students must get exactly their scores, the batch must finish, files outside the sandbox
must be byte-identical, and nobody may connect to a listener on loopback.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

import nbformat
import pytest

from autograder.runner import Grader
from autograder.sample_class import (
    expected_scores,
    gradebook_scores,
    make_course,
    submit_sample_class,
)
from autograder.sandbox import Sandbox, SandboxUnavailable, check_sandbox

ASSIGNMENT = "03_a_neuron_by_hand"
SECRET = "instructor-secret-7f3a"
LIMITS = """
c.Sandbox.wall_seconds = 8
c.Sandbox.cpu_seconds = 8
c.Sandbox.memory_mb = 512
c.Sandbox.max_output_bytes = 200_000
"""


def answer_ids(nb: Any) -> list[str]:
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]


def fill(nb: Any, first: str = "", value: str = "-999.0") -> Any:
    """Every answer wrong; `first` is code placed in the first answer cell."""
    nb = copy.deepcopy(nb)
    ids = answer_ids(nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ids:
            cell.source = f"{grade_id} = {value}"
            if grade_id == ids[0] and first:
                cell.source = first + "\n" + cell.source
    return nb


def cell_with(nb: Any, grade_id: str) -> Any:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def attacks(release: Any, paths: dict[str, str]) -> dict[str, Any]:
    """name -> notebook (or bytes for a corrupt file). All earn 0 points."""
    a: dict[str, Any] = {}
    always_equal = (
        "class Yes(float):\n    def __eq__(self, other): return True\n    __hash__ = float.__hash__"
    )
    a["eq_always_true"] = fill(release, always_equal, "Yes(1.0)")
    a["object_eq_true"] = fill(
        release, "class Yes:\n    def __eq__(self, other): return True", "Yes()"
    )
    a["tensor_subclass"] = fill(
        release,
        "import torch\nclass T(torch.Tensor):\n    def __eq__(s, o): return True",
        "T([1.0])",
    )
    a["patch_checker"] = fill(
        release,
        "import autograder.check as c\nc.Exercise.check = lambda *a, **k: print('✓ all good')\n"
        "exercise.check = lambda *a, **k: None",
    )
    a["patch_builtins"] = fill(
        release,
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.abs = lambda x: 0",
    )
    a["patch_torch"] = fill(
        release,
        "import torch\ntorch.Tensor.backward = lambda *a, **k: None\ntorch.allclose = lambda *a, **k: True",
    )
    a["hide_errors"] = fill(
        release,
        "get_ipython()._showtraceback = lambda *a, **k: None\nget_ipython().showtraceback = lambda *a, **k: None",
    )
    a["fake_pass_text"] = fill(release, "print('✓ h = 5.0 matches PyTorch\\nAll tests passed')")
    a["autograd_for_hand"] = fill(
        release,
        "import torch\nW = torch.tensor(3.0, requires_grad=True)\n"
        "((torch.relu(W * 2 - 1) - 2) ** 2).backward()",
        "W.grad.item()",
    )
    a["sys_exit"] = fill(release, "import sys\nsys.exit(0)")
    a["os_exit"] = fill(release, "import os\nos._exit(0)")
    a["kill_kernel"] = fill(release, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    a["infinite_loop"] = fill(release, "while True:\n    pass")
    a["memory_bomb"] = fill(
        release, "hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))"
    )
    a["fork_bomb"] = fill(
        release,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    )
    a["output_flood"] = fill(release, "while True:\n    print('x' * 100000)")
    a["steal_files"] = fill(
        release,
        "import glob\nfor p in " + json.dumps(list(paths.values())) + ":\n"
        "    try:\n        print(open(p, errors='replace').read())\n"
        "    except Exception as e:\n        print('blocked', type(e).__name__)\n"
        "print(glob.glob('/root/*'), glob.glob('/work/*'))",
    )
    a["write_outside"] = fill(
        release,
        "for p in " + json.dumps([paths["sentinel_file"], paths["gradebook"]]) + ":\n"
        "    try:\n        open(p, 'w').write('owned')\n"
        "    except Exception as e:\n        print(e)",
    )
    a["tamper_gradebook"] = fill(
        release,
        "import sqlite3\ntry:\n    db = sqlite3.connect(" + json.dumps(paths["gradebook"]) + ")\n"
        "    db.execute('update grade set auto_score = 1000')\n    db.commit()\n"
        "except Exception as e:\n    print(e)",
    )
    a["network"] = fill(
        release,
        "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n"
        f"    s.connect(('127.0.0.1', {paths['port']}))\n    s.send(b'leak')\n"
        "except Exception as e:\n    print('no network', e)",
    )
    a["read_environment"] = fill(release, "import os\nprint(dict(os.environ))")
    deleted = fill(release)
    deleted.cells = [
        c for c in deleted.cells if not c.metadata.get("nbgrader", {}).get("grade", False)
    ]
    a["delete_tests"] = deleted
    duplicated = fill(release)
    duplicated.cells.append(copy.deepcopy(cell_with(duplicated, "correct_h")))
    a["duplicate_test"] = duplicated
    edited = fill(release)
    for cell in edited.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            cell.source = "pass"
    a["edit_locked_tests"] = edited
    points = fill(release)
    cell_with(points, "correct_h").metadata["nbgrader"]["points"] = 1000
    a["change_points"] = points
    unlock = fill(release)
    for cell in unlock.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            meta["grade"] = False
            meta["locked"] = False
    a["strip_grade_metadata"] = unlock
    kernel = fill(release)
    kernel.metadata["kernelspec"] = {"name": "bash", "display_name": "Bash", "language": "bash"}
    a["change_kernelspec"] = kernel
    return a


CORRUPT = {
    "invalid_json": b'{"cells": [',
    "empty_file": b"",
    "binary_garbage": bytes(range(256)) * 64,
    "nbformat_3": json.dumps(
        {"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}
    ).encode(),
}


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    try:
        check_sandbox(Sandbox())
    except SandboxUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no sandbox here: {error}")
    base = tmp_path_factory.mktemp("hostile")
    course = make_course(base / "course", [ASSIGNMENT], LIMITS)
    sentinel = base / "sentinel"
    (sentinel / "deep").mkdir(parents=True)
    (sentinel / "secret.txt").write_text("sentinel-content-91c2")
    (sentinel / "deep" / "data.bin").write_bytes(os.urandom(4096))
    before = tree_hash(sentinel)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    paths = {
        "gradebook": str(course / "gradebook.db"),
        "solution": str(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
        "sentinel_file": str(sentinel / "secret.txt"),
        "home": str(Path.home() / ".bashrc"),
        "port": str(listener.getsockname()[1]),
    }
    release = nbformat.read(course / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    submit_sample_class(course, [ASSIGNMENT], ["ada", "ben", "dee"])
    for name, nb in attacks(release, paths).items():
        folder = course / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    for name, data in CORRUPT.items():
        folder = course / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_bytes(data)
    huge = course / "submitted" / "huge_notebook" / ASSIGNMENT
    huge.mkdir(parents=True)
    big = fill(release)
    big.cells[0].source = "x" * (30 * 1024 * 1024)
    nbformat.write(big, huge / f"{ASSIGNMENT}.ipynb")
    wrong_name = course / "submitted" / "wrong_name" / ASSIGNMENT
    wrong_name.mkdir(parents=True)
    nbformat.write(fill(release), wrong_name / "my_homework.ipynb")
    extra = course / "submitted" / "extra_notebooks" / ASSIGNMENT
    extra.mkdir(parents=True)
    nbformat.write(fill(release), extra / f"{ASSIGNMENT}.ipynb")
    nbformat.write(fill(release), extra / "scratch.ipynb")
    os.environ["AUTOGRADER_TEST_SECRET"] = SECRET
    try:
        outcomes = list(Grader(course, jobs=2, seed=0).run())
    finally:
        del os.environ["AUTOGRADER_TEST_SECRET"]
    try:
        connection, _ = listener.accept()
        connection.close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    return {
        "course": course,
        "outcomes": {o.submission.student: o for o in outcomes},
        "scores": gradebook_scores(course),
        "sentinel_unchanged": tree_hash(sentinel) == before,
        "connected": connected,
        "release": release,
        "paths": paths,
    }


def test_honest_students_get_exactly_their_scores(graded: dict[str, Any]) -> None:
    expected = expected_scores()
    for student in ("ada", "ben", "dee"):
        assert graded["scores"][(student, ASSIGNMENT)] == expected[(student, ASSIGNMENT)], student


def test_no_attack_earns_a_point(graded: dict[str, Any]) -> None:
    names = list(attacks(graded["release"], graded["paths"]))
    assert len(names) + len(CORRUPT) + 3 >= 20
    earned = {
        name: graded["scores"].get((name, ASSIGNMENT))
        for name in names
        if graded["scores"].get((name, ASSIGNMENT))
    }
    assert earned == {}


def test_every_submission_is_accounted_for(graded: dict[str, Any]) -> None:
    outcomes = graded["outcomes"]
    for name in attacks(graded["release"], graded["paths"]):
        assert outcomes[name].status == "graded", (name, outcomes[name].reasons)
    for name in [*CORRUPT, "huge_notebook"]:
        assert outcomes[name].status == "failed", name
        assert outcomes[name].reasons, name


def test_corrupt_inputs_get_clear_reasons(graded: dict[str, Any]) -> None:
    reasons = {name: " ".join(o.reasons) for name, o in graded["outcomes"].items()}
    assert "not valid JSON" in reasons["invalid_json"]
    assert "empty file" in reasons["empty_file"]
    assert "binary" in reasons["binary_garbage"]
    assert "format 3" in reasons["nbformat_3"]
    assert "MB" in reasons["huge_notebook"]
    assert "my_homework.ipynb is not part of" in reasons["wrong_name"]
    assert "was not submitted" in reasons["wrong_name"]
    assert "scratch.ipynb is not part of" in reasons["extra_notebooks"]


def test_reasons_are_recorded_for_faults_and_tampering(graded: dict[str, Any]) -> None:
    reasons = {name: " ".join(o.reasons) for name, o in graded["outcomes"].items()}
    assert "timeout" in reasons["infinite_loop"]
    assert "died" in reasons["os_exit"]
    # The kernel is PID 1 of its own namespace: SIGKILL from inside is ignored, so
    # kill_kernel simply runs on (and scores 0); os._exit does end it.
    assert "deleted cell" in reasons["delete_tests"]
    assert "appears 2 times" in reasons["duplicate_test"]
    assert "edited locked cell" in reasons["edit_locked_tests"]
    assert "changed nbgrader metadata" in reasons["change_points"]
    assert "kernelspec" in reasons["change_kernelspec"]


def test_files_outside_the_sandbox_are_untouched(graded: dict[str, Any]) -> None:
    assert graded["sentinel_unchanged"]


def test_no_network_connection_was_made(graded: dict[str, Any]) -> None:
    assert not graded["connected"]


def test_nothing_secret_reaches_the_outputs(graded: dict[str, Any]) -> None:
    autograded = graded["course"] / "autograded"
    text = "".join(p.read_text() for p in autograded.rglob("*.ipynb"))
    assert SECRET not in text
    assert "sentinel-content-91c2" not in text
    steal = (autograded / "steal_files" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert "blocked" in steal


def test_the_grader_survives_and_grades_again(graded: dict[str, Any]) -> None:
    """After the bombs, a worker still grades an honest notebook correctly."""
    course: Path = graded["course"]
    shutil.rmtree(course / "submitted" / "ada2", ignore_errors=True)
    shutil.copytree(course / "submitted" / "ada", course / "submitted" / "ada2")
    outcomes = list(Grader(course, jobs=1, seed=0, students=["ada2"]).run())
    assert [o.status for o in outcomes] == ["graded"]
    assert gradebook_scores(course)[("ada2", ASSIGNMENT)] == expected_scores()[("ada", ASSIGNMENT)]
