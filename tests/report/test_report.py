"""`autograder report` on the sample class, graded for real by `autograder grade`.

The expected counts come from the sample class's profiles (instructor/sample_class/
README.md, the slips stated in tools/make_sample_class.py) and its answer key
(expected_grades.csv), not from the report code: in 03_a_neuron_by_hand ada and cyd are
right everywhere; fay wrote plain numbers, which earn nothing ("a number without its
arithmetic") except where the branches fix the value (da_dh, dh_db); ben (factor 2 dropped)
and eve (autograd) miss dL_da, dL_dh, dL_dw and dL_db; dee submits the release
untouched. fay did not submit 06. (gus, whose right
answers depend on numeric coincidences, is left out.)
"""

from __future__ import annotations

import ast
import base64
import csv
import dataclasses
import html
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.sample_class import expected_scores, make_course, submit_sample_class
from autograder.core.givens import PUBLIC
from autograder.diagnosis import kinds
from autograder.diagnosis.byhand import read_hand_answers
from autograder.diagnosis.normal_form import normal_form
from autograder.grading.runner import Grader
from autograder.grading.trusted import givens_for
from autograder.report import NO_DIAGNOSIS, build, render_html, write_csvs
from autograder.report.gather import Slip, rank_misconceptions

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

A03 = "03_a_neuron_by_hand"
A06 = "06_one_backward_every_parameter"
UNRELEASED = "01_what_a_gradient_is"
STUDENTS = ["ada", "ben", "cyd", "dee", "eve", "fay"]
CHAIN = ["dL_da", "dL_dh", "dL_dw", "dL_db"]  # ben and eve wrong, for different reasons
LOCAL = ["h", "a", "L", "da_dh", "dh_dw", "dh_db"]  # dee wrong; fay's numbers where not FIXED
FIXED = ["da_dh", "dh_db"]  # the open ReLU fixes them: fay's plain numbers count there
WRITTEN = "why_dw_and_db_differ"
REPO = Path(__file__).resolve().parents[2]


def max_points(assignment: str) -> float:
    """The assignment's maximum score: the points of the instructor's graded cells."""
    notebook = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", 4)
    meta = [cell.metadata.get("nbgrader", {}) for cell in notebook.cells]
    return float(sum(m.get("points", 0) for m in meta if m.get("grade")))


def autograder(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "autograder"), *map(str, args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=os.environ)


def graded_sample_class(root: Path) -> Path:
    """The sample class (gus left out) handed in 03 and 06 and graded by `autograder grade`;
    01 is in the gradebook too (as `make assign` records it) but neither released nor
    handed in. The course has its own exchange, so no class on this machine counts."""
    exchange = root / "exchange"
    exchange.mkdir(parents=True)
    config = f"c.Exchange.root = {str(exchange)!r}\n"
    course = make_course(root / "course", [A03, A06, UNRELEASED], extra_config=config)
    submit_sample_class(course, [A03, A06], STUDENTS)
    nothing = autograder("report", cwd=course)
    assert nothing.returncode == 1 and "nothing is graded" in nothing.stderr
    outcomes = list(Grader(course, jobs=2).run())
    assert [o.status for o in outcomes] == ["graded"] * 11, [o.reasons for o in outcomes]
    return course


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return graded_sample_class(tmp_path_factory.mktemp("report"))


def test_share_right_per_part(course: Path) -> None:
    parts = {p.name: p for p in build(course, A03).parts}
    assert sorted(parts) == sorted(f"correct_{n}" for n in CHAIN + LOCAL) + [WRITTEN]
    for name in LOCAL:
        right = 5 if name in FIXED else 4
        assert (parts[f"correct_{name}"].submitted, parts[f"correct_{name}"].right) == (6, right)
    for name in CHAIN:
        assert (parts[f"correct_{name}"].submitted, parts[f"correct_{name}"].right) == (6, 2)
    written = parts[WRITTEN]  # five answered it, to be graded by hand; dee left the stub
    assert (written.submitted, written.right, written.ungraded) == (6, 0, 5)


def test_mistakes_by_kind_with_counts_and_examples(course: Path) -> None:
    parts = {p.name: p for p in build(course, A03).parts}
    # dee's untouched release: one kind, the same on all ten code parts
    dee_kinds = {m.kind for n in FIXED for m in parts[f"correct_{n}"].mistakes}
    assert len(dee_kinds) == 1
    for name in LOCAL:
        found = sorted((m.kind, m.students) for m in parts[f"correct_{name}"].mistakes)
        expected = [(next(iter(dee_kinds)), ["dee"])]
        if name not in FIXED:  # fay's plain number: counted apart from right answers
            expected = sorted([*expected, ("no_arithmetic", ["fay"])])
        assert found == expected
        assert parts[f"correct_{name}"].follow_ons == []
    # ben's dropped 2 and eve's autograd are two further kinds on dL_da, one learner each
    first = parts["correct_dL_da"].mistakes
    assert sorted(m.count for m in first) == [1, 1, 1, 1]
    assert len({m.kind for m in first}) == 4 and dee_kinds < {m.kind for m in first}
    assert "no_arithmetic" in {m.kind for m in first}
    # ben's later chain parts are right from his own dL_da: follow-ons, counted apart
    for name in CHAIN[1:]:
        mistakes = parts[f"correct_{name}"].mistakes
        assert sorted(s for m in mistakes for s in m.students) == ["dee", "eve", "fay"]
        assert parts[f"correct_{name}"].follow_ons == ["ben"]
    # ben wrote dL_da = a - y: the report shows that formula, not his own number
    given = givens_for(A03, "ben", PUBLIC)  # the sample class is on the public seed
    a = max(given["w"] * given["x"] + given["b"], 0.0)
    (bens,) = [m for m in first if m.students == ["ben"]]
    assert (bens.example, bens.formulas) == ("a - y", [("a - y", 1)])
    assert f"{a - given['y']:.1f}" not in bens.example
    assert parts[WRITTEN].mistakes == []


def test_without_stored_diagnoses_every_wrong_part_still_counts(
    course: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    shutil.rmtree(copy / ".autograder" / "diagnoses")
    parts = {p.name: p for p in build(copy, A03).parts}
    for name in CHAIN:
        assert [(m.kind, m.count) for m in parts[f"correct_{name}"].mistakes] == [(NO_DIAGNOSIS, 4)]


def test_course_progress_per_student(course: Path) -> None:
    expected = expected_scores()
    report = build(course)
    rows = {row.student: row for row in report.progress}
    assert sorted(rows) == STUDENTS
    for student in STUDENTS:
        want = expected[(student, A03)] + expected[(student, A06)]
        assert rows[student].total == want
        assert rows[student].max_total == max_points(A03) + max_points(A06)
    assert rows["fay"].scores[A06] is None  # not submitted
    assert rows["ada"].scores == {A03: expected[("ada", A03)], A06: expected[("ada", A06)]}


def test_command_writes_html_with_plots_and_csv(course: Path) -> None:
    result = autograder("report", A03, cwd=course)
    assert result.returncode == 0, result.stderr
    out = course / "reports"
    page = (out / f"{A03}.html").read_text()
    assert f"<h1>Class report: backward-course, {A03}</h1>" in page  # the course's id
    images = page.count("src='data:image/png;base64,")
    assert images == 3  # parts, misconceptions, progress
    assert page.count("<img alt='") == 3
    first = page.split("src='data:image/png;base64,")[1].split("'")[0]
    assert base64.b64decode(first).startswith(b"\x89PNG")
    with open(out / f"{A03}.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    dl_da = [r for r in rows if r["part"] == "correct_dL_da"]
    assert len(dl_da) == 4 and {r["right"] for r in dl_da} == {"2"}
    # root causes: dee on all ten code parts, eve on the four chain parts, ben on dL_da,
    # fay's plain numbers on the eight parts whose value follows the givens;
    # ben's three follow-ons apart
    assert sum(int(r["mistakes"]) for r in rows) == 10 + 4 + 1 + 8
    follow_ons = {r["part"]: int(r["follow_ons"]) for r in rows}
    assert sum(follow_ons.values()) == 3
    with open(out / f"{A03}_students.csv", newline="") as handle:
        slips = [r for r in csv.DictReader(handle) if r["student"] == "ben"]
    assert [(r["part"], r["cause"], r["written"]) for r in slips] == [
        ("Part D: dL/da", "root", "a - y"),
        ("Part F: dL/dh", "follow-on", "dL_da * da_dh"),
        ("Part I: dL/dw", "follow-on", "dL_dh * dh_dw"),
        ("Part J: dL/db", "follow-on", "dL_dh * dh_db"),
    ]
    with open(out / f"{A03}_progress.csv", newline="") as handle:
        progress = {r["student"]: r for r in csv.DictReader(handle)}
    expected = expected_scores()
    assert progress["fay"][A06] == ""
    # progress spans the course: ben's total is his 03 and his 06
    assert float(progress["ben"]["total"]) == expected[("ben", A03)] + expected[("ben", A06)]
    unknown = autograder("report", "99_nope", cwd=course)
    assert unknown.returncode == 2 and "not in the gradebook" in unknown.stderr


def test_csvs_are_inert_in_spreadsheets(course: Path, tmp_path: Path) -> None:
    """The report of the graded class with a sign mistake's formula and a hostile student
    name written in: every CSV cell a spreadsheet would run starts with an apostrophe;
    scores stay numbers."""
    report = build(course, A03)
    bens = report.slips["ben"]
    bens[0] = dataclasses.replace(bens[0], written="-2 * (a - y)")
    report.progress[0] = dataclasses.replace(report.progress[0], student="=HYPERLINK(1)")
    written = write_csvs(report, tmp_path)
    cells = [cell for path in written for row in csv.reader(path.open(newline="")) for cell in row]
    assert "'-2 * (a - y)" in cells and "'=HYPERLINK(1)" in cells
    runnable = [c for c in cells if c[:1] in "=+-@\t\r" and c and not c[1:2].isdigit()]
    assert runnable == []
    with open(tmp_path / f"{A03}_progress.csv", newline="") as handle:
        scores = [row["total"] for row in csv.DictReader(handle)]
    assert all(float(score) >= 0 for score in scores)


def test_lateness_against_the_gradebooks_due_date(course: Path) -> None:
    """The sample class handed in at 2026-03-16 17:30 UTC (timestamp.txt, as collected):
    with a due date 90 minutes earlier, the report says each one late, by how much."""
    import datetime

    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    from autograder.nbgrader_plugins.lateness import late_text

    url = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(url, "backward-course") as gb:
        gb.update_or_create_assignment(A03, duedate=datetime.datetime(2026, 3, 16, 16, 0))
    try:
        rows = {row.student: row for row in build(course).progress}
        assert rows["ada"].late == {A03: 5400.0}
        assert rows["ada"].late_note == f"{A03} (late 1 h 30 min)"
        result = autograder("report", A03, cwd=course)
        assert result.returncode == 0, result.stderr
        with open(course / "reports" / f"{A03}_progress.csv", newline="") as handle:
            progress = {r["student"]: r for r in csv.DictReader(handle)}
        stamp = (REPO / "instructor" / "sample_class" / "ben" / A03 / "timestamp.txt").read_text()
        ben_late = parse_utc(stamp) - datetime.datetime(2026, 3, 16, 16, 0)
        assert progress["ben"]["late"] == f"{A03} (late {late_text(ben_late.total_seconds())})"
        assert "late 1 h 30 min" in (course / "reports" / f"{A03}.html").read_text()
    finally:
        with Gradebook(url, "backward-course") as gb:
            gb.update_or_create_assignment(A03, duedate=None)
    assert build(course).progress[0].late == {}


def test_only_released_assignments_count(course: Path) -> None:
    """01 is in the gradebook but neither released nor handed in: no zeros, no 0/0 parts;
    once in the exchange's outbound folder, it counts."""
    report = build(course)
    assert report.assignments == [A03, A06] and report.unreleased == [UNRELEASED]
    assert {p.assignment for p in report.parts} == {A03, A06}
    assert all(UNRELEASED not in row.scores for row in report.progress)
    result = autograder("report", cwd=course)
    assert result.returncode == 0, result.stderr
    page = (course / "reports" / "course.html").read_text()
    assert f"Not released, not counted: {UNRELEASED}" in page
    assert "0/0" not in page
    outbound = course.parent / "exchange" / "backward-course" / "outbound" / UNRELEASED
    outbound.mkdir(parents=True)
    try:
        released = build(course)
        assert released.assignments == [UNRELEASED, A03, A06] and released.unreleased == []
        assert all(row.scores[UNRELEASED] is None for row in released.progress)
    finally:
        shutil.rmtree(outbound)


def test_parts_by_label_and_kinds_in_plain_words(course: Path) -> None:
    """The learner's terms, never a cell id or an internal code."""
    report = build(course)
    labels = {(p.assignment, p.name): p.label for p in report.parts}
    assert labels[(A03, "correct_dL_da")] == "03 Part D: dL/da"
    assert labels[(A06, "correct_dL_dy")] == "06 Part C: dL/dy"
    assert labels[(A03, WRITTEN)] == "03 Part K: written answer"
    assert {p.label for p in build(course, A03).parts} >= {"Part D: dL/da", "Part A: h"}
    page = render_html(report)
    codes = {k for p in report.parts for m in p.mistakes for k in (m.kind,)} | {"follow_on"}
    codes_with_underscores = {c for c in codes if "_" in c}
    assert {"slope_missing", "follow_on"} <= codes_with_underscores
    for hidden in [*codes_with_underscores, "correct_", "unanswered"]:
        assert hidden not in page, hidden
    for kind in codes:
        assert html.escape(kinds.plain(kind)) in page or kind == "follow_on"


def _reasons_named_in(tree: ast.AST) -> Iterator[str]:
    """The reasons a feedback module names: the third argument of `Verdict(...)`, the second
    of `_Try(...)`, what `reason = ...` assigns, the first item of a returned pair."""
    for node in ast.walk(tree):
        picked: list[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            where = {"Verdict": 2, "_Try": 1}.get(node.func.id)
            if where is not None and len(node.args) > where:
                picked.append(node.args[where])
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "reason" for t in node.targets
        ):
            keys = {id(k) for d in ast.walk(node.value) if isinstance(d, ast.Dict) for k in d.keys}
            picked += [n for n in ast.walk(node.value) if id(n) not in keys]  # values, not keys
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            picked.append(node.value.elts[0])
        for item in picked:
            text = item.value if isinstance(item, ast.Constant) else None
            if isinstance(text, str) and text.isidentifier() and text.islower():
                yield text


def test_every_kind_the_diagnoses_give_has_plain_words() -> None:
    """Kinds from the corpus of realistic mistakes, the specs' known mistakes, the formula
    edits and the answer forms: each has its words in `feedback.kinds`."""
    import inspect

    from autograder.diagnosis import answer_form, diagnose, formula_edits, judge
    from autograder.specs import SPECS
    from evaluation.corpus import CORPUS

    found = {entry[3] for entry in CORPUS}
    found |= {reason for spec in SPECS.values() for p in spec.parts for reason, _, _ in p.mistakes}
    for module in (answer_form, diagnose, formula_edits, judge):
        found |= set(_reasons_named_in(ast.parse(inspect.getsource(module))))
    found |= {"known_mistake", "not_run", "ambiguous", "follow_on"}
    found -= {"match"}  # a right answer
    assert {"sum_for_product", "relu_forgotten", "gate_shut", "tensor"} <= found
    missing = sorted(k for k in found if k not in kinds.WORDS)
    assert not missing, missing
    assert all("_" not in words for words in kinds.WORDS.values())


def test_root_causes_apart_from_follow_ons(course: Path) -> None:
    report = build(course)
    ben = [(s.part, s.kind, s.written) for s in report.slips["ben"]]
    assert [kinds.group(kind) for _, kind, _ in ben] == ["concept", "concept"]
    assert [(part, written) for part, _, written in ben] == [
        ("03 Part D: dL/da", "a - y"),
        ("06 Part C: dL/dy", "2 * (target - y_value)"),
    ]
    assert len(report.follow_ons["ben"]) == 5  # 03: dL/dh, dL/dw, dL/db; 06: dL/dw, dL/db
    assert {s.kind for s in report.follow_ons["ben"]} == {"follow_on"}
    # the misconceptions are ben's two root causes, never a follow-on or a blank answer
    assert sorted((m.kind, tuple(m.students)) for m in report.misconceptions) == sorted(
        (kind, ("ben",)) for _, kind, _ in ben
    )
    assert "03 Part D: dL/da: a - y" in [m.example for m in report.misconceptions]
    assert {kinds.group(s.kind) for s in report.slips["dee"]} == {"form"}
    assert len(report.slips["dee"]) == 20 and "dee" not in report.follow_ons


def test_misconceptions_ranked_by_students() -> None:
    """More students first; a kind made often by one student ranks below one made by many;
    follow-ons and answers in no judgeable form are never misconceptions."""
    slips = [Slip(f"s{i}", A03, "Part D: dL/da", "sign", "2 * (y - a)", True) for i in range(3)]
    slips += [Slip("s9", A03, f"Part {p}", "slope_missing", "a - y", True) for p in "DFIJ"]
    slips += [Slip(f"s{i}", A03, "Part F: dL/dh", "follow_on", "x", True) for i in range(9)]
    slips += [Slip(f"s{i}", A03, "Part A: h", "unanswered", "", False) for i in range(9)]
    ranked = rank_misconceptions(slips)
    assert [(m.kind, len(m.students)) for m in ranked] == [("sign", 3), ("slope_missing", 1)]
    assert ranked[0].example == "Part D: dL/da: 2 * (y - a)"
    assert ranked[1].parts == ["Part D", "Part F", "Part I", "Part J"]
    # a classic bug of one part's code is no misconception of another part's
    bugs = [Slip(s, A03, f"Part {p}: Value", "known_mistake", f"bug {p}", False) for s, p in
            [("s1", "C"), ("s2", "C"), ("s3", "D")]]  # fmt: skip
    ranked = rank_misconceptions(bugs + [Slip("s4", A03, "Part D: dL/da", "sign", "8.5", False)])
    assert [(m.kind, m.parts, m.example) for m in ranked] == [
        ("known_mistake", ["Part C: Value"], "Part C: Value: bug C"),
        ("known_mistake", ["Part D: Value"], "Part D: Value: bug D"),
        ("sign", ["Part D: dL/da"], ""),  # the learner's own number is no example
    ]


def test_one_mistake_in_several_structures_is_one_misconception() -> None:
    """The same kind of mistake in students' different structures (a class with a secret:
    each student's exercise 01 has its own bowl) is counted once, the structures listed
    with how many students made it in each; the page names them."""
    from autograder.report.gather import ClassReport

    bowl = {"s0": "the loss y = x²/2", "s1": "the loss y = 3x²/2", "s2": "the loss y = x²/2"}
    slips = [Slip(s, UNRELEASED, "Part C: x after one step", "sign", f"x + {i} * x", True, b)
             for i, (s, b) in enumerate(bowl.items())]  # fmt: skip
    slips.append(Slip("s0", UNRELEASED, "Part A: y at the start", "sign", "x**2", True, bowl["s0"]))
    [sign] = rank_misconceptions(slips)
    assert sign.students == ["s0", "s1", "s2"]
    assert sign.structures == [("the loss y = x²/2", 2), ("the loss y = 3x²/2", 1)]
    page = render_html(ClassReport(UNRELEASED, [], [], [], [sign]))
    assert "in 2 structures: the loss y = x²/2 (2 students); the loss y = 3x²/2 (1 student)" in (
        html.unescape(page)
    )
    one = [dataclasses.replace(s, structure="") for s in slips]  # an exercise of one structure
    assert rank_misconceptions(one)[0].structures == []
    assert "structures" not in render_html(
        ClassReport(UNRELEASED, [], [], [], rank_misconceptions(one))
    )


@pytest.mark.parametrize(
    ("cell", "formula"),
    [
        ("slope = x * 2", "2 * x"),
        ("slope = 2*x", "2 * x"),
        ("slope = 2 * 3.7", "2 * x"),  # the learner's own x, copied as a number
        ("d = x - y\nslope = d * 2", "2 * (x - y)"),  # a helper line, inlined
        ("slope = b + w * x", "b + w * x"),
        ("slope = w * x + b", "b + w * x"),
        ("slope = 7.4", None),  # a bare number: the learner's own, not comparable
        ("slope = x.grad", None),
    ],
)
def test_formulas_in_the_given_names(cell: str, formula: str | None) -> None:
    givens = {"x": 3.7, "y": 1.2, "w": -0.8, "b": 0.5}
    cells = ['x, y, w, b = exercise.given("x", "y", "w", "b")', cell]
    answers = read_hand_answers(cells, givens)
    assert normal_form("slope", answers, givens, keep=("slope",)) == formula
