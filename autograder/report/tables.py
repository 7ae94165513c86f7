"""The class report as CSV: parts and their mistakes, each student's mistakes, progress
(formulas and names written as text a spreadsheet never runs: `core.spreadsheet`)."""

from __future__ import annotations

from pathlib import Path

from autograder.core.spreadsheet import InertWriter
from autograder.report.gather import ClassReport


def write_csvs(report: ClassReport, out: Path) -> list[Path]:
    """`<scope>.csv` (parts), `<scope>_students.csv` (mistakes per student) and
    `<scope>_progress.csv` (scores per student)."""
    parts_csv = out / f"{report.scope}.csv"
    with parts_csv.open("w", newline="") as handle:
        writer = InertWriter(handle)
        writer.writerow(
            ["assignment", "notebook", "part", "label", "points", "submitted", "right",
             "share_right", "not_yet_graded", "follow_ons", "mistake_kind", "mistake",
             "mistakes", "students", "formulas", "structures"]
        )  # fmt: skip
        for part in report.parts:
            head = [part.assignment, part.notebook, part.name, part.label, f"{part.points:g}",
                    part.submitted, part.right, f"{part.share_right:.3f}", part.ungraded,
                    len(part.follow_ons)]  # fmt: skip
            if not part.mistakes:
                writer.writerow([*head, "", "", 0, "", "", ""])
            for m in part.mistakes:
                formulas = "; ".join(f"{f} ({n})" for f, n in m.formulas)
                structures = "; ".join(f"{words} ({n})" for words, n in m.structures)
                writer.writerow([*head, m.kind, m.words, m.count, " ".join(m.students), formulas,
                                 structures])  # fmt: skip
    students_csv = out / f"{report.scope}_students.csv"
    with students_csv.open("w", newline="") as handle:
        writer = InertWriter(handle)
        writer.writerow(["student", "assignment", "part", "cause", "mistake_kind", "mistake",
                         "written", "structure"])  # fmt: skip
        for student in sorted({*report.slips, *report.follow_ons}):
            for cause, slips in (("root", report.slips), ("follow-on", report.follow_ons)):
                for s in slips.get(student, []):
                    writer.writerow([student, s.assignment, s.part, cause, s.kind, s.words,
                                     s.written, s.structure])  # fmt: skip
    progress_csv = out / f"{report.scope}_progress.csv"
    with progress_csv.open("w", newline="") as handle:
        writer = InertWriter(handle)
        writer.writerow(["student", *report.assignments, "total", "max_total", "share", "late",
                         "structures"])  # fmt: skip
        for row in report.progress:
            cells = [
                "" if row.scores[a] is None else f"{row.scores[a]:g}" for a in report.assignments
            ]
            structures = "; ".join(
                f"{a}: {words}" for a, words in report.structures.get(row.student, {}).items()
            )
            writer.writerow([row.student, *cells, f"{row.total:g}", f"{row.max_total:g}",
                             f"{row.share:.3f}", row.late_note, structures])  # fmt: skip
    return [parts_csv, students_csv, progress_csv]
