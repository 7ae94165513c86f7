"""The class report as one self-contained HTML page: what to re-teach first, then each part,
each student's mistakes and the course's progress; plots embedded, each with alt text that
says what it shows, and every number also in a table. Where an exercise varies per learner,
each student's structure, and the structures each mistake was made in."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from typing import Any

from autograder.diagnosis.kinds import group
from autograder.nbgrader_plugins.lateness import late_text
from autograder.report.gather import COURSE_SCOPE, ClassReport, Slip

e = html.escape
STYLE = (
    "body{font-family:sans-serif;max-width:64em;margin:2em auto;padding:0 1em;color:#111}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #999;padding:.2em .5em;font-size:.9em;vertical-align:top;"
    "text-align:left}th{background:#eee}caption{text-align:left;font-weight:bold;"
    "padding:.3em 0}code{background:#f3f3f3}figure{margin:1em 0}img{max-width:100%}"
    ".follow{color:#444}"
)


@dataclass(frozen=True)
class Plot:
    """One embedded PNG and the words that stand for it."""

    key: str
    png: str
    alt: str


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _bars(
    name: str,
    bars: list[tuple[str, float]],
    *,
    colour: str,
    xlabel: str,
    title: str,
    alt: str,
    percent: bool = False,
) -> Plot:
    """One horizontal bar per label, the first on top (counts, or percentages)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    labels = [label for label, _ in bars]
    figure, axes = plt.subplots(figsize=(8, 0.4 * len(labels) + 1.2))
    axes.barh(range(len(labels)), [value for _, value in bars], color=colour)
    axes.set_yticks(range(len(labels)), labels, fontsize=9)
    axes.invert_yaxis()
    if percent:
        axes.set_xlim(0, 100)
    else:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(xlabel)
    axes.set_title(title)
    plot = Plot(name, _png(figure), alt + ".")
    plt.close(figure)
    return plot


def plots(report: ClassReport) -> list[Plot]:
    """The part outcomes (right, root mistake, follow-on, other), the misconceptions
    ranked, and each student's share of the points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = []
    parts = [p for p in report.parts if p.submitted]
    if parts:
        figure, axes = plt.subplots(figsize=(8, 0.3 * len(parts) + 1.4))
        rows = range(len(parts))
        right = [p.right for p in parts]
        roots = [sum(m.count for m in p.mistakes) for p in parts]
        follow = [len(p.follow_ons) for p in parts]
        axes.barh(rows, right, color="#3b7d4a", label="right")
        axes.barh(rows, roots, left=right, color="#b03a2e", label="root mistake")
        starts = [a + b for a, b in zip(right, roots, strict=True)]
        axes.barh(rows, follow, left=starts, color="#e8a33d", label="follow-on", hatch="//")
        axes.set_yticks(list(rows), [p.label for p in parts], fontsize=8)
        axes.invert_yaxis()
        axes.set_xlabel("submissions")
        axes.legend(loc="lower right", fontsize=8)
        axes.set_title("Each part: right, root mistakes, follow-ons")
        worst = sorted(parts, key=lambda p: (p.share_right, p.label))[:3]
        alt = (
            f"Bar chart of {len(parts)} parts: for each, how many submissions were right, "
            "how many had a root mistake and how many a follow-on error. Fewest right: "
            + "; ".join(f"{p.label}, {p.right} of {p.submitted}" for p in worst)
            + ". The table of parts below gives every number."
        )
        found.append(Plot("parts", _png(figure), alt))
        plt.close(figure)
    top = report.misconceptions
    if top:
        found.append(
            _bars(
                "misconceptions",
                [(m.words, len(m.students)) for m in top],
                colour="#b03a2e",
                xlabel="students who made it (root causes only)",
                title="Misconceptions most worth re-teaching",
                alt="Bar chart of the misconceptions, most students first: "
                + "; ".join(
                    f"{m.words}, {len(m.students)} student{'s' * (len(m.students) != 1)}"
                    for m in top
                ),
            )
        )
    if report.progress:
        found.append(
            _bars(
                "progress",
                [(r.student, 100 * r.share) for r in report.progress],
                colour="#2f5f8f",
                xlabel="% of the points of the assignments counted",
                title="Progress per student",
                alt="Bar chart of each student's share of the points: "
                + "; ".join(f"{r.student} {100 * r.share:.0f}%" for r in report.progress),
                percent=True,
            )
        )
    return found


def _figure(plot: Plot) -> str:
    return (
        f"<figure><img alt='{e(plot.alt, quote=True)}' "
        f"src='data:image/png;base64,{plot.png}'></figure>"
    )


def structures_text(structures: list[tuple[str, int]]) -> str:
    """'in 2 structures: the loss y = x²/2 (2 students); the loss y = 3x²/2 (1 student)'."""
    if not structures:
        return ""
    each = "; ".join(f"{words} ({n} student{'s' * (n != 1)})" for words, n in structures)
    many = len(structures)
    return f"in {many} structure{'s' * (many != 1)}: {each}"


def _misconceptions(report: ClassReport) -> list[str]:
    if not report.misconceptions:
        return ["<p>No misconception named: every wrong answer was a follow-on, in no "
                "judgeable form, or unnamed (see the parts).</p>"]  # fmt: skip
    varied = any(m.structures for m in report.misconceptions)
    out = ["<table><caption>Misconceptions most worth re-teaching, most students first "
           "(root causes only; follow-ons are counted apart"
           + ("; one mistake made in students' different structures is counted once"
              if varied else "")
           + ")</caption><tr><th scope='col'>misconception</th><th scope='col'>students</th>"
           "<th scope='col'>parts</th>"
           + ("<th scope='col'>structures</th>" if varied else "")
           + "<th scope='col'>example</th></tr>"]  # fmt: skip
    for m in report.misconceptions:
        made_in = f"<td>{e(structures_text(m.structures))}</td>" if varied else ""
        out.append(
            f"<tr><td>{e(m.words)}</td><td>{len(m.students)}: {e(', '.join(m.students))}</td>"
            f"<td>{e('; '.join(m.parts))}</td>{made_in}<td>{_example(m.example)}</td></tr>"
        )
    return [*out, "</table>"]


def _example(text: str) -> str:
    if not text:
        return ""
    label, _, formula = text.rpartition(": ")
    return f"{e(label)}: <code>{e(formula)}</code>" if label else f"<code>{e(formula)}</code>"


def _parts(report: ClassReport) -> list[str]:
    out = ["<table><caption>Parts: right, root causes (with the formulas written, in the "
           "given names) and follow-ons</caption><tr><th scope='col'>part</th>"
           "<th scope='col'>points</th><th scope='col'>right</th>"
           "<th scope='col'>root causes</th><th scope='col'>follow-ons</th></tr>"]  # fmt: skip
    for part in report.parts:
        if not part.submitted:
            continue
        causes = "<br>".join(
            f"{e(m.words)}: {m.count} ({e(', '.join(m.students))})"
            + (f"<br>&nbsp;&nbsp;{e(structures_text(m.structures))}" if m.structures else "")
            + "".join(f"<br>&nbsp;&nbsp;<code>{e(f)}</code> × {n}" for f, n in m.formulas[:3])
            for m in part.mistakes
        )
        pending = f", {part.ungraded} to grade by hand" if part.ungraded else ""
        follow = ", ".join(part.follow_ons)
        out.append(
            f"<tr><th scope='row'>{e(part.label)}</th><td>{part.points:g}</td>"
            f"<td>{part.right}/{part.submitted} ({100 * part.share_right:.0f}%){pending}</td>"
            f"<td>{causes}</td><td class='follow'>{len(part.follow_ons) or ''}"
            f"{' (' + e(follow) + ')' if follow else ''}</td></tr>"
        )
    return [*out, "</table>"]


def _slip(slip: Slip) -> str:
    shown = f" — <code>{e(slip.written)}</code>" if slip.written else ""
    return f"{e(slip.part)}: {e(slip.words)}{shown}"


def _student_cell(slips: list[Slip]) -> str:
    """Concepts one by one; answers in no judgeable form (or unnamed) gathered by kind."""
    lines = [_slip(s) for s in slips if group(s.kind) == "concept"]
    gathered: dict[str, list[str]] = {}
    for s in slips:
        if group(s.kind) != "concept":
            gathered.setdefault(s.words, []).append(s.part)
    lines += [f"{e(words)}: {len(parts)} part{'s' * (len(parts) != 1)} ({e(', '.join(parts))})"
              for words, parts in gathered.items()]  # fmt: skip
    return "<br>".join(lines)


def _students(report: ClassReport) -> list[str]:
    out = ["<table><caption>Each student's mistakes: root causes, then follow-ons"
           "</caption><tr><th scope='col'>student</th><th scope='col'>root causes</th>"
           "<th scope='col'>follow-ons</th></tr>"]  # fmt: skip
    for row in report.progress:
        roots = report.slips.get(row.student, [])
        follow = report.follow_ons.get(row.student, [])
        if not roots and not follow:
            continue
        out.append(
            f"<tr><th scope='row'>{e(row.student)}</th><td>{_student_cell(roots)}</td>"
            f"<td class='follow'>{e('; '.join(s.part for s in follow))}</td></tr>"
        )
    return [*out, "</table>"]


def _problems(report: ClassReport) -> list[str]:
    """Each student's structure of every exercise that varies (nothing where none does)."""
    assignments = sorted({a for by in report.structures.values() for a in by})
    if not assignments:
        return []
    out = ["<h2>Each student's problem</h2>",
           "<table><caption>The structure of each exercise that varies per student, as "
           "their Given cell states it</caption><tr><th scope='col'>student</th>"]  # fmt: skip
    out += [f"<th scope='col'>{e(a)}</th>" for a in assignments]
    out.append("</tr>")
    for student, by in report.structures.items():
        cells = "".join(
            f"<td>structure: {e(by[a])}</td>" if a in by else "<td>—</td>" for a in assignments
        )
        out.append(f"<tr><th scope='row'>{e(student)}</th>{cells}</tr>")
    return [*out, "</table>"]


def _progress(report: ClassReport) -> list[str]:
    out = ["<table><caption>Scores per student</caption><tr><th scope='col'>student</th>"]
    out += [f"<th scope='col'>{e(a)}</th>" for a in report.assignments]
    out.append("<th scope='col'>total</th></tr>")
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
            f"<tr><th scope='row'>{e(row.student)}</th>{cells}<td>{row.total:g}/"
            f"{row.max_total:g} ({100 * row.share:.0f}%)</td></tr>"
        )
    return [*out, "</table>"]


def render_html(report: ClassReport) -> str:
    """The report page (self-contained: plots embedded)."""
    figures = {plot.key: _figure(plot) for plot in plots(report)}
    title = report.title
    counted = ", ".join(report.assignments)
    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body><main>",
        f"<h1>{e(title)}</h1><p>"
        + (
            f"Released assignments counted: {e(counted)}."
            if report.scope == COURSE_SCOPE
            else f"Parts of {e(report.scope)}; progress over the released assignments: "
            f"{e(counted)}."
        ),
    ]
    if report.unreleased:
        out.append(f" Not released, not counted: {e(', '.join(report.unreleased))}.")
    out += ["</p>", "<h2>What to re-teach first</h2>", *_misconceptions(report)]
    out.append(figures.get("misconceptions", ""))
    out += ["<h2>Parts</h2>", figures.get("parts", ""), *_parts(report)]
    out += ["<h2>Students</h2>", *_students(report), *_problems(report)]
    out += ["<h2>Progress</h2>", figures.get("progress", ""), *_progress(report)]
    out.append("</main></body></html>")
    return "\n".join(out)
