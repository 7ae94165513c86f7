"""The class check service, tested as students would meet it: a real JupyterHub, real kernels
of a students' environment that holds no answer key.

A JupyterHub (its configurable-http-proxy, users and tokens made through its REST API) runs
the check service through the class hook; each learner's kernel runs in a fresh venv
holding only the answer-free `autograder` and `autograd_lessons` (see check_hub.py).
Covered here: nothing a student can import or read (searched as an ordinary account) holds
a model answer or spec text; checks say what self-study's checks say for the same answers,
and a function that raises or code not defined yet is worded as in self-study; a forged
JUPYTERHUB_USER or someone else's drawn cases change nothing; an unreachable, slow or
refusing service, or a judge that died, gives "Not checked", never ✓ or ✗; the hub's answer
on a token is remembered briefly and boundedly, a no more briefly; the sandboxed grader
(`autograder grade`) and the service agree on every test cell of the sample class. In a
browser under `make class`: tests/hub/test_class_checks.py; the token cache alone:
tests/checks/test_check_tokens.py; the service against a hostile student:
tests/checks/test_check_defences.py. One file past 400 lines: these tests share one hub and
one students' environment, each minutes to start.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import nbformat
import process_tree
import pytest
from check_hub import (
    REPO,
    CheckHub,
    StudentKernel,
    StudentsEnvironment,
    answer_texts,
    open_folder,
    search_as,
    student_account,
)
from courses import site_where
from nbgrader_course import shared_autograded_course
from ports import free_port

from autograder.authoring.sample_class import SAMPLE_CLASS, make_course
from autograder.specs import SPECS, exercise_spec, learner_problem, problem_words

SAMPLE_STUDENTS = sorted(p.name for p in SAMPLE_CLASS.iterdir() if p.is_dir())
ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
NEURON = "03_a_neuron_by_hand"


@pytest.fixture(scope="module")
def tmp_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("checks")


@pytest.fixture(scope="module")
def hub(tmp_module: Path) -> Iterator[CheckHub]:
    started = CheckHub.start(tmp_module / "hub", [*SAMPLE_STUDENTS, "mallory"])
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def students_env() -> Iterator[StudentsEnvironment]:
    """Built where an ordinary account may read it (pytest's folders are root's alone)."""
    with open_folder() as folder:
        yield StudentsEnvironment.build(folder / "students")


def kernel(env: StudentsEnvironment, hub: CheckHub, learner: str, **extra: str) -> StudentKernel:
    made = StudentKernel(env, hub.tokens[learner], hub.direct_checks_url)
    made.env.update(extra)
    return made


def code_cells(path: Path) -> list[tuple[str, str]]:
    """(grade id or "", source) of every code cell of a notebook."""
    nb = nbformat.read(path, as_version=4)
    return [
        (c.metadata.get("nbgrader", {}).get("grade_id", ""), c.source)
        for c in nb.cells
        if c.cell_type == "code"
    ]


# --- what a student can import or read ---------------------------------------------------


@pytest.mark.processes
def test_a_student_account_finds_no_answer_to_read(students_env: StudentsEnvironment) -> None:
    """Searched as an ordinary account: the students' environment, the lessons and the
    released exercises hold no answer; the same search finds the answer key where it is
    (a copy of the specs and solutions the account may read), so it can fail."""
    needles = answer_texts()
    assert len(needles) > 100
    with open_folder() as planted, student_account() as student:
        shutil.copytree(REPO / "autograder" / "specs", planted / "specs")
        shutil.copytree(REPO / "solutions", planted / "solutions")
        subprocess.run(["chmod", "-R", "go+rX", str(planted)], check=True)
        places = [students_env.root, REPO / "course", REPO / "exercises", planted]
        search = search_as(student, needles, places)
        files = [f for place in places for f in place.rglob("*")
                 if f.is_file() and not f.is_symlink()]  # fmt: skip
    in_key = {p for p in search["found"] if p.startswith(str(planted))}
    assert len(in_key) >= len(ASSIGNMENTS), search["found"]
    assert {p: n for p, n in search["found"].items() if p not in in_key} == {}
    assert search["read"] == len(files), search  # it read every file there, as the account
    links = [p.name for p in (students_env.root / "third_party").iterdir()]
    assert not [n for n in links if "autograd" in n or "backward" in n or "editable" in n]
    shipped = {p.relative_to(students_env.site_packages).as_posix()
               for p in (students_env.site_packages / "autograder").rglob("*.py")}  # fmt: skip
    assert shipped == {
        "autograder/__init__.py", "autograder/core/__init__.py", "autograder/core/verdict.py",
        "autograder/core/value_build.py", "autograder/learner/__init__.py",
        "autograder/learner/kernel.py", "autograder/learner/wire.py",
    }  # fmt: skip


@pytest.mark.processes
def test_students_can_import_no_answer(students_env: StudentsEnvironment, hub: CheckHub) -> None:
    code = (
        "import importlib, autograder, autograd_lessons\n"
        "print(autograder.__file__)\n"
        "for name in ['autograder.specs', 'autograder.diagnosis.judge', 'autograder.answers',"
        " 'autograder.grading', 'autograder.core.spec', 'autograder.core.engine',"
        " 'autograder.learner.check', 'autograder_shim']:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        print('IMPORTED', name)\n"
        "    except ImportError:\n"
        "        pass\n"
    )
    with kernel(students_env, hub, "ada") as k:
        printed, error = k.run(code)
    assert error is None, error
    assert printed.splitlines()[0].startswith(str(students_env.site_packages))
    assert "IMPORTED" not in printed, printed


# --- checks as in self-study --------------------------------------------------------------


def run_notebook(k: StudentKernel, path: Path) -> dict[str, tuple[str, str | None]]:
    """grade id -> (printed, error) of every code cell, run in order in a fresh session."""
    k.run("get_ipython().history_manager.reset()\n%reset -f")
    outputs = {}
    for grade_id, source in code_cells(path):
        outputs[grade_id] = k.run(source)
    return outputs


def self_study(learner: str, path: Path, tmp: Path) -> dict[str, tuple[str, str | None]]:
    """The same notebook in a kernel of the course's own environment (today's checks)."""
    env = StudentsEnvironment(tmp)
    spec = tmp / "kernels" / "students"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "course"}))
    made = StudentKernel(env, "", "")
    made.env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp),
                "JUPYTERHUB_USER": learner, "LANG": "C.UTF-8", "MPLBACKEND": "agg"}  # fmt: skip
    with made as k:
        return run_notebook(k, path)


def masked(text: str) -> str:
    """A function or class verdict without what depends on the random cases drawn: the
    numbers masked, the wrong graph's listing left out (its diagnosis is kept)."""
    kept = [line for line in text.splitlines() if not line.startswith("First wrong graph")]
    return re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", "\n".join(kept))


@pytest.mark.parametrize("learner", ["ada", "ben"])
@pytest.mark.processes
def test_checks_say_what_self_study_says(
    learner: str, students_env: StudentsEnvironment, hub: CheckHub, tmp_path: Path
) -> None:
    """ada's right and ben's wrong answers: hand, function and class checks."""
    for assignment in [NEURON, "05_three_mechanics", "09_autograd_by_hand"]:
        path = SAMPLE_CLASS / learner / assignment / f"{assignment}.ipynb"
        with kernel(students_env, hub, learner) as k:
            served = run_notebook(k, path)
        local = self_study(learner, path, tmp_path / assignment)
        checks = [g for g, s in code_cells(path) if ".check" in s]
        assert checks
        for grade_id, source in code_cells(path):
            if grade_id not in checks:
                continue
            drawn = "check_function" in source or "check_class" in source
            same = masked if drawn else (lambda t: t)
            (p1, e1), (p2, e2) = served[grade_id], local[grade_id]
            assert (same(p1), e1 and same(e1)) == (same(p2), e2 and same(e2)), grade_id
        given = next(g for g, s in code_cells(path) if "exercise.given(" in s)
        assert f"Numbers of {learner} (your hub login)" in served[given][0]
        assert served[given][0].split(":", 1)[1] == local[given][0].split(":", 1)[1]


@pytest.mark.processes
def test_raising_and_missing_code_is_worded_as_in_self_study(
    students_env: StudentsEnvironment, hub: CheckHub, tmp_path: Path
) -> None:
    """A function that raises, a function and a class not defined yet: the same lines."""
    cells = [
        "from autograder import Exercise\nexercise = Exercise('05_three_mechanics')",
        "def train(*args):\n    raise ValueError('no training today')",
        "exercise.check_function('train', seed=1)",
        "exercise.check_function('grad_of_intermediate')",
        "exercise = Exercise('09_autograd_by_hand')",
        "exercise.check_class('value_add')",
    ]
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(c, metadata={"nbgrader": {"grade_id": f"c{i}"}})
        for i, c in enumerate(cells)
    ])  # fmt: skip
    path = tmp_path / "code.ipynb"
    nbformat.write(notebook, path)
    with kernel(students_env, hub, "ada") as k:
        served = list(run_notebook(k, path).values())
    local = list(self_study("ada", path, tmp_path / "self").values())
    errors = [e for _, e in served]
    assert errors[2] is not None and "raised ValueError: no training today" in errors[2]
    assert errors[3] == "AnswerMismatch: ✗ `grad_of_intermediate` is not a function yet: " \
        "run the cell that defines it."  # fmt: skip
    assert errors[5] == "AnswerMismatch: ✗ `Value` is not defined yet: run the cell that " \
        "defines it."  # fmt: skip
    assert [e for _, e in local] == errors


# --- whose numbers -----------------------------------------------------------------------


@pytest.mark.processes
def test_a_history_longer_than_the_service_reads_is_named(
    students_env: StudentsEnvironment, hub: CheckHub
) -> None:
    """The service reads a kernel's last MAX_CELLS cells: once the Given cell is older than
    that, a failed check says why and what to do, instead of only blaming the answer."""
    from autograder_client import MAX_CELLS

    with kernel(students_env, hub, "ada") as k:
        k.run(f"from autograder import Exercise\nexercise = Exercise({NEURON!r})")
        k.run('x, w, b, y = exercise.given("x", "w", "b", "y")')
        k.run("h = w * x + b")
        printed, error = k.run("exercise.check('h')")
        assert error is None and "✓" in printed, (printed, error)
        k.run(f"get_ipython().history_manager.input_hist_parsed.extend(['pass'] * {MAX_CELLS})")
        printed, error = k.run("exercise.check('h')")
        assert error is not None and "✗" in error, (printed, error)
        assert f"more than {MAX_CELLS} cells" in error and "Restart the kernel" in error


@pytest.mark.processes
def test_a_forged_user_name_changes_nothing(
    students_env: StudentsEnvironment, hub: CheckHub
) -> None:
    """mallory names herself ada in her kernel: she still gets her own numbers and
    verdicts, ada's right answers fail for her, and ada's drawn cases are refused."""
    ada = SAMPLE_CLASS / "ada" / NEURON / f"{NEURON}.ipynb"
    answers = "\n".join(s for g, s in code_cells(ada) if g.startswith(("h", "a", "L", "d")))
    own = hub.ask("exercise", {"exercise": NEURON}, hub.tokens["mallory"])["givens"]
    theirs = hub.ask("exercise", {"exercise": NEURON}, hub.tokens["ada"])["givens"]
    assert own != theirs
    with kernel(students_env, hub, "mallory", JUPYTERHUB_USER="ada", USER="ada") as k:
        printed, error = k.run(
            f"from autograder import Exercise\nexercise = Exercise({NEURON!r})\n"
            "x, w, b, y = exercise.given('x', 'w', 'b', 'y')"
        )
        assert error is None, error
        assert printed.startswith("Numbers of mallory (your hub login)"), printed
        assert k.run("print([x, w, b, y])")[0].strip() == str(list(own.values()))
        k.run(answers.replace("x, w, b, y", "_"))  # ada's arithmetic on ada's numbers
        for name, value in theirs.items():
            k.run(f"{name} = {value!r}")
        k.run(answers)
        _, failed = k.run("exercise.check('h')")
    assert failed is not None and failed.startswith("AnswerMismatch: ✗ h"), failed
    drawn = hub.ask("graphs", {"exercise": "09_autograd_by_hand", "part": "value_add"},
                    hub.tokens["ada"])  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        hub.ask("class", {"exercise": "09_autograd_by_hand", "part": "value_add", **drawn,
                          "results": []}, hub.tokens["mallory"])  # fmt: skip
    assert refused.value.code == 400
    body = {"exercise": NEURON, "learner": "ada", "user": "ada", "names": ["h"], "cells": []}
    assert hub.ask("check", body, hub.tokens["mallory"])["verdicts"][0]["passed"] is False


@pytest.mark.processes
def test_a_class_learner_is_told_their_own_structure(
    students_env: StudentsEnvironment, tmp_path: Path
) -> None:
    """With the course's secret (the service run with --course-dir, as a class runs it):
    the Given cell prints each learner's own structure, the sentence the grader's Given cell
    prints (`problem_words`), and their own model answer is checked right in it."""
    varied = next(name for name, spec in SPECS.items() if spec.variants)
    course = make_course(tmp_path / "course", [varied])
    learners = ["ada", "ben", "cyd", "dee"]
    # a secret under which the four draw more than one structure (1 in ~27 does not)
    site = site_where(
        course, lambda site: len({learner_problem(varied, who, site) for who in learners}) > 1
    )
    problems = {learner: learner_problem(varied, learner, site) for learner in learners}
    assert varied not in problems.values()  # a class never gets the lesson's structure
    class_hub = CheckHub.start(tmp_path / "hub", learners, ["--course-dir", str(course)])
    try:
        for learner, problem in problems.items():
            spec = exercise_spec(problem)
            part = next(p for p in spec.parts if p.kind not in ("function", "class"))
            names = spec.given_names  # written out, as the Given cell does
            with kernel(students_env, class_hub, learner) as k:
                printed, error = k.run(
                    f"from autograder import Exercise\nexercise = Exercise({varied!r})\n"
                    f"{', '.join(names)} = exercise.given({', '.join(map(repr, names))})"
                )
                assert error is None, error
                whose, words = printed.splitlines()
                assert whose.startswith(f"Numbers of {learner} (your hub login)"), printed
                assert words == problem_words(problem), (learner, printed)
                k.run(part.code)
                checked, error = k.run(f"exercise.check({part.name!r})")
                assert error is None and checked.startswith("✓"), (learner, checked, error)
    finally:
        class_hub.stop()


# --- no false verdicts ---------------------------------------------------------------------


@pytest.mark.processes
def test_no_service_no_verdict(students_env: StudentsEnvironment, hub: CheckHub) -> None:
    """Unreachable, silent or refusing: "Not checked", never ✓ or ✗."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts, never answers
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
    no_access = hub.new_token("mallory", scopes=["read:users:name!user=mallory"])
    setup = f"from autograder import Exercise\nexercise = Exercise({NEURON!r})\nh = 1.0"
    urls = {
        "cannot be reached": f"http://127.0.0.1:{closed.getsockname()[1]}/services/checks/",
        "did not answer within 1 s": f"http://127.0.0.1:{silent.getsockname()[1]}/services/checks/",
    }
    try:
        with kernel(students_env, hub, "mallory", AUTOGRADER_CHECKS_TIMEOUT="1") as k:
            assert k.run(setup)[1] is None
            for why, url in urls.items():
                printed, error = k.run(
                    f"import os\nos.environ['AUTOGRADER_CHECKS_URL'] = {url!r}\nexercise.check('h')"
                )
                assert error is not None and why in error and "Not checked" in error, error
                assert "✓" not in printed + error and "✗" not in printed + error
            k.run(f"os.environ['AUTOGRADER_CHECKS_URL'] = {hub.direct_checks_url!r}")
            k.run(f"os.environ['JUPYTERHUB_API_TOKEN'] = {no_access!r}")
            # the service's refusal, however slow the machine (1 s was for the silent one)
            k.run("os.environ['AUTOGRADER_CHECKS_TIMEOUT'] = '3600'")
            printed, error = k.run("exercise.check('h')")
            assert error is not None and "the hub did not let this kernel ask" in error, error
            assert "✓" not in printed + error and "✗" not in printed + error
    finally:
        silent.close()
        closed.close()


class Forbidding(http.server.BaseHTTPRequestHandler):
    """Any server that refuses everything with a page of its own (as another hub does)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.send_error(403, "not yours")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.processes
def test_a_hub_whose_service_port_is_taken_says_so(tmp_path: Path) -> None:
    """Another server holds the port meant for the check service (CI once saw another hub
    there): its refusal is not taken for the service's, the start fails naming the port,
    instead of every later check failing for a reason it does not say."""
    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Forbidding)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        with pytest.raises(AssertionError, match="not the check service at .*403"):
            started = CheckHub.start(tmp_path / "hub", ["ada"], service_port=squatter.server_port)
            started.stop()  # reached only when the start passed for up: nothing left running
    finally:
        squatter.shutdown()
        squatter.server_close()


# --- the grader and the service agree ----------------------------------------------------


def grader_outputs(
    course: Path, student: str, assignment: str
) -> dict[str, tuple[str, str | None]]:
    """grade id -> (stream text, error text) of the autograded notebook's test cells."""
    path = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    found = {}
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
        found[meta["grade_id"]] = (printed, errors[0] if errors else None)
    return found


RAISED = re.compile(r"(?:raised |: )(\w+(?:Error|Exception|Exit)\b: .*?)\.?$", re.M)


def same_verdicts(
    source: str, grader: tuple[str, str | None], served: tuple[str, str | None]
) -> bool:
    """The grader's and the service's outputs for one test cell say the same.

    The same text, except where the cases are random (function and class checks: see
    `masked`), and in two cases self-study words differently from the grader (today's
    messages, which the service keeps): the learner's function raised (self-study: "✗
    f(1.0) raised E: ...", then the hint; the grader: "✗ `f` could not be tested: f(1.0,):
    E: ..."): both must fail with the same error; the function or class is not defined
    (self-study: "✗ `Value` is not defined yet: run the cell that defines it.", said by
    the kernel before asking; the grader: "0/200 random graphs right ..."): both fail."""
    (printed, error), (mine_printed, mine_error) = grader, served
    drawn = "check_function" in source or "check_class" in source
    same = masked if drawn else (lambda t: t)
    if error is None and mine_error is not None and "check_class" in source:
        # nbgrader's partial credit: while grading, a class part with some operations
        # right prints its verdict and returns their points; a live check raises it
        return same(mine_error.removeprefix("AnswerMismatch: ")) in same(printed)
    if error is None or mine_error is None:
        return error is None and mine_error is None and same(printed) == same(mine_printed)
    if drawn and re.search(r"is not (a function|defined) yet: run the cell", mine_error):
        return error.startswith("AnswerMismatch: ✗")
    if drawn and "could not be tested" in error and " raised " in mine_error:
        theirs, ours = RAISED.search(error), RAISED.search(mine_error.splitlines()[0])
        return bool(theirs and ours and theirs[1].rstrip(".") == ours[1].rstrip("."))
    return same(error) == same(mine_error)


@pytest.mark.sandbox
@pytest.mark.nbgrader
def test_grader_and_service_agree_on_the_sample_class(
    students_env: StudentsEnvironment, hub: CheckHub, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # the class as `autograder grade` graded it once for the session (read, never written)
    course = shared_autograded_course(tmp_path_factory)
    compared, differ = 0, []
    for student in SAMPLE_STUDENTS:
        with kernel(students_env, hub, student) as k:
            for assignment in ASSIGNMENTS:
                path = course / "submitted" / student / assignment / f"{assignment}.ipynb"
                if not path.exists():
                    continue
                served = run_notebook(k, path)
                sources = dict(code_cells(path))
                graded_cells = grader_outputs(course, student, assignment)
                for grade_id, (printed, error) in graded_cells.items():
                    if ".check" not in sources.get(grade_id, ""):
                        continue
                    compared += 1
                    mine = served[grade_id]
                    if not same_verdicts(sources[grade_id], (printed, error), mine):
                        differ.append((f"{student}/{assignment}/{grade_id}", error, mine[1]))
    assert compared > 100
    assert differ == [], "\n\n".join(f"{w}\ngrader: {g}\nservice: {m}" for w, g, m in differ)


# --- the class hub's hook ------------------------------------------------------------------


def test_the_class_hub_config_adds_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make class` adds the service (on the port serve.py chose), its access for every
    server token and its address for kernels to the class hub's own config."""
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.checks.hub import ACCESS

    hub_dir = REPO / "deploy" / "hub"
    settings = {
        "CLASS_STATE": str(tmp_path), "CLASS_VENV_BIN": "/venv/bin", "CLASS_IP": "127.0.0.1",
        "CLASS_INSTRUCTOR": "teacher", "CLASS_COURSE_DIR": str(tmp_path), "CLASS_PORT": "8000",
        "CLASS_HUB_PORT": "8081", "CLASS_PROXY_API_PORT": "8001",
        "CLASS_STUDENT_BIN": "/students/bin", "CLASS_INSTRUCTOR_CONFIG": str(tmp_path / "jupyter"),
    }  # fmt: skip
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CLASS_CHECKS_PORT", "8123")
    config = PyFileConfigLoader("jupyterhub_config.py", path=str(hub_dir)).load_config()
    [service] = config.JupyterHub.services.get_value([])  # appended to JupyterHub's default
    assert service["name"] == "checks" and service["user"] == "teacher"
    assert service["url"] == "http://127.0.0.1:8123"
    assert service["command"][:1] == ["/venv/bin/python"]
    assert service["command"][-2:] == ["--course-dir", str(tmp_path)]  # the course's numbers
    roles = config.JupyterHub.load_roles.get_value([])
    assert {"name": "user", "scopes": ["self", ACCESS]} in roles
    assert ACCESS in config.Spawner.server_token_scopes
    url = config.Spawner.environment["AUTOGRADER_CHECKS_URL"]
    assert url == "http://127.0.0.1:8123/services/checks/"
    assert config.Spawner.environment["PATH"].startswith("/students/bin")  # their own env


@pytest.mark.processes
def test_practice_numbers_are_the_services(hub: CheckHub) -> None:
    """Practice numbers come sealed from the service: checked against them when sent back
    unchanged, refused when changed or sent by someone else."""
    token = hub.tokens["mallory"]
    drawn = hub.ask("practice", {"exercise": NEURON}, token)
    g = drawn["givens"]
    cells = ['x, w, b, y = exercise.given("x", "w", "b", "y")', "h = w * x + b"]
    body = {"exercise": NEURON, "names": ["h"], "cells": cells, "practice": drawn}
    [verdict] = hub.ask("check", body, token)["verdicts"]
    assert verdict["passed"], verdict
    changed = {**drawn, "givens": {**g, "x": g["x"] + 1}}
    for who, practice in [("mallory", changed), ("ada", drawn)]:
        with pytest.raises(urllib.error.HTTPError) as refused:
            hub.ask("check", {**body, "practice": practice}, hub.tokens[who])
        assert refused.value.code == 400
        assert "not drawn by the check service for you" in json.loads(refused.value.read())["error"]


# --- whose token, and judges that die ---------------------------------------------------


@pytest.mark.processes
def test_a_token_the_hub_does_not_know_is_refused(hub: CheckHub) -> None:
    for _ in range(2):  # the refusal is remembered as a refusal, nothing else
        with pytest.raises(urllib.error.HTTPError) as refused:
            hub.ask("exercise", {"exercise": NEURON}, "not-a-token", url=hub.direct_checks_url)
        assert refused.value.code == 403
        assert "does not know this token" in json.loads(refused.value.read())["error"]


@pytest.mark.processes
def test_a_judge_that_dies_is_replaced(hub: CheckHub) -> None:
    """Every judge killed: their checks get "no judge" (503), never a verdict, and the
    service answers again once they are replaced."""
    [service] = [p for p in child_processes(hub.process.pid) if b"checks.server" in p[1]]
    judges = [pid for pid, _ in child_processes(service[0])]
    assert judges
    for pid in judges:
        os.kill(pid, signal.SIGKILL)
    statuses = []
    body = {"exercise": NEURON, "names": ["h"], "cells": ["h = 1.0"]}
    for _ in range(len(judges) + 1):
        try:
            hub.ask("check", body, hub.tokens["mallory"], url=hub.direct_checks_url)
            statuses.append(200)
        except urllib.error.HTTPError as error:
            statuses.append(error.code)
    assert set(statuses[:-1]) <= {200, 503} and statuses[-1] == 200, statuses
    replacements = [pid for pid, _ in child_processes(service[0])]
    assert replacements and not set(judges) & set(replacements)
    # forked while the service holds its listening socket and learners' connections:
    # a replacement keeps none of them, only the channel to the service
    for pid in replacements:
        sockets = [
            fd
            for fd, target in process_tree.descriptors(pid).items()
            if target.startswith("socket:")
        ]
        assert len(sockets) == 1, (pid, sockets)


def child_processes(parent: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of the processes whose parent is `parent` (from /proc)."""
    found = []
    for pid, its_parent in process_tree.parents().items():
        if its_parent == parent:
            with contextlib.suppress(OSError):
                found.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
    return found
