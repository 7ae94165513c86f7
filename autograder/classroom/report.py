"""`autograder report [ASSIGNMENT]`: what the class got right and wrong, from what was graded.

Reads the course's gradebook (every score nbgrader recorded, manual grades included) and
the diagnoses `autograder grade` stored beside it (`autograder.grading.diagnoses`), and writes,
under `reports/`:
- `<scope>.html`: one page with plots (PNG, embedded) and tables;
- `<scope>.csv`: per part (graded cell): submissions, right, share right, and each kind of
  mistake with its count and the learners' most common value;
- `<scope>_progress.csv`: per student, the score of every assignment and of the course.
`<scope>` is the assignment's name, or `course` for every assignment. Kinds are read as the
grader recorded them (no list of kinds lives here). A failed part with no stored diagnosis
(graded by `nbgrader autograde`, or a stale store) counts under "no diagnosis recorded".
"""

from __future__ import annotations

import base64
import csv
import html
import io
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.classroom.handin import late_text
from autograder.grading.diagnoses import read_diagnoses

NO_DIAGNOSIS = "no diagnosis recorded"
COURSE_SCOPE = "course"


@dataclass
class Mistake:
    """One kind of mistake on one part: how often, and the value learners wrote most."""

    kind: str
    count: int
    example: str


@dataclass
class Part:
    """One graded cell of one assignment, over the class."""

    assignment: str
    notebook: str
    name: str
    points: float
    submitted: int = 0
    right: int = 0
    ungraded: int = 0
    mistakes: list[Mistake] = field(default_factory=list)

    @property
    def share_right(self) -> float:
        return self.right / self.submitted if self.submitted else 0.0


@dataclass
class Progress:
    """One student's scores: assignment -> score (None: not submitted), and the maximum."""

    student: str
    scores: dict[str, float | None]
    max_scores: dict[str, float]
    late: dict[str, float] = field(default_factory=dict)  # assignment -> seconds late

    @property
    def late_note(self) -> str:
        """'03_a (late 1 h 05 min); ...' for the assignments handed in after the due date."""
        return "; ".join(f"{a} (late {late_text(s)})" for a, s in sorted(self.late.items()))

    @property
    def total(self) -> float:
        return sum(s for s in self.scores.values() if s is not None)

    @property
    def max_total(self) -> float:
        return sum(self.max_scores.values())

    @property
    def share(self) -> float:
        return self.total / self.max_total if self.max_total else 0.0


@dataclass
class ClassReport:
    scope: str
    parts: list[Part]
    progress: list[Progress]
    assignments: list[str]


class ReportError(Exception):
    """The report cannot be made; the message says why."""


class NothingGraded(ReportError):
    """The gradebook holds no graded submission in the report's scope."""


def _value_counts(
    state_dir: Path, assignment: str, student: str
) -> dict[tuple[str, str], list[dict[str, Any]]] | None:
    """(notebook, part) -> the failed checks stored for that submission (None: no store)."""
    stored = read_diagnoses(state_dir, assignment, student)
    if stored is None:
        return None
    failed: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for notebook, records in stored["notebooks"].items():
        for record in records:
            if not record["passed"]:
                failed[(notebook, record["part"])].append(record)
    return failed


def build(course_dir: Path, assignment: str | None = None) -> ClassReport:
    """Gather the report of one assignment (or the course) from the gradebook and store."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.grading.runner import STATE_DIR, load_config

    config = load_config(course_dir)
    coursedir = CourseDirectory(config=config)
    state_dir = course_dir / STATE_DIR
    parts: list[Part] = []
    kinds: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    values: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        known = sorted(a.name for a in gb.assignments)
        if assignment is not None and assignment not in known:
            raise ReportError(
                f"{assignment} is not in the gradebook; known: {', '.join(known) or 'none'}"
            )
        wanted = [assignment] if assignment else known
        students = sorted(s.id for s in gb.students)
        by_name: dict[tuple[str, str, str], Part] = {}
        max_scores: dict[str, float] = {}
        scores: dict[str, dict[str, float | None]] = {s: {} for s in students}
        late: dict[str, dict[str, float]] = defaultdict(dict)
        for name in known:
            record = gb.find_assignment(name)
            max_scores[name] = float(record.max_score)
            for submission in record.submissions:
                scores.setdefault(submission.student.id, {})[name] = float(submission.score)
                if submission.total_seconds_late > 0:  # from the arrival time (collect.py)
                    late[submission.student.id][name] = float(submission.total_seconds_late)
        for name in wanted:
            record = gb.find_assignment(name)
            for notebook in record.notebooks:
                for cell in notebook.grade_cells:
                    part = Part(name, notebook.name, cell.name, float(cell.max_score))
                    by_name[(name, notebook.name, cell.name)] = part
                    parts.append(part)
            for submission in record.submissions:
                failed = _value_counts(state_dir, name, submission.student.id)
                for sub_notebook in submission.notebooks:
                    for grade in sub_notebook.grades:
                        part = by_name[(name, sub_notebook.name, grade.name)]
                        part.submitted += 1
                        if grade.needs_manual_grade and grade.manual_score is None:
                            part.ungraded += 1
                            continue
                        if float(grade.score) >= float(grade.max_score):
                            part.right += 1
                            continue
                        checks = (failed or {}).get((sub_notebook.name, grade.name), [])
                        key = (name, sub_notebook.name, grade.name)
                        if not checks and grade.cell.cell_type == "code":
                            kinds[key][NO_DIAGNOSIS] += 1
                        for check in checks:
                            kinds[key][check["kind"]] += 1
                            shown = f"{check['quantity']} = {check['value']}"
                            values[(*key, check["kind"])][shown] += 1
    for part in parts:
        key = (part.assignment, part.notebook, part.name)
        part.mistakes = [
            Mistake(kind, count, _example(values.get((*key, kind))))
            for kind, count in sorted(kinds[key].items(), key=lambda item: (-item[1], item[0]))
        ]
    progress = [
        Progress(student, {a: scores[student].get(a) for a in known}, max_scores, late[student])
        for student in sorted(scores)
    ]
    return ClassReport(assignment or COURSE_SCOPE, parts, progress, known)


def _example(counter: Counter[str] | None) -> str:
    if not counter:
        return ""
    value, count = sorted(counter.items(), key=lambda item: (-item[1], item[0]))[0]
    return value if count == 1 else f"{value} ({count}×)"


# ------------------------------------------------------------------ output


def write_csvs(report: ClassReport, out: Path) -> tuple[Path, Path]:
    """`<scope>.csv` (parts and mistakes) and `<scope>_progress.csv`."""
    parts_csv = out / f"{report.scope}.csv"
    with parts_csv.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["assignment", "notebook", "part", "points", "submitted", "right", "share_right",
             "not_yet_graded", "mistake_kind", "mistakes", "example"]
        )  # fmt: skip
        for part in report.parts:
            share = f"{part.share_right:.3f}"
            head = [part.assignment, part.notebook, part.name, f"{part.points:g}",
                    part.submitted, part.right, share, part.ungraded]  # fmt: skip
            if not part.mistakes:
                writer.writerow([*head, "", 0, ""])
            for mistake in part.mistakes:
                writer.writerow([*head, mistake.kind, mistake.count, mistake.example])
    progress_csv = out / f"{report.scope}_progress.csv"
    with progress_csv.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *report.assignments, "total", "max_total", "share", "late"])
        for row in report.progress:
            cells = [
                "" if row.scores[a] is None else f"{row.scores[a]:g}" for a in report.assignments
            ]
            writer.writerow([row.student, *cells, f"{row.total:g}", f"{row.max_total:g}",
                             f"{row.share:.3f}", row.late_note])  # fmt: skip
    return parts_csv, progress_csv


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plots(report: ClassReport) -> dict[str, str]:
    """Base64 PNGs: share right per part, mistakes by kind, progress per student."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    parts = report.parts
    figure, axes = plt.subplots(figsize=(8, 0.28 * len(parts) + 1.2))
    labels = [
        p.name if report.scope != COURSE_SCOPE else f"{p.assignment[:2]} {p.name}" for p in parts
    ]
    axes.barh(range(len(parts)), [100 * p.share_right for p in parts], color="#4c9a5b")
    axes.set_yticks(range(len(parts)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of submissions right")
    axes.set_title("Share of the class right, per part")
    images["right"] = _png(figure)
    plt.close(figure)

    totals: Counter[str] = Counter()
    for part in parts:
        for mistake in part.mistakes:
            totals[mistake.kind] += mistake.count
    if totals:
        kinds = sorted(totals, key=lambda k: (-totals[k], k))
        figure, axes = plt.subplots(figsize=(8, 0.3 * len(kinds) + 1.2))
        axes.barh(range(len(kinds)), [totals[k] for k in kinds], color="#c0504d")
        axes.set_yticks(range(len(kinds)), kinds, fontsize=9)
        axes.invert_yaxis()
        axes.set_xlabel("mistakes (one per wrong answer)")
        axes.set_title("Mistakes by kind")
        images["mistakes"] = _png(figure)
        plt.close(figure)

    rows = report.progress
    figure, axes = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.2))
    axes.barh(range(len(rows)), [100 * r.share for r in rows], color="#4f81bd")
    axes.set_yticks(range(len(rows)), [r.student for r in rows], fontsize=9)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of the course's points")
    axes.set_title("Course progress per student")
    images["progress"] = _png(figure)
    plt.close(figure)
    return images


def render_html(report: ClassReport) -> str:
    """The report page (self-contained: plots embedded)."""
    e = html.escape
    images = plots(report)
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Class report: {e(report.scope)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;"
        "font-size:.9em;vertical-align:top}th{background:#eee}</style></head><body>",
        f"<h1>Class report: {e(report.scope)}</h1>",
    ]
    for key in ("right", "mistakes", "progress"):
        if key in images:
            out.append(f"<img alt='{key}' src='data:image/png;base64,{images[key]}'>")
    out.append("<h2>Parts</h2><table><tr><th>assignment</th><th>part</th><th>points</th>"
               "<th>right</th><th>mistakes: kind, count, most common value</th></tr>")  # fmt: skip
    for part in report.parts:
        mistakes = "<br>".join(
            f"{e(m.kind)}: {m.count}"
            + (f" — e.g. <code>{e(m.example)}</code>" if m.example else "")
            for m in part.mistakes
        )
        pending = f", {part.ungraded} to grade by hand" if part.ungraded else ""
        out.append(
            f"<tr><td>{e(part.assignment)}</td><td>{e(part.name)}</td><td>{part.points:g}</td>"
            f"<td>{part.right}/{part.submitted} ({100 * part.share_right:.0f}%){pending}</td>"
            f"<td>{mistakes}</td></tr>"
        )
    out.append("</table><h2>Progress</h2><table><tr><th>student</th>")
    out += [f"<th>{e(a[:2])}</th>" for a in report.assignments]
    out.append("<th>total</th></tr>")
    for row in report.progress:
        cells = "".join(
            "<td>—</td>"
            if row.scores[a] is None
            else f"<td>{row.scores[a]:g}"
            + (f" <em>late {e(late_text(row.late[a]))}</em>" if a in row.late else "")
            + "</td>"
            for a in report.assignments
        )
        out.append(
            f"<tr><td>{e(row.student)}</td>{cells}<td>{row.total:g}/{row.max_total:g} "
            f"({100 * row.share:.0f}%)</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out)


def write_report(course_dir: Path, assignment: str | None, out: Path) -> list[Path]:
    """Build and write the report; returns the files written."""
    report = build(course_dir, assignment)
    if not any(part.submitted for part in report.parts):
        raise NothingGraded("nothing is graded yet: run `autograder grade` first")
    out.mkdir(parents=True, exist_ok=True)
    page = out / f"{report.scope}.html"
    page.write_text(render_html(report))
    return [page, *write_csvs(report, out)]
