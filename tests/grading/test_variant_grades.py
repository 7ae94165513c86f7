"""In a class with a course secret, each student's exercise has a structure of their own
(issue 27): `nbgrader autograde` (the student's kernel judging) and `autograder grade` (the
trusted grader) give the same grades, each student's own right formulas earn every point,
and the public solution's formulas, copied, earn only what does not depend on the
structure (at most a third of the formula parts' points: 04's dead ReLU keeps a = 0,
da/dh = 0, dL/dh = 0 and the LeakyReLU's slope alike in every structure)."""

from __future__ import annotations

import csv
import html
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from courses import make_course, site_where
from nbgrader_course import AUTOGRADE_SEED, CACHE_ROOT, PACKAGE, disk_cached, nbgrader_run_key

from autograder.core.givens import (
    COURSE_ID,
    Site,
    read_secret,
)
from autograder.core.spec import CODE_KINDS
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.fresh_points import NUMERIC
from autograder.diagnosis.judge import JudgeContext, judge
from autograder.specs import SPECS, exercise_spec, learner_givens, learner_problem, problem_words

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
VARIED = [name for name, spec in SPECS.items() if spec.variants]
ONE_STRUCTURE = [name for name, spec in SPECS.items() if not spec.variants][:1]
STUDENTS = [f"v{i:02d}" for i in range(8)]


def run(args: list[str], course: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, cwd=course, env=env, capture_output=True, text=True, check=False)


def _hand_in(course: Path, student: str, name: str, problem: str) -> None:
    """The solution's formulas (ada's sample notebook, every part right in the lesson) with,
    for `problem` other than the lesson's, the student's own model answers written in (the
    code parts, the same in every structure, as ada wrote them)."""
    sample = REPO / "instructor" / "sample_class" / "ada" / name / f"{name}.ipynb"
    notebook = nbformat.read(sample, as_version=4)
    spec = exercise_spec(problem)
    if problem != name:
        for cell in notebook.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in spec.part_names and spec.part(grade_id).kind not in CODE_KINDS:
                cell.source = f"{spec.part(grade_id).stub}\n{spec.part(grade_id).code}"
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{name}.ipynb")


def _expected(
    name: str, problem: str, student: str, site: Site, kinds: tuple[str, ...] | None = None
) -> float:
    """The points the grader's judge gives the hand-in's parts (of `kinds`: all by default),
    in process; its code parts are ada's, right in every structure (the graders run them:
    ada's class in 09 too)."""
    sample = REPO / "instructor" / "sample_class" / "ada" / name / f"{name}.ipynb"
    sources = [c.source for c in nbformat.read(sample, as_version=4).cells if c.cell_type == "code"]
    givens = learner_givens(name, student, site)
    context = JudgeContext(problem, givens, read_hand_answers(sources, givens))
    parts = [p for p in exercise_spec(problem).parts if kinds is None or p.kind in kinds]
    code = sum(p.points for p in parts if p.kind in CODE_KINDS)
    judged = [p for p in parts if p.kind not in CODE_KINDS]
    return float(code + sum(p.points for p in judged if judge(problem, p.name, context).passed))


def _grades(course: Path) -> dict[tuple[str, str], float]:
    result = run([str(BIN / "nbgrader"), "export", "--to", str(course / "grades.csv")], course)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
    return {(row["student_id"], row["assignment"]): float(row["raw_score"]) for row in rows}


@dataclass
class GradedClass:
    """One class with a secret, handed in once and graded twice: `by_nbgrader` by
    `nbgrader autograde`, `by_autograder` (a copy) by `autograder grade`."""

    by_nbgrader: Path
    by_autograder: Path
    site: Site
    problems: dict[tuple[str, str], str]
    """(student, exercise) -> the student's problem."""


def _handed_in_and_graded_by_nbgrader(folder: Path) -> None:
    """The class handed in (`folder/other`, for `autograder grade`) and graded by nbgrader
    (`folder/course`): even students copy the public solution; odd ones write their own
    formulas; two students also hand in an exercise with one structure."""
    course = make_course(folder / "course", VARIED + ONE_STRUCTURE)
    problems = _problems(site_where(course, _copiers_draw_several_structures))
    for index, student in enumerate(STUDENTS):
        for name in VARIED:
            _hand_in(course, student, name, problems[student, name] if index % 2 else name)
        if index < 2:
            for name in ONE_STRUCTURE:
                _hand_in(course, student, name, name)
    shutil.copytree(course, folder / "other", symlinks=True)
    for command in (["autograde", "*"], ["generate_feedback", "*"]):
        nbgrader = run([str(BIN / "nbgrader"), *command, "--force"], course)
        assert nbgrader.returncode == 0, nbgrader.stderr[-3000:]


def _problems(site: Site) -> dict[tuple[str, str], str]:
    return {(s, n): learner_problem(n, s, site) for s in STUDENTS for n in SPECS}


def _copiers_draw_several_structures(site: Site) -> bool:
    """Whether the copiers (even students) draw several structures of each varied exercise."""
    problems = _problems(site)
    return all(len({problems[s, n] for s in STUDENTS[::2]}) > 1 for n in VARIED)


# What nbgrader's run of this class depends on besides the repository's config and the
# package files its processes read (nbgrader_run_key): the solutions, ada's notebooks
# (every hand-in starts from one), this file (who hands in what) and the course template's
# copying.
NBGRADER_INPUTS = [
    REPO / "solutions",
    REPO / "instructor" / "sample_class" / "ada",
    Path(__file__).resolve(),
    REPO / "tests" / "courses.py",
]

BUILD = """import sys
from pathlib import Path
sys.path[:0] = sys.argv[2:]
from test_variant_grades import _handed_in_and_graded_by_nbgrader
_handed_in_and_graded_by_nbgrader(Path(sys.argv[1]))
"""


def _built_in_a_process_of_its_own(folder: Path) -> None:
    """`_handed_in_and_graded_by_nbgrader(folder)` in a new Python process: the hand-ins
    are written from the specs there, so what it reads of the package is recorded with
    what nbgrader's processes read (`disk_cached`'s `code`); this process, which imported
    the package long ago, would leave it out."""
    import stall_guard

    folders = [str(REPO / "tests"), str(Path(__file__).resolve().parent)]
    command = [sys.executable, "-c", BUILD, str(folder), *folders]
    done = stall_guard.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the variant class's build failed:\n{done.stderr[-4000:]}")


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> GradedClass:
    """nbgrader's side is kept on disk under the hash of its inputs and of the package
    files its build read (an earlier session's run is copied, as nbgrader's reference
    run is: tests/nbgrader_course.py); `autograder grade`, the grader under test, grades
    its copy every session."""
    root = tmp_path_factory.mktemp("variants") / "class"
    key = nbgrader_run_key(NBGRADER_INPUTS)
    cache = CACHE_ROOT / "nbgrader-variants"
    disk_cached(cache, key, root, _built_in_a_process_of_its_own, code=PACKAGE)
    course, other = root / "course", root / "other"
    site = Site(COURSE_ID, read_secret(course))
    graded = run([str(BIN / "autograder"), "grade", "--quiet", "--seed", AUTOGRADE_SEED], other)
    assert graded.returncode == 0, graded.stderr[-3000:]
    feedback = run([str(BIN / "nbgrader"), "generate_feedback", "*", "--force"], other)
    assert feedback.returncode == 0, feedback.stderr[-3000:]
    return GradedClass(course, other, site, _problems(site))


def test_both_graders_agree_on_each_students_own_structure(graded: GradedClass) -> None:
    problems = graded.problems
    for name in VARIED:  # a class never gets the lesson's structure, and gets several
        drawn = {problems[s, name] for s in STUDENTS}
        assert name not in drawn and len(drawn) > 1
    by_nbgrader, by_autograder = _grades(graded.by_nbgrader), _grades(graded.by_autograder)
    assert by_nbgrader == by_autograder
    for index, student in enumerate(STUDENTS):
        for name in VARIED:
            every = float(sum(p.points for p in SPECS[name].parts))  # written: the teacher's
            got = by_autograder[student, name]
            if index % 2:  # own formulas: every part
                assert got == every, (student, name)
            else:  # copied: what the judge gives the lesson's formulas, far from all
                expected = _expected(name, problems[student, name], student, graded.site)
                assert got == expected, (student, name, got)
                # of the formula parts, at most a third (the facts and code parts are the
                # same in every structure: a copy earns those)
                formulas = sum(p.points for p in SPECS[name].parts if p.kind in NUMERIC)
                copied = _expected(name, problems[student, name], student, graded.site, NUMERIC)
                assert copied <= formulas / 3, (student, name, copied)


def _given_output(course: Path, student: str, name: str) -> str:
    """What the graded notebook's Given cell printed (what formgrader shows of it)."""
    path = course / "autograded" / student / name / f"{name}.ipynb"
    for cell in nbformat.read(path, as_version=4).cells:
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        if text.startswith("Numbers of "):
            return text
    raise AssertionError(f"{path} has no Given cell's output")


def _feedback_text(course: Path, student: str, name: str) -> str:
    page = (course / "feedback" / student / name / f"{name}.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_given_cell_states_each_students_structure_under_both_graders(
    graded: GradedClass,
) -> None:
    """The sandbox's stand-in prints the line the real package prints under nbgrader."""
    for course in (graded.by_nbgrader, graded.by_autograder):
        for student in STUDENTS:
            for name in VARIED:
                words = problem_words(graded.problems[student, name])
                assert words.startswith("Your problem: ") and "(the lesson's is" in words
                lines = _given_output(course, student, name).splitlines()
                assert lines[1:] == [words], (course.name, student, name, lines)
            for name in ONE_STRUCTURE[: 1 if student in STUDENTS[:2] else 0]:
                assert len(_given_output(course, student, name).splitlines()) == 1


def test_the_feedback_states_each_students_problem_above_the_diagnoses(
    graded: GradedClass,
) -> None:
    for course in (graded.by_nbgrader, graded.by_autograder):
        for student in STUDENTS:
            for name in VARIED:
                text = _feedback_text(course, student, name)
                words = problem_words(graded.problems[student, name])
                first = text.index(words)  # the page's own line, then the Given cell's
                assert text.count(words) == 2, (course.name, student, name)
                assert first < text.index("Numbers of ") < text.rindex("Grade cell:")
            for name in ONE_STRUCTURE[: 1 if student in STUDENTS[:2] else 0]:
                assert "Your problem" not in _feedback_text(course, student, name)
    copied = _feedback_text(graded.by_autograder, STUDENTS[0], VARIED[0])
    assert "is the answer for the lesson's problem" in copied  # the diagnosis it explains


def _structure(problem: str) -> str:
    structure = exercise_spec(problem).structure
    assert structure is not None
    return structure.words


def test_the_report_shows_each_students_structure_and_groups_a_mistake_across_them(
    graded: GradedClass,
) -> None:
    from autograder.report import build, render_html, write_csvs

    for name in VARIED:
        report = build(graded.by_autograder, name)
        assert report.structures == {
            s: {name: _structure(graded.problems[s, name])} for s in STUDENTS
        }
        page = render_html(report)
        for student in STUDENTS:
            assert f"structure: {html.escape(report.structures[student][name])}" in page
        # the copies: one mistake, the lesson's formula answered, whatever the structure
        copiers = [s for i, s in enumerate(STUDENTS) if i % 2 == 0]
        [lesson] = [m for m in report.misconceptions if m.kind == "lesson_structure"]
        assert lesson.students == copiers
        made_in = {_structure(graded.problems[s, name]) for s in copiers}
        assert len(made_in) > 1, "the copiers all drew one structure: the grouping is untested"
        assert sorted(words for words, _ in lesson.structures) == sorted(made_in)
        assert sum(n for _, n in lesson.structures) == len(copiers)
        for words, _ in lesson.structures:
            assert html.escape(words) in page
        slips = [s for student in copiers for s in report.slips[student]]
        assert {s.structure for s in slips} == made_in
        out = graded.by_autograder / "reports-test" / name
        out.mkdir(parents=True)
        progress = list(csv.DictReader(io.StringIO(write_csvs(report, out)[2].read_text())))
        shown = {row["student"]: row["structures"] for row in progress}
        for student in STUDENTS:
            assert shown[student] == f"{name}: {report.structures[student][name]}"
    for name in ONE_STRUCTURE:
        report = build(graded.by_autograder, name)
        assert report.structures == {}
        assert all(not m.structures for m in report.misconceptions)
        assert "structure: " not in render_html(report)


def _formgrader(course: Path, home: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    """`jupyter server` with nbgrader's formgrader in `course`: (process, URL, log)."""
    import secrets

    from ports import free_port

    port = free_port()
    token = secrets.token_hex(24)
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        **{f"JUPYTER_{d.upper()}_DIR": str(home / d) for d in ("config", "data", "runtime")},
        "IPYTHONDIR": str(home / "ipython"),
    }
    command = [
        str(BIN / "jupyter"), "server", "--no-browser", f"--ServerApp.root_dir={course}",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}", *(["--allow-root"] if os.getuid() == 0 else []),
    ]  # fmt: skip
    log = home / "server.log"
    with log.open("wb") as written:
        process = subprocess.Popen(command, cwd=course, env=env, stdout=written, stderr=written)
    return process, f"http://127.0.0.1:{port}/formgrader/submissions/{{}}/?token={token}", log


def test_formgrader_shows_each_students_structure(graded: GradedClass, tmp_path: Path) -> None:
    """Formgrader's own page of each submission (a real `jupyter server`), where the teacher
    grades: 'Structure: ...' on top for a varied exercise, nothing for one structure."""
    import urllib.error
    import urllib.request

    import process_tree
    import stall_guard
    from nbgrader.api import Gradebook

    from autograder.nbgrader_plugins.problem import problem_of

    course = graded.by_autograder
    handed_in = [(s, n) for s in STUDENTS for n in VARIED]
    handed_in += [(s, n) for s in STUDENTS[:2] for n in ONE_STRUCTURE]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        ids = {(s, n): gb.find_submission_notebook(n, n, s).id for s, n in handed_in}
    process, url, log = _formgrader(course, tmp_path)

    def page(key: tuple[str, str]) -> str:
        with urllib.request.urlopen(url.format(ids[key]), timeout=60) as response:
            body = response.read().decode("utf-8")
        return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))

    def up() -> bool:
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            page(handed_in[0])
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False
        return True

    try:
        stall_guard.wait_for_server(up, "jupyter server with formgrader", process, log)
        for student, name in handed_in:
            shown = page((student, name))
            line = problem_of(name, student, graded.site).teacher_line
            if name in VARIED:
                structure = _structure(graded.problems[student, name])
                assert line.startswith(f"Structure: {structure} (the lesson's is ")
                assert line in shown, (student, name, shown[:1500])
                assert shown.index(line) < shown.index("Numbers of ")
            else:
                assert line == "" and "Structure:" not in shown, (student, name)
    finally:
        process.terminate()  # the server stops its kernels (none here) and exits
        try:
            stall_guard.wait(
                process, "jupyter server, stopping", [stall_guard.work_below(process.pid)]
            )
        except stall_guard.Stalled:
            process_tree.end(process_tree.family(process.pid))
            process.wait()
