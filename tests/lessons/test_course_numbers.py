"""The lessons in course/ say every number of the syllabus, and keep the common skeleton.

The syllabus (docs/syllabus.md) lists every number the course must teach. The table below
gives each one with the lesson that owns it and the output line that must show it. The tests read
the *stored* outputs of ``course/*.ipynb``; nbval (``pytest --nbval course/``)
re-executes the notebooks and fails when a fresh output differs from the stored one.
Together the two prove that each number is printed by PyTorch running the lesson.

Two kinds of claim:

- ``Checked(lesson, name, value)``: the lesson ran ``compare(name, by_hand, torch_value)``
  and the stored line reads ``✓ name: exact match`` or ``≈ name: close match``, with
  both the hand value and PyTorch's value equal to ``value``.
- ``Printed(lesson, label, value)``: some output line contains ``label``, and the first
  number after it is ``value`` (or, for a text value, the text follows the label).

The inputs a lesson sets (x = 2.0, w = 3.0, ...) are not claims: they are typed, not computed.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"

LESSONS = [
    "01_what_a_gradient_is",
    "02_the_computation_graph",
    "03_a_neuron_by_hand",
    "04_the_dead_relu",
    "05_three_mechanics",
    "06_one_backward_every_parameter",
    "07_try_it",
    "08_when_backward_complains",
    "09_autograd_by_hand",
]
# Lessons whose graded exercise waits for the new exercise spec engine: no link yet, and
# the moment exercises/<lesson>/ exists the lesson must link to it.
PENDING_EXERCISES: set[str] = set()

MAX_CELL_LINES = 8
MAX_MEAN_CELL_LINES = 4.0


@dataclass(frozen=True)
class Checked:
    """A ``compare(name, ...)`` line that matched, with PyTorch's value ``value``."""

    lesson: str
    name: str
    value: float

    def __str__(self) -> str:
        return f"{self.lesson}: compare({self.name!r}) = {self.value}"


@dataclass(frozen=True)
class Printed:
    """An output line containing ``label`` followed by ``value``."""

    lesson: str
    label: str
    value: float | str

    def __str__(self) -> str:
        return f"{self.lesson}: {self.label!r} -> {self.value}"


L1, L2, L3, L4, L5, L6, L7, L8, L9 = LESSONS

# fmt: off
CLAIMS: list[Checked | Printed] = [
    # 1. What a gradient is: y = x², slope 2x
    Checked(L1, "dy/dx at x = 3", 6.0),
    Checked(L1, "dy/dx at x = -2.0", -4.0),
    Checked(L1, "dy/dx at x = 0.0", 0.0),
    Printed(L1, "tensor(", "6.)"),                      # x.grad shown as PyTorch prints it
    Printed(L1, "nudge slope", 6.001),                  # (3.001² - 9) / 0.001
    Printed(L1, "dy/dx at x = 3: by hand 6.0 | nudge", 6.001),
    # 2. The computation graph: x = 3, y = x**2, z = 2*y + 1
    Printed(L2, "data: False | data**2:", "False"),     # opting in with requires_grad=True
    Printed(L2, "x:    True  | x**2:", "True"),
    Printed(L2, "leaf  x  value", 3.0),                 # forward values 3 -> 9 -> 18 -> 19
    Printed(L2, "PowBackward0  y  value", 9.0),
    Printed(L2, "MulBackward0     value", 18.0),
    Printed(L2, "AddBackward0  z  value", 19.0),
    Printed(L2, "z.grad_fn:", "AddBackward0"),
    Printed(L2, "y.grad_fn:", "PowBackward0"),
    Printed(L2, "x.grad_fn:", "None   x.is_leaf: True"),
    Checked(L2, "x.grad = dz/dx = 4x at x = 3", 12.0),
    Checked(L2, "x.grad, one node at a time", 12.0),   # 1 x 2 x 6
    Printed(L2, "AddBackward0 -> MulBackward0 -> PowBackward0 ->", "AccumulateGrad"),
    Printed(L2, "saved input:", 3.0),
    Printed(L2, "local slope of AddBackward0:", 1.0),
    Printed(L2, "local slope of MulBackward0:", 2.0),
    Printed(L2, "local slope of PowBackward0:", 6.0),
    Printed(L2, "AddBackward0 (z): value = 19.0, grad =", 1.0),
    Printed(L2, "PowBackward0 (y): value = 9.0, grad =", 2.0),
    Printed(L2, "leaf x: value = 3.0, grad =", 12.0),
    Printed(L2, "Trying to backward through the graph", "a second time"),
    # 3. A neuron by hand: x = 2, w = 3, b = -1, target 2
    Checked(L3, "h", 5.0),
    Checked(L3, "a", 5.0),
    Checked(L3, "loss", 9.0),
    Checked(L3, "dL/da", 6.0),
    Checked(L3, "da/dh (ReLU open)", 1.0),
    Checked(L3, "dL/dh", 6.0),
    Checked(L3, "dh/dw = x", 2.0),
    Checked(L3, "dh/db", 1.0),
    Checked(L3, "w.grad = dL/dw", 12.0),
    Checked(L3, "b.grad = dL/db", 6.0),
    Printed(L3, "dL/dw: by hand 12.0 | nudge", 12.004),  # the gradient check
    # 4. The dead ReLU: x = -1
    Checked(L4, "h", -4.0),
    Checked(L4, "a = ReLU(h)", 0.0),
    Checked(L4, "loss", 4.0),
    Checked(L4, "dL/dh, leaving the ReLU", 0.0),
    Checked(L4, "w.grad = dL/dw", 0.0),
    Checked(L4, "b.grad = dL/db", 0.0),
    Printed(L4, "batch loss 4.0, w.grad", 0.0),         # a whole batch behind a closed gate
    Checked(L4, "LeakyReLU a", -0.04),
    Checked(L4, "LeakyReLU loss", 4.1616),
    Checked(L4, "LeakyReLU w.grad", 0.0408),
    Checked(L4, "LeakyReLU b.grad", -0.0408),
    # 5. Three mechanics
    Checked(L5, "x.grad = 15x^2", 60.0),
    Checked(L5, "y.grad = dz/dy", 5.0),
    Printed(L5, "y.grad:", "None"),
    Printed(L5, "warning:", "is not a leaf Tensor is being accessed"),
    Printed(L5, "after backward 1: x.grad =", 6.0),
    Printed(L5, "after backward 2: x.grad =", 12.0),
    Printed(L5, "after backward 3: x.grad =", 18.0),
    Checked(L5, "x.grad after three backward calls = 3 x 6", 18.0),
    Printed(L5, "cleared, backward 1: x.grad =", 6.0),
    Printed(L5, "cleared, backward 2: x.grad =", 6.0),
    Printed(L5, "cleared, backward 3: x.grad =", 6.0),
    Checked(L5, "x.grad, cleared before each backward", 6.0),
    Printed(L5, "step 3: w = 1.92, w.grad =", 3.84),    # optimizer.zero_grad() in a loop
    Printed(L5, "inside no_grad: y.requires_grad =", "False"),
    Printed(L5, "y.detach():", 9.0),
    Printed(L5, "y.detach().requires_grad =", "False"),
    Checked(L5, "y.detach() = x^2", 9.0),
    # 6. One backward, every parameter: w = 2, b = 1, x = 3
    Checked(L6, "y", 7.0),
    Checked(L6, "loss", 4.0),
    Checked(L6, "w.grad = dL/dw", 12.0),
    Checked(L6, "b.grad = dL/db", 4.0),
    Checked(L6, "x.grad = 9 + 18", 27.0),               # paths add up: f = x·x² at x = 3
    Checked(L6, "x.grad with the path through y detached", 9.0),
    Printed(L6, "parameter tensors holding", "1,103,001 numbers"),
    Printed(L6, "tensors with a .grad before backward:", 0.0),
    Printed(L6, "tensors with a .grad after one backward:", 6.0),
    # 7. Try it
    Checked(L7, "dy/dx = 3x^2 - 2 at x = 4", 46.0),
    Printed(L7, "dy/dx at x = 4: by hand 46.0 | nudge", 46.012),  # the gradient check
    Checked(L7, "out", 2.5),
    Checked(L7, "L", 0.25),
    Checked(L7, "dL/dout", 1.0),
    Checked(L7, "dL/dw2", 5.0),
    Checked(L7, "dL/da", 0.5),
    Checked(L7, "dL/dh", 0.5),
    Checked(L7, "dL/dw", 1.0),
    Checked(L7, "dL/db", 0.5),
    # 8. When backward complains: each error reproduced (stored error outputs), then fixed
    Checked(L8, "x.grad after two backward passes", 24.0),  # retain_graph=True: 12 + 12
    Checked(L8, "w.grad = 2(2w - 4)·2", 8.0),
    Printed(L8, "x.grad after y.sum().backward():", "tensor([2., 4., 6.])"),
    Printed(L8, "x.grad with a starting gradient of ones:", "tensor([2., 4., 6.])"),
    Checked(L8, "x.grad = 8x", 24.0),
    Checked(L8, "w after one step", 2.4),
    Printed(L8, "w.requires_grad:", "True"),
    # 9. Autograd by hand: the course's neuron and x·x² with the lesson's Value class
    Printed(L9, "Value(data=3.0, grad=", 0.0),          # .grad starts at 0
    Checked(L9, "Value loss", 9.0),
    Checked(L9, "Value w.grad", 12.0),
    Checked(L9, "Value b.grad", 6.0),
    Checked(L9, "Value x.grad of x·x²", 27.0),
]
# fmt: on

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
COMPARE_LINE = re.compile(
    r"^(?P<mark>[✓≈✗]) (?P<name>.+?): (?P<verdict>exact match|close match|MISMATCH) "
    r"\(by hand (?P<hand>[^,)]+), PyTorch (?P<torch>[^,)]+)"
)
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)
BULLET = re.compile(r"^- ", re.MULTILINE)


# --- reading notebooks ---------------------------------------------------------------


def notebook_path(lesson: str) -> Path:
    return COURSE / f"{lesson}.ipynb"


def read(lesson: str) -> NotebookNode:
    path = notebook_path(lesson)
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} does not exist")
    return nbformat.read(path, as_version=4)


def output_texts(nb: NotebookNode) -> Iterator[str]:
    """The text of every stored output: streams and the text/plain of results."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                yield output.text
            elif output.output_type in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain")
                if text is not None:
                    yield text


def output_lines(nb: NotebookNode) -> list[str]:
    return [line for text in output_texts(nb) for line in text.splitlines()]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-7)


def first_number(text: str) -> float | None:
    match = NUMBER.search(text)
    return float(match.group()) if match else None


def claim_problem(claim: Checked | Printed, lines: list[str]) -> str | None:
    """None when some line of ``lines`` shows the claim, else what is wrong."""
    if isinstance(claim, Checked):
        found = [m for line in lines if (m := COMPARE_LINE.match(line)) and m["name"] == claim.name]
        if not found:
            return f"no `compare({claim.name!r}, ...)` line in the outputs"
        for m in found:
            hand, theirs = first_number(m["hand"]), first_number(m["torch"])
            if (
                m["mark"] != "✗"
                and hand is not None
                and theirs is not None
                and close(hand, claim.value)
                and close(theirs, claim.value)
            ):
                return None
        return f"compare({claim.name!r}) printed {[m.group() for m in found]}, not {claim.value}"
    candidates = [
        line[line.index(claim.label) + len(claim.label) :] for line in lines if claim.label in line
    ]
    if not candidates:
        return f"no output line contains {claim.label!r}"
    for rest in candidates:
        if isinstance(claim.value, str):
            if claim.value in rest:
                return None
        else:
            number = first_number(rest)
            if number is not None and close(number, claim.value):
                return None
    return f"after {claim.label!r} the outputs show {candidates}, not {claim.value}"


# --- the skeleton ----------------------------------------------------------------------


def exercise_link(lesson: str) -> str:
    return f"../exercises/{lesson}/{lesson}.ipynb"


def code_line_counts(nb: NotebookNode) -> list[int]:
    """Non-blank lines of each code cell."""
    return [
        sum(1 for line in cell.source.splitlines() if line.strip())
        for cell in nb.cells
        if cell.cell_type == "code"
    ]


def skeleton_problems(nb: NotebookNode, lesson: str) -> list[str]:
    """Everything in which ``nb`` departs from the lesson skeleton (empty when it follows it)."""
    problems: list[str] = []
    number = int(lesson[:2])
    cells = nb.cells
    if not cells or cells[0].cell_type != "markdown":
        return ["the first cell must be markdown with the title"]
    first = cells[0].source
    if not re.match(rf"# {number}\. \S", first):
        problems.append(f"the first cell must open with '# {number}. Title'")
    purpose = first.split("\n\n")[1].strip() if first.count("\n\n") else ""
    if not purpose or purpose.startswith("#"):
        problems.append("a one-line purpose must follow the title")
    markdown = "\n\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    sections = _sections(markdown)
    goals = sections.get("What you will be able to do")
    if goals is None:
        problems.append("missing '## What you will be able to do'")
    elif not 2 <= len(BULLET.findall(goals)) <= 4:
        problems.append("'What you will be able to do' needs 2 to 4 bullets")
    code_cells = [cell for cell in cells if cell.cell_type == "code"]
    setup = code_cells[0].source if code_cells else ""
    if "from autograd_lessons import" not in setup or "setup_notebook()" not in setup:
        problems.append(
            "the first code cell must import from autograd_lessons and call setup_notebook()"
        )
    summary = sections.get("Summary") or next(
        (body for title, body in sections.items() if title.startswith("Summary")), None
    )
    if summary is None:
        problems.append("missing '## Summary'")
    elif not BULLET.search(summary):
        problems.append("the Summary must be bullets")
    pending = lesson in PENDING_EXERCISES and not (COURSE / exercise_link(lesson)).exists()
    if f"]({exercise_link(lesson)})" not in markdown and not pending:
        problems.append(f"missing a link to {exercise_link(lesson)}")
    counts = code_line_counts(nb)
    long = [n for n in counts if n > MAX_CELL_LINES]
    if long:
        problems.append(f"code cells longer than {MAX_CELL_LINES} lines: {long}")
    if counts and sum(counts) / len(counts) > MAX_MEAN_CELL_LINES:
        problems.append(
            f"code cells average {sum(counts) / len(counts):.1f} lines (max {MAX_MEAN_CELL_LINES})"
        )
    for cell in code_cells:
        tree = ast.parse(TransformerManager().transform_cell(cell.source))  # %magics as calls
        defined = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda))
        ]
        if defined:
            problems.append(
                "a code cell defines a function or class (import helpers instead): "
                f"{cell.source[:40]!r}"
            )
    return problems


def _sections(markdown: str) -> dict[str, str]:
    """Level-2 heading -> the text under it (up to the next level-1 or level-2 heading)."""
    sections: dict[str, str] = {}
    matches = [m for m in HEADING.finditer(markdown) if len(m.group(1)) <= 2]
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(markdown)
        if len(match.group(1)) == 2:
            sections[match.group(2).strip()] = markdown[match.end() : end]
    return sections


def execution_problems(nb: NotebookNode) -> list[str]:
    """Stored outputs come from one top-to-bottom run, with no error, warning or mismatch."""
    problems: list[str] = []
    counts = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    if counts != list(range(1, len(counts) + 1)):
        problems.append(f"execution counts {counts} are not 1..n: run the notebook top to bottom")
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error" and "raises-exception" not in cell.metadata.get(
                "tags", []
            ):
                problems.append(f"an error output: {output.ename}")
            if output.output_type == "stream" and output.name == "stderr":
                problems.append(f"stderr output: {output.text[:80]!r}")
    problems += [f"a mismatch: {line}" for line in output_lines(nb) if "MISMATCH" in line]
    return problems


# --- the tests on the course -------------------------------------------------------------


@pytest.mark.parametrize("claim", CLAIMS, ids=str)
def test_number_is_in_its_lesson(claim: Checked | Printed) -> None:
    """Every number of the syllabus (docs/syllabus.md) is printed by the lesson that teaches it."""
    problem = claim_problem(claim, output_lines(read(claim.lesson)))
    assert problem is None, f"{claim.lesson}: {problem}"


def test_every_lesson_has_claims() -> None:
    """The table covers every lesson."""
    assert {claim.lesson for claim in CLAIMS} == set(LESSONS)


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_has_the_skeleton(lesson: str) -> None:
    """Title, purpose, goals, setup cell, Summary, exercise link, short cells, no definitions."""
    assert skeleton_problems(read(lesson), lesson) == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_stored_outputs_are_one_clean_run(lesson: str) -> None:
    """Outputs are stored, from one run, with no error, no stderr and no ✗ MISMATCH."""
    assert execution_problems(read(lesson)) == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_is_clean(lesson: str) -> None:
    """No execution timings, widget state or stray metadata (tools/clean_notebooks.py)."""
    hygiene = pytest.importorskip("autograder.authoring.hygiene")
    assert not hygiene.needs_cleaning(notebook_path(lesson)), (
        f"run: python tools/clean_notebooks.py course/{lesson}.ipynb"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_exercise_link_target_exists(lesson: str) -> None:
    """The exercise each lesson links to exists (skipped until exercises/ is generated)."""
    target = (COURSE / exercise_link(lesson)).resolve()
    if lesson in PENDING_EXERCISES and not target.exists():
        assert exercise_link(lesson) not in read(lesson_name := lesson).cells[-1].source, (
            lesson_name
        )
        return  # its exercise is not written yet; the lesson says so and links nothing
    if not any((ROOT / "exercises").glob("*/*.ipynb")):
        pytest.skip("exercises/ has not been generated yet")
    assert target.exists(), f"course/{lesson}.ipynb links to a missing {target.relative_to(ROOT)}"


def test_no_stray_notebooks_in_course() -> None:
    """course/ holds exactly the lessons."""
    assert sorted(p.stem for p in COURSE.glob("*.ipynb")) == LESSONS


# --- the checks themselves can fail ------------------------------------------------------


def _notebook(*cells: NotebookNode) -> NotebookNode:
    return nbformat.v4.new_notebook(cells=list(cells))


def _ran(source: str, text: str, count: int = 1) -> NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=count)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return cell


GOOD = (
    "# 9. Title\n\nOne line.\n\n## What you will be able to do\n\n- one\n- two",
    "import torch\n\nfrom autograd_lessons import setup_notebook\n\ndevice = setup_notebook()",
    "## Summary\n\n- it works\n\n## Exercise\n\n[go](../exercises/09_x/09_x.ipynb)",
)


def _good(**replace: str) -> NotebookNode:
    title, setup, summary = (
        replace.get(k, v) for k, v in zip(("title", "setup", "summary"), GOOD, strict=True)
    )
    return _notebook(
        nbformat.v4.new_markdown_cell(title),
        nbformat.v4.new_code_cell(setup),
        nbformat.v4.new_code_cell(replace.get("body", "x = 1")),
        nbformat.v4.new_markdown_cell(summary),
    )


def test_skeleton_check_accepts_a_good_notebook() -> None:
    assert skeleton_problems(_good(), "09_x") == []


@pytest.mark.parametrize(
    ("replace", "complaint"),
    [
        (
            {"title": "# Title\n\nOne line.\n\n## What you will be able to do\n\n- a\n- b"},
            "'# 9. Title'",
        ),
        ({"title": "# 9. Title\n\n## What you will be able to do\n\n- a\n- b"}, "one-line purpose"),
        (
            {"title": "# 9. Title\n\nOne line.\n\n## Goals\n\n- a\n- b"},
            "What you will be able to do",
        ),
        (
            {"title": "# 9. Title\n\nOne line.\n\n## What you will be able to do\n\n- a"},
            "2 to 4 bullets",
        ),
        ({"setup": "import torch"}, "setup_notebook()"),
        ({"summary": "## Exercise\n\n[go](../exercises/09_x/09_x.ipynb)"}, "Summary"),
        ({"summary": "## Summary\n\n- ok\n\n[go](../exercises/09_x.ipynb)"}, "missing a link"),
        ({"body": "\n".join(f"x = {i}" for i in range(9))}, "longer than 8 lines"),
        ({"body": "def plot():\n    pass"}, "defines a function"),
    ],
)
def test_skeleton_check_rejects(replace: dict[str, str], complaint: str) -> None:
    problems = skeleton_problems(_good(**replace), "09_x")
    assert any(complaint in problem for problem in problems), problems


def test_skeleton_check_rejects_long_cells_on_average() -> None:
    body = "\n".join(f"x = {i}" for i in range(7))
    nb = _good(body=body)
    nb.cells[1].source = (
        "from autograd_lessons import setup_notebook\nsetup_notebook()\n" + body[:11]
    )
    assert any("average" in problem for problem in skeleton_problems(nb, "09_x"))


def test_claim_check_reads_the_pytorch_value_of_a_compare_line() -> None:
    lines = [
        "✓ dL/dw2: exact match (by hand 5.0, PyTorch 5.0)",
        "≈ LeakyReLU w.grad: close match (by hand 0.0408, PyTorch 0.040800001, max diff 1.5e-09)",
        "✗ dL/db: MISMATCH (by hand 0.5, PyTorch 6.0, max diff 5.5)",
    ]
    assert claim_problem(Checked("x", "dL/dw2", 5.0), lines) is None
    assert claim_problem(Checked("x", "LeakyReLU w.grad", 0.0408), lines) is None
    assert "no `compare('dL/dw'" in str(claim_problem(Checked("x", "dL/dw", 5.0), lines))
    assert claim_problem(Checked("x", "dL/db", 0.5), lines) is not None  # a ✗ line never counts
    assert claim_problem(Checked("x", "dL/dw2", 5.5), lines) is not None


def test_claim_check_reads_the_first_number_after_a_label() -> None:
    lines = ["after backward 2: x.grad = 12.0", "y.grad: None", "tensor(6.)"]
    assert claim_problem(Printed("x", "after backward 2: x.grad =", 12.0), lines) is None
    assert claim_problem(Printed("x", "after backward 2: x.grad =", 6.0), lines) is not None
    assert claim_problem(Printed("x", "after backward 3: x.grad =", 18.0), lines) is not None
    assert claim_problem(Printed("x", "y.grad:", "None"), lines) is None
    assert claim_problem(Printed("x", "tensor(", "6.)"), lines) is None
    assert claim_problem(Printed("x", "tensor(", "12.)"), lines) is not None


def test_execution_check_rejects_errors_stderr_mismatches_and_stale_runs() -> None:
    good = _notebook(_ran("print(1)", "✓ a: exact match (by hand 1.0, PyTorch 1.0)\n"))
    assert execution_problems(good) == []
    mismatch = _notebook(_ran("print(1)", "✗ a: MISMATCH (by hand 1.0, PyTorch 2.0, max diff 1)\n"))
    assert any("mismatch" in p for p in execution_problems(mismatch))
    stale = _notebook(_ran("a = 1", "", count=1), _ran("b = 2", "", count=5))
    assert any("top to bottom" in p for p in execution_problems(stale))
    noisy = _ran("warn()", "")
    noisy.outputs = [nbformat.v4.new_output("stream", name="stderr", text="UserWarning: ...")]
    assert any("stderr" in p for p in execution_problems(_notebook(noisy)))
    failed = nbformat.v4.new_code_cell("1/0", execution_count=1)
    failed.outputs = [
        nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="", traceback=[])
    ]
    assert any("ZeroDivisionError" in p for p in execution_problems(_notebook(failed)))


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_stored_widget_view_without_its_still(lesson: str) -> None:
    """A widget's stored output is its still picture, never a view without state
    ("Error displaying widget: model not found" in JupyterLab, `VBox(...)` on GitHub)."""
    for cell in read(lesson).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            assert WIDGET_VIEW not in data, f"{lesson}: a stored widget view: {cell.source[:40]!r}"
            if "text/html" in data and "<img" in data["text/html"]:
                assert re.search(r'<img [^>]*alt="[^"]+"', data["text/html"]), cell.source[:40]


PREDICTION = re.compile(r"^my_prediction = \.\.\.  # \S", re.MULTILINE)


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_asks_for_a_prediction_and_checks_it(lesson: str) -> None:
    """Predict, then run: a `my_prediction = ...` cell, shipped unanswered, and later a
    `check_prediction(...)` whose stored output invites a guess (so CI runs it as shipped)."""
    nb = read(lesson)
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    asked = [i for i, source in enumerate(sources) if PREDICTION.search(source)]
    checked = [i for i, source in enumerate(sources) if "check_prediction(" in source]
    assert asked and checked and min(asked) < max(checked), lesson
    assert any(line.startswith("✎ ") for line in output_lines(nb)), lesson


# The errors lesson 8 reproduces: (message fragment, exception name), in order.
EXPECTED_ERRORS = {
    L8: [
        ("Trying to backward through the graph a second time", "RuntimeError"),
        ("element 0 of tensors does not require grad", "RuntimeError"),  # .item()
        ("element 0 of tensors does not require grad", "RuntimeError"),  # NumPy
        ("element 0 of tensors does not require grad", "RuntimeError"),  # .detach()
        ("element 0 of tensors does not require grad", "RuntimeError"),  # a plain leaf
        ("grad can be implicitly created only for scalar outputs", "RuntimeError"),
        ("modified by an inplace operation", "RuntimeError"),
        (
            "a leaf Variable that requires grad is being used in an in-place operation",
            "RuntimeError",
        ),
    ]
}


@pytest.mark.parametrize("lesson", LESSONS)
def test_cells_that_must_fail_fail_with_the_message_they_teach(lesson: str) -> None:
    """Every `raises-exception` cell stored its error, and those are the errors the lesson reads."""
    errors = []
    for cell in read(lesson).cells:
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        found = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        assert bool(found) == tagged, f"{lesson}: {cell.source[:40]!r} tagged {tagged}"
        errors += [(o.evalue, o.ename) for o in found]
    expected = EXPECTED_ERRORS.get(lesson, [])
    assert len(errors) == len(expected), errors
    for (evalue, ename), (fragment, name) in zip(errors, expected, strict=True):
        assert fragment in evalue and ename == name, (evalue, fragment)
