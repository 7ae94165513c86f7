"""The class report's facts, gathered from the gradebook and the stored diagnoses.

Only released assignments count (`autograder.nbgrader_plugins.export.released_assignments`),
unless one is named. Every wrong check of every submission becomes a `Slip`; a follow-on
(a right step from the learner's own wrong earlier answer) is kept apart from the root
causes, so it never outnumbers or hides them.

In a class with a secret, a student's exercise may be stated for a structure of their own
(`specs.learner_problem`); each slip carries it, so one kind of mistake made in several
structures is one misconception, with the structures it was made in listed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.diagnosis.kinds import FOLLOW_ON, PART_SPECIFIC, group, plain
from autograder.grading.diagnoses import read_diagnoses
from autograder.nbgrader_plugins.export import DEFAULT_EXCHANGE, released_assignments
from autograder.nbgrader_plugins.lateness import late_text

NO_DIAGNOSIS = "no diagnosis recorded"
COURSE_SCOPE = "course"
TOP_MISCONCEPTIONS = 5


@dataclass(frozen=True)
class Slip:
    """One wrong check of one student's submission."""

    student: str
    assignment: str
    part: str
    """The part's label, in the learner's terms (`Part D: dL/da`)."""
    kind: str
    written: str
    """The learner's formula in the given names, else their value (their own number)."""
    formula: bool
    """True when `written` is a formula (comparable over learners)."""
    structure: str = ""
    """The student's structure of the exercise in words ('' where it has one structure)."""

    @property
    def words(self) -> str:
        return plain(self.kind)


@dataclass
class Mistake:
    """One kind of mistake on one part: who made it, and the formulas they wrote."""

    kind: str
    students: list[str]
    formulas: list[tuple[str, int]]
    """Formulas written (normal form), most common first, with how many wrote each."""
    example: str
    structures: list[tuple[str, int]] = field(default_factory=list)
    """The structures it was made in (where the exercise varies), with how many students
    made it in each, most first."""

    @property
    def count(self) -> int:
        return len(self.students)

    @property
    def words(self) -> str:
        return plain(self.kind)


@dataclass
class Part:
    """One graded cell of one assignment, over the class."""

    assignment: str
    notebook: str
    name: str
    """The cell's grade id."""
    label: str
    """The part as the learner sees it (`Part D: dL/da`)."""
    points: float
    submitted: int = 0
    right: int = 0
    ungraded: int = 0
    mistakes: list[Mistake] = field(default_factory=list)
    """Root causes (and answers in no judgeable form), most learners first."""
    follow_ons: list[str] = field(default_factory=list)
    """Students whose wrong answer is right from their own wrong earlier answer."""

    @property
    def share_right(self) -> float:
        return self.right / self.submitted if self.submitted else 0.0


@dataclass(frozen=True)
class Misconception:
    """One kind of root mistake over the class: who made it, where, an example."""

    kind: str
    students: list[str]
    parts: list[str]
    example: str
    structures: list[tuple[str, int]] = field(default_factory=list)
    """The structures it was made in (where an exercise varies), with how many students
    made it in each, most first."""

    @property
    def words(self) -> str:
        return plain(self.kind)


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
    """The assignments progress spans: the released ones (and the one named)."""
    misconceptions: list[Misconception] = field(default_factory=list)
    """The root mistakes most worth re-teaching, most learners first."""
    slips: dict[str, list[Slip]] = field(default_factory=dict)
    """student -> their root mistakes, in the order of the parts."""
    follow_ons: dict[str, list[Slip]] = field(default_factory=dict)
    """student -> their follow-on errors."""
    unreleased: list[str] = field(default_factory=list)
    """In the gradebook, not released: not counted."""
    course_id: str = ""
    """The course's id (CourseDirectory.course_id), which the report's title names."""
    structures: dict[str, dict[str, str]] = field(default_factory=dict)
    """student -> assignment -> their structure in words, for the assignments handed in
    whose exercise varies."""

    @property
    def title(self) -> str:
        """'Class report: <course id>', then the assignment when the report is of one."""
        named = self.course_id or "(no course id)"
        if self.scope == COURSE_SCOPE:
            return f"Class report: {named}"
        return f"Class report: {named}, {self.scope}"


class ReportError(Exception):
    """The report cannot be made; the message says why."""


class NothingGraded(ReportError):
    """The gradebook holds no graded submission in the report's scope."""


def part_label(assignment: str, grade_id: str, course: bool) -> str:
    """`Part D: dL/da` (with `03 ` before it in the course report); the cell id when the
    assignment is no exercise of this course."""
    from autograder.specs import SPECS

    prefix = f"{assignment[:2]} " if course else ""
    spec = SPECS.get(assignment)
    item = grade_id.removeprefix("correct_")
    if spec is None:
        return prefix + grade_id
    if item in spec.part_names:
        return f"{prefix}Part {spec.letter(item)}: {spec.part(item).label}"
    if grade_id in dict(spec.written):
        return f"{prefix}Part {spec.letter(grade_id)}: written answer"
    return prefix + grade_id


def _failed_checks(
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


def _slip(student: str, assignment: str, label: str, check: dict[str, Any], structure: str) -> Slip:
    formula = check.get("formula")  # absent in stores written before formulas were kept
    if formula:
        return Slip(student, assignment, label, check["kind"], str(formula), True, structure)
    shown = str(check["value"]).removeprefix("✗ ")  # a code answer: what the grader found
    return Slip(student, assignment, label, check["kind"], shown, False, structure)


def _structures(slips: list[Slip]) -> list[tuple[str, int]]:
    """The structures the slips were made in, with how many students made them in each,
    most first (none where no exercise varies)."""
    students = {(s.structure, s.student) for s in slips if s.structure}
    return Counter(structure for structure, _ in students).most_common()


def _mistakes(slips: list[Slip]) -> list[Mistake]:
    by_kind: dict[str, list[Slip]] = defaultdict(list)
    for slip in slips:
        by_kind[slip.kind].append(slip)
    found = []
    for kind, group_slips in by_kind.items():
        formulas = Counter(s.written for s in group_slips if s.formula).most_common()
        values = Counter(s.written for s in group_slips if not s.formula).most_common()
        example = formulas[0][0] if formulas else (values[0][0] if values else "")
        students = sorted({s.student for s in group_slips})
        found.append(Mistake(kind, students, formulas, example, _structures(group_slips)))
    return sorted(found, key=lambda m: (-m.count, m.kind))


def rank_misconceptions(slips: list[Slip]) -> list[Misconception]:
    """Root mistakes that are concepts, by kind over the class (by part and bug named, for
    a kind that means something else in each part): most learners first."""
    by_kind: dict[tuple[str, str], list[Slip]] = defaultdict(list)
    for slip in slips:
        if group(slip.kind) == "concept":
            apart = slip.kind in PART_SPECIFIC  # one per part and bug named
            by_kind[(slip.kind, f"{slip.part}: {slip.written}" if apart else "")].append(slip)
    found = []
    for (kind, _), made in by_kind.items():
        parts = list(dict.fromkeys(s.part for s in made))
        written = Counter((s.part, s.written) for s in made if s.formula).most_common(1)
        if not written:  # code answers: what the grader found, never a learner's own number
            shown = Counter((s.part, s.written) for s in made if not _number(s.written))
            written = shown.most_common(1)
        example = f"{written[0][0][0]}: {written[0][0][1]}" if written else ""
        students = sorted({s.student for s in made})
        found.append(Misconception(kind, students, parts, example, _structures(made)))
    found.sort(key=lambda m: (-len(m.students), -len(m.parts), m.kind))
    return found[:TOP_MISCONCEPTIONS]


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def build(course_dir: Path, assignment: str | None = None) -> ClassReport:
    """Gather the report of one assignment (or the course's released ones)."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.core.givens import SecretError
    from autograder.grading.runner import STATE_DIR, load_config
    from autograder.grading.trusted import course_site
    from autograder.nbgrader_plugins.problem import problem_of

    config = load_config(course_dir)
    coursedir = CourseDirectory(config=config)
    try:
        site = course_site(coursedir)  # whose structure is whose, as the grader drew them
    except SecretError as error:
        raise ReportError(str(error)) from None
    exchange = str(config.Exchange.get("root", DEFAULT_EXCHANGE))
    state_dir = course_dir / STATE_DIR
    course = assignment is None
    parts: list[Part] = []
    roots: list[Slip] = []
    follow_ons: list[Slip] = []
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        known = sorted(a.name for a in gb.assignments)
        if assignment is not None and assignment not in known:
            raise ReportError(
                f"{assignment} is not in the gradebook; known: {', '.join(known) or 'none'}"
            )
        released = sorted(released_assignments(gb, exchange, coursedir.course_id))
        counted = [assignment] if assignment else released
        spanned = sorted({*released, *counted})  # progress spans the course
        students = sorted(s.id for s in gb.students)
        max_scores: dict[str, float] = {}
        scores: dict[str, dict[str, float | None]] = {s: {} for s in students}
        late: dict[str, dict[str, float]] = defaultdict(dict)
        structures: dict[str, dict[str, str]] = defaultdict(dict)
        for name in spanned:
            record = gb.find_assignment(name)
            max_scores[name] = float(record.max_score)
            for submission in record.submissions:
                scores.setdefault(submission.student.id, {})[name] = float(submission.score)
                if submission.total_seconds_late > 0:  # from the arrival time (collect.py)
                    late[submission.student.id][name] = float(submission.total_seconds_late)
        for name in counted:
            record = gb.find_assignment(name)
            by_cell: dict[tuple[str, str], Part] = {}
            part_slips: dict[tuple[str, str], list[Slip]] = defaultdict(list)
            for notebook in record.notebooks:
                for cell in notebook.grade_cells:
                    label = part_label(name, cell.name, course)
                    part = Part(name, notebook.name, cell.name, label, float(cell.max_score))
                    by_cell[(notebook.name, cell.name)] = part
                    parts.append(part)
            for submission in sorted(record.submissions, key=lambda s: s.student.id):
                student = submission.student.id
                structure = problem_of(name, student, site).structure
                if structure:
                    structures[student][name] = structure
                failed = _failed_checks(state_dir, name, student)
                for sub_notebook in submission.notebooks:
                    for grade in sub_notebook.grades:
                        part = by_cell[(sub_notebook.name, grade.name)]
                        part.submitted += 1
                        if grade.needs_manual_grade and grade.manual_score is None:
                            part.ungraded += 1
                            continue
                        if float(grade.score) >= float(grade.max_score):
                            part.right += 1
                            continue
                        checks = (failed or {}).get((sub_notebook.name, grade.name), [])
                        if not checks and grade.cell.cell_type == "code":
                            checks = [{"kind": NO_DIAGNOSIS, "value": ""}]
                        for check in checks:
                            slip = _slip(student, name, part.label, check, structure)
                            if slip.kind == FOLLOW_ON:
                                follow_ons.append(slip)
                                if student not in part.follow_ons:
                                    part.follow_ons.append(student)
                            else:
                                roots.append(slip)
                                part_slips[(sub_notebook.name, grade.name)].append(slip)
            for key, part in by_cell.items():
                part.mistakes = _mistakes(part_slips[key])
    progress = [
        Progress(student, {a: scores[student].get(a) for a in spanned}, max_scores, late[student])
        for student in sorted(scores)
    ]
    by_student: dict[str, list[Slip]] = defaultdict(list)
    for slip in sorted(roots, key=lambda s: (s.assignment, s.part)):
        by_student[slip.student].append(slip)
    following: dict[str, list[Slip]] = defaultdict(list)
    for slip in sorted(follow_ons, key=lambda s: (s.assignment, s.part)):
        following[slip.student].append(slip)
    return ClassReport(
        assignment or COURSE_SCOPE,
        parts,
        progress,
        spanned,
        rank_misconceptions(roots),
        dict(by_student),
        dict(following),
        sorted(set(known) - set(spanned)),
        coursedir.course_id,
        {student: dict(sorted(by.items())) for student, by in sorted(structures.items())},
    )
