"""Build the sample class: six students' realistic nbgrader submissions of every exercise.

Each student fills the answer cells of the release notebooks (exercises/<name>/<name>.ipynb)
the way their profile says, and the result is written in nbgrader's submitted/ layout:
instructor/sample_class/<student>/<name>/<name>.ipynb plus a timestamp.txt. The output is
deterministic: the same release always gives byte-identical files. `--check` writes nothing
and exits 1 naming every file that differs from what would be generated.

The students:
  ada  all correct, by-hand arithmetic throughout
  ben  partly wrong: flipped signs and a dropped factor 2 (the slope of a square)
  cyd  other mistakes: a tensor instead of a number, a non-zero gradient behind a shut
       ReLU, an accumulated x3 gradient, and a training loop that never zeroes .grad
  dee  blank: submits every release notebook untouched
  eve  used autograd (.backward(), .grad) for hand answers: those score zero
  fay  mostly right (two answers rounded too early), and never submitted 06

The expected grades (instructor/sample_class/expected_grades.csv) are reasoned from these
profiles by hand, not produced by this script; see instructor/sample_class/README.md.
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
STUB_MARKER = "raise NotImplementedError()"
ANSWER_MARKER = "YOUR ANSWER HERE"

# ---------------------------------------------------------------- ada: the right answers

CORRECT: dict[str, dict[str, str]] = {
    "01_what_a_gradient_is": {
        "y_at_3": "y_at_3 = x**2",
        "slope_at_3": "slope_at_3 = 2 * x",
        "slope_at_minus_2": "slope_at_minus_2 = 2 * -2.0",
        "slope_at_0": "slope_at_0 = 2 * 0.0",
        "x_after_step": "x_after_step = x - step_size * slope_at_3",
        "y_after_step": "y_after_step = x_after_step**2",
    },
    "02_the_computation_graph": {
        "requires_grad_by_default": "requires_grad_by_default = False",
        "x_is_leaf": "x_is_leaf = True",
        "y_value": "y_value = x**2",
        "z_value": "z_value = 2 * y_value + 1",
        "operation_nodes": "operation_nodes = 3",
        "dz_dy": "dz_dy = 2.0",
        "dy_dx": "dy_dx = 2 * x",
        "dz_dx": "dz_dx = dz_dy * dy_dx",
    },
    "03_a_neuron_by_hand": {
        "h": "h = w * x + b",
        "a": "a = max(h, 0)",
        "L": "L = (a - y) ** 2",
        "dL_da": "dL_da = 2 * (a - y)",
        "da_dh": "da_dh = 1",
        "dL_dh": "dL_dh = dL_da * da_dh",
        "dh_dw": "dh_dw = x",
        "dh_db": "dh_db = 1",
        "dL_dw": "dL_dw = dL_dh * dh_dw",
        "dL_db": "dL_db = dL_dh * dh_db",
    },
    "04_the_dead_relu": {
        "h": "h = w * x + b",
        "a": "a = max(h, 0.0)",
        "L": "L = (a - y) ** 2",
        "dL_da": "dL_da = 2 * (a - y)",
        "da_dh": "da_dh = 0",
        "dL_dh": "dL_dh = dL_da * da_dh",
        "dL_dw": "dL_dw = dL_dh * x",
        "dL_db": "dL_db = dL_dh",
        "leaky_a": "leaky_a = leaky_slope * h",
        "leaky_L": "leaky_L = (leaky_a - y) ** 2",
        "leaky_dL_da": "leaky_dL_da = 2 * (leaky_a - y)",
        "leaky_da_dh": "leaky_da_dh = leaky_slope",
        "leaky_dL_dw": "leaky_dL_dw = leaky_dL_da * leaky_da_dh * x",
        "leaky_dL_db": "leaky_dL_db = leaky_dL_da * leaky_da_dh",
    },
    "05_three_mechanics": {
        "x_grad": "x_grad = 15 * x_cube**2",
        "y_grad": "y_grad = 5",
        "y_grad_is_none_without_retain": "y_grad_is_none_without_retain = True",
        "grad_after_three_calls": "grad_after_three_calls = 3 * 2 * x_square",
        "grad_after_zero_and_backward": "grad_after_zero_and_backward = 2 * x_square",
        "requires_grad_inside_no_grad": "requires_grad_inside_no_grad = False",
        "detached_value": "detached_value = x_square**2",
        "detached_requires_grad": "detached_requires_grad = False",
        "train": "x.grad.zero_()",
        "grad_of_intermediate": "y.retain_grad()",
    },
    "06_one_backward_every_parameter": {
        "y_value": "y_value = w * x + b",
        "loss": "loss = (y_value - target) ** 2",
        "dL_dy": "dL_dy = 2 * (y_value - target)",
        "dy_dw": "dy_dw = x",
        "dL_dw": "dL_dw = dL_dy * dy_dw",
        "dL_db": "dL_db = dL_dy * 1",
    },
    "07_try_it": {
        "y_at_4": "y_at_4 = x_cubic**3 - 2 * x_cubic",
        "dy_dx_at_4": "dy_dx_at_4 = 3 * x_cubic**2 - 2",
        "out": "a = max(w * x + b, 0)\nout = w2 * a",
        "L": "L = (out - y) ** 2",
        "dL_dout": "dL_dout = 2 * (out - y)",
        "dL_dw2": "dL_dw2 = dL_dout * a",
        "dL_da": "dL_da = dL_dout * w2",
        "dL_dh": "dL_dh = dL_da * 1",
        "dL_dw": "dL_dw = dL_dh * x",
        "dL_db": "dL_db = dL_dh",
    },
}

WRITTEN_GOOD: dict[str, dict[str, str]] = {
    "01_what_a_gradient_is": {
        "which_way_to_step": (
            "To the right. The slope is negative, so y goes down when x goes up; stepping "
            "against the slope, x - 0.1 * (-4), increases x towards the minimum at 0."
        )
    },
    "02_the_computation_graph": {
        "what_the_node_remembers": (
            "It keeps x = 3, because its local slope is 2x and it needs x to compute it on "
            "the way back. All those saved inputs stay in memory until backward, which is "
            "why training needs more memory than inference."
        )
    },
    "03_a_neuron_by_hand": {
        "why_dw_is_twice_db": (
            "Only the last factor differs: dh/dw = x = 2 but dh/db = 1. Everything before "
            "it (dL/dh = 6) is shared, so dL/dw = 12 and dL/db = 6."
        )
    },
    "04_the_dead_relu": {
        "why_both_are_zero": (
            "h = -4, so the ReLU is closed: it outputs 0 and its slope is 0. That 0 "
            "multiplies everything on the way back, so w and b get nothing although the "
            "loss is 4. If h is negative for every example the neuron never learns again."
        )
    },
    "05_three_mechanics": {
        "why_gradients_accumulate": (
            "Gradient accumulation: add up the gradients of several small batches and step "
            "once, when the big batch does not fit in memory. zero_grad() goes at the start "
            "of every iteration, before loss.backward()."
        )
    },
    "06_one_backward_every_parameter": {
        "one_call_at_scale": (
            "One. backward() walks the whole graph once from the loss, and the graph "
            "reaches every parameter, so each .grad is filled in that single walk."
        )
    },
    "07_try_it": {
        "what_w2_changed": (
            "dL/dout is 1 instead of 6 because out = 2.5 is close to the target, and the "
            "chain has an extra factor w2 = 0.5: 1 * 0.5 * 1 * 2 = 1."
        )
    },
}


@dataclass(frozen=True)
class Student:
    """One profile: the answers that differ from ada's, and what is left out."""

    name: str
    profile: str
    overrides: dict[str, dict[str, str]] = field(default_factory=dict)
    written: dict[str, dict[str, str]] = field(default_factory=dict)
    not_submitted: tuple[str, ...] = ()
    blank: bool = False
    day_offset: int = 0


def _autograd_cell(setup: str, answer: str) -> str:
    return f"import torch\n\n{setup}\n{answer}"


STUDENTS: tuple[Student, ...] = (
    Student("ada", "all correct, by hand", written=WRITTEN_GOOD, day_offset=0),
    Student(
        "ben",
        "flipped signs and a dropped factor 2",
        overrides={
            # Steps with the slope instead of against it; the next value follows from it.
            "01_what_a_gradient_is": {"x_after_step": "x_after_step = x + step_size * slope_at_3"},
            # d(x^2)/dx = x: the 2 of the square is dropped; dz/dx inherits it.
            "02_the_computation_graph": {"dy_dx": "dy_dx = x"},
            # 2(a - y) without the 2; every gradient after it is halved too.
            "03_a_neuron_by_hand": {"dL_da": "dL_da = a - y"},
            # (y - a) instead of (a - y): the sign flips (harmless behind the shut gate).
            "04_the_dead_relu": {
                "dL_da": "dL_da = 2 * (y - a)",
                "leaky_dL_da": "leaky_dL_da = 2 * (y - leaky_a)",
            },
            "05_three_mechanics": {
                "grad_after_three_calls": "grad_after_three_calls = 3 * x_square",
                "grad_after_zero_and_backward": "grad_after_zero_and_backward = x_square",
                # retain_grad() on the leaf instead of the intermediate: y.grad stays None.
                "grad_of_intermediate": "x.retain_grad()",
            },
            "06_one_backward_every_parameter": {"dL_dy": "dL_dy = 2 * (target - y_value)"},
            "07_try_it": {
                "dy_dx_at_4": "dy_dx_at_4 = 3 * x_cubic**2 + 2",
                "dL_dout": "dL_dout = out - y",
            },
        },
        written={
            "01_what_a_gradient_is": {
                "which_way_to_step": "Left, because the slope is negative so we go down."
            },
            "02_the_computation_graph": {
                "what_the_node_remembers": "It remembers y = 9 so it can pass the gradient back."
            },
            "03_a_neuron_by_hand": {"why_dw_is_twice_db": "Because w is multiplied by x = 2."},
            "04_the_dead_relu": {
                "why_both_are_zero": "The loss is small so the gradient becomes zero."
            },
            "05_three_mechanics": {
                "why_gradients_accumulate": (
                    "So you can call backward several times. zero_grad goes after step()."
                )
            },
            "06_one_backward_every_parameter": {
                "one_call_at_scale": "A million, one backward per parameter."
            },
            "07_try_it": {"what_w2_changed": "w2 = 0.5 halves everything."},
        },
        day_offset=1,
    ),
    Student(
        "cyd",
        "a tensor, a shut gate ignored, an accumulated x3 gradient, a loop that never zeroes",
        overrides={
            # A tensor instead of a number; the step after it is built on it.
            "01_what_a_gradient_is": {
                "slope_at_3": "import torch\n\nslope_at_3 = torch.tensor(2 * x)"
            },
            # Counts the leaf x as a node.
            "02_the_computation_graph": {"operation_nodes": "operation_nodes = 4"},
            # Treats the ReLU as open although h < 0: non-zero gradients behind a shut gate.
            "04_the_dead_relu": {"da_dh": "da_dh = 1.0"},
            "05_three_mechanics": {
                # Forgets that zero_() emptied .grad: 3 x the gradient of one call.
                "grad_after_zero_and_backward": "grad_after_zero_and_backward = 3 * 2 * x_square",
                # Deletes the placeholder and adds nothing: x.grad is never zeroed.
                "train": "",
            },
            "07_try_it": {"dy_dx_at_4": "dy_dx_at_4 = 3 * x_cubic**2 - 2 * x_cubic"},
        },
        written={
            "01_what_a_gradient_is": {"which_way_to_step": "right"},
            "02_the_computation_graph": {"what_the_node_remembers": "x"},
            "03_a_neuron_by_hand": {"why_dw_is_twice_db": "x = 2"},
            "04_the_dead_relu": {"why_both_are_zero": "relu gives 0"},
            "05_three_mechanics": {"why_gradients_accumulate": "big batches, before backward"},
            "06_one_backward_every_parameter": {"one_call_at_scale": "one"},
            "07_try_it": {"what_w2_changed": "w2"},
        },
        day_offset=2,
    ),
    Student("dee", "blank: submits the release untouched", blank=True, day_offset=3),
    Student(
        "eve",
        "autograd instead of hand arithmetic for the gradients",
        overrides={
            "01_what_a_gradient_is": {
                "slope_at_3": _autograd_cell(
                    "t = torch.tensor(3.0, requires_grad=True)\n(t**2).backward()",
                    "slope_at_3 = t.grad.item()",
                ),
                "slope_at_minus_2": _autograd_cell(
                    "t = torch.tensor(-2.0, requires_grad=True)\n(t**2).backward()",
                    "slope_at_minus_2 = t.grad.item()",
                ),
                "slope_at_0": _autograd_cell(
                    "t = torch.tensor(0.0, requires_grad=True)\n(t**2).backward()",
                    "slope_at_0 = t.grad.item()",
                ),
                # She copied the printed 6 into the step: by hand, so it counts.
                "x_after_step": "x_after_step = x - step_size * 6.0",
            },
            "02_the_computation_graph": {
                "dy_dx": _autograd_cell(
                    "xt = torch.tensor(x, requires_grad=True)\n"
                    "(dy_dx_t,) = torch.autograd.grad(xt**2, xt)",
                    "dy_dx = dy_dx_t.item()",
                ),
                "dz_dx": _autograd_cell(
                    "xt = torch.tensor(x, requires_grad=True)\nzt = 2 * xt**2 + 1\nzt.backward()",
                    "dz_dx = xt.grad.item()",
                ),
            },
            "03_a_neuron_by_hand": {
                "dL_da": _autograd_cell(
                    "wt = torch.tensor(w, requires_grad=True)\n"
                    "bt = torch.tensor(b, requires_grad=True)\n"
                    "ht = wt * x + bt\nht.retain_grad()\n"
                    "at = torch.relu(ht)\nat.retain_grad()\n"
                    "((at - y) ** 2).backward()",
                    "dL_da = at.grad.item()",
                ),
                "dL_dh": "dL_dh = ht.grad.item()",
                "dL_dw": "dL_dw = wt.grad.item()",
                "dL_db": "dL_db = bt.grad.item()",
            },
            "04_the_dead_relu": {
                "leaky_dL_dw": _autograd_cell(
                    "wt = torch.tensor(w, requires_grad=True)\n"
                    "bt = torch.tensor(b, requires_grad=True)\n"
                    "at = torch.nn.functional.leaky_relu(wt * x + bt, leaky_slope)\n"
                    "((at - y) ** 2).backward()",
                    "leaky_dL_dw = wt.grad.item()",
                ),
                "leaky_dL_db": "leaky_dL_db = bt.grad.item()",
            },
            "05_three_mechanics": {
                "x_grad": (
                    "xt = torch.tensor(x_cube, requires_grad=True)\nyt = xt**3\n"
                    "yt.retain_grad()\nzt = yt * 5\nzt.backward()\nx_grad = xt.grad.item()"
                ),
                "y_grad": "y_grad = yt.grad.item()",
                "grad_after_three_calls": (
                    "xt = torch.tensor(x_square, requires_grad=True)\n"
                    "for _ in range(3):\n    (xt**2).backward()\n"
                    "grad_after_three_calls = xt.grad.item()"
                ),
                "grad_after_zero_and_backward": "grad_after_zero_and_backward = 6.0",
            },
            "06_one_backward_every_parameter": {
                "dL_dw": _autograd_cell(
                    "wt = torch.tensor(w, requires_grad=True)\n"
                    "bt = torch.tensor(b, requires_grad=True)\n"
                    "loss_t = (wt * x + bt - target) ** 2\nloss_t.backward()",
                    "dL_dw = wt.grad.item()",
                ),
                "dL_db": "dL_db = bt.grad.item()",
            },
            "07_try_it": {
                "dy_dx_at_4": _autograd_cell(
                    "xt = torch.tensor(x_cubic, requires_grad=True)\n(xt**3 - 2 * xt).backward()",
                    "dy_dx_at_4 = xt.grad.item()",
                ),
                "dL_dout": _autograd_cell(
                    "wt = torch.tensor(w, requires_grad=True)\n"
                    "bt = torch.tensor(b, requires_grad=True)\n"
                    "w2t = torch.tensor(w2, requires_grad=True)\n"
                    "ht = wt * x + bt\nht.retain_grad()\n"
                    "at = torch.relu(ht)\nat.retain_grad()\n"
                    "outt = w2t * at\noutt.retain_grad()\n"
                    "((outt - y) ** 2).backward()",
                    "dL_dout = outt.grad.item()",
                ),
                "dL_dw2": "dL_dw2 = w2t.grad.item()",
                "dL_da": "dL_da = at.grad.item()",
                "dL_dh": "dL_dh = ht.grad.item()",
                "dL_dw": "dL_dw = wt.grad.item()",
                "dL_db": "dL_db = bt.grad.item()",
            },
        },
        written={
            "01_what_a_gradient_is": {
                "which_way_to_step": "Right: PyTorch gives x.grad = -4, and x -= lr * grad goes up."
            },
            "02_the_computation_graph": {
                "what_the_node_remembers": (
                    "PowBackward0 saves x (you can see it in grad_fn._saved_self) because the "
                    "derivative 2x needs it."
                )
            },
            "03_a_neuron_by_hand": {
                "why_dw_is_twice_db": "w.grad is 12 and b.grad is 6 when I run it: x = 2."
            },
            "04_the_dead_relu": {
                "why_both_are_zero": "ReLU's gradient is 0 for negative inputs, so nothing flows."
            },
            "05_three_mechanics": {
                "why_gradients_accumulate": (
                    "For gradient accumulation over micro-batches. Call zero_grad() every step."
                )
            },
            "06_one_backward_every_parameter": {
                "one_call_at_scale": "One, autograd handles all parameters in the graph."
            },
            "07_try_it": {"what_w2_changed": "The printed grads changed because of w2."},
        },
        day_offset=4,
    ),
    Student(
        "fay",
        "mostly right; two answers rounded too early; 06 not submitted",
        overrides={
            "03_a_neuron_by_hand": {
                "dL_da": "dL_da = 2 * (5 - 2)",
                "dL_dw": "dL_dw = 6 * 2",
                "dL_db": "dL_db = 6 * 1",
            },
            "04_the_dead_relu": {
                "leaky_dL_dw": "leaky_dL_dw = 0.04",
                "leaky_dL_db": "leaky_dL_db = -0.04",
            },
        },
        written={
            "01_what_a_gradient_is": {
                "which_way_to_step": (
                    "Right (x increases). Negative slope = y falls as x grows, and the step "
                    "goes against the slope."
                )
            },
            "02_the_computation_graph": {
                "what_the_node_remembers": (
                    "The input x, since d(x^2)/dx = 2x depends on it. These saved tensors are "
                    "the extra memory training needs."
                )
            },
            "03_a_neuron_by_hand": {
                "why_dw_is_twice_db": "dh/dw = x = 2 while dh/db = 1; the rest of the chain is 6."
            },
            "04_the_dead_relu": {
                "why_both_are_zero": (
                    "The ReLU is shut (h < 0), its slope 0 multiplies the gradient to w and b. "
                    "Negative for every example means the neuron is dead for good."
                )
            },
            "05_three_mechanics": {
                "why_gradients_accumulate": (
                    "To sum gradients over several mini-batches (bigger effective batch). "
                    "zero_grad() before each backward()."
                )
            },
            "07_try_it": {
                "what_w2_changed": "2(out - y) became 1 and the chain gained a factor w2 = 0.5."
            },
        },
        not_submitted=("06_one_backward_every_parameter",),
        day_offset=5,
    ),
)


def assignments(release: Path) -> list[str]:
    """The assignment names found in the release folder, in order."""
    return sorted(p.name for p in release.iterdir() if (p / f"{p.name}.ipynb").is_file())


def fill_code(source: str, answer: str) -> str:
    """Replace the stub (its `YOUR ANSWER HERE` comment and `raise`) with `answer`."""
    lines = source.split("\n")
    index = next((i for i, line in enumerate(lines) if line.strip() == STUB_MARKER), None)
    if index is None:
        raise ValueError(f"no `{STUB_MARKER}` line in:\n{source}")
    start = index - 1 if index > 0 and ANSWER_MARKER in lines[index - 1] else index
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    new = [indent + line if line else line for line in answer.split("\n")] if answer else []
    return "\n".join(lines[:start] + new + lines[index + 1 :])


def submission(release_nb: Any, assignment: str, student: Student) -> Any:
    """The notebook `student` hands in for `assignment`."""
    nb = copy.deepcopy(release_nb)
    if student.blank:
        return nb
    answers = {**CORRECT[assignment], **student.overrides.get(assignment, {})}
    written = student.written.get(assignment, {})
    used: set[str] = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if not meta.get("solution"):
            continue
        if cell.cell_type == "code" and grade_id in answers:
            cell.source = fill_code(cell.source, answers[grade_id])
            used.add(grade_id)
        elif cell.cell_type == "markdown" and grade_id in written:
            cell.source = written[grade_id]
            used.add(grade_id)
    unknown = (set(answers) | set(written)) - used
    if unknown:
        raise ValueError(f"{assignment}: no answer cell for {sorted(unknown)}")
    return nb


def timestamp(assignment_index: int, student: Student) -> str:
    """When the student submitted: a week per assignment, each student on their own day."""
    day = 2 + 7 * assignment_index + student.day_offset
    month, day = (3, day) if day <= 31 else (4, day - 31)
    return f"2026-{month:02d}-{day:02d} {17 + student.day_offset % 3}:30:00.000000 UTC"


def build(release: Path, out: Path) -> list[Path]:
    """Write every submission under `out`; return the files written."""
    written: list[Path] = []
    names = assignments(release)
    missing = set(CORRECT) - set(names)
    if missing:
        raise SystemExit(f"error: {release} lacks release notebooks for {sorted(missing)}")
    for student in STUDENTS:
        for index, name in enumerate(names):
            if name in student.not_submitted:
                continue
            release_nb = nbformat.read(release / name / f"{name}.ipynb", as_version=4)
            nb = submission(release_nb, name, student)
            folder = out / student.name / name
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
            (folder / "timestamp.txt").write_text(timestamp(index, student) + "\n")
            written += [folder / f"{name}.ipynb", folder / "timestamp.txt"]
    return written


def differences(generated: Path, committed: Path) -> list[str]:
    """Files that differ between a fresh build and the committed sample class."""

    def files(root: Path) -> set[Path]:
        return {
            p.relative_to(root)
            for s in STUDENTS
            if (root / s.name).is_dir()
            for p in (root / s.name).rglob("*")
            if p.is_file()
        }

    fresh, stored = files(generated), files(committed)
    problems = [f"{rel}: missing" for rel in sorted(fresh - stored)]
    problems += [f"{rel}: not generated by this script" for rel in sorted(stored - fresh)]
    problems += [
        f"{rel}: differs"
        for rel in sorted(fresh & stored)
        if (generated / rel).read_bytes() != (committed / rel).read_bytes()
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: build the sample class, or --check that it is current."""
    parser = argparse.ArgumentParser(
        prog="make_sample_class",
        description=__doc__.split("\n\n")[0],
        epilog="Profiles: " + "; ".join(f"{s.name}: {s.profile}" for s in STUDENTS),
    )
    parser.add_argument(
        "--release",
        type=Path,
        default=REPO_ROOT / "exercises",
        help="folder of release notebooks <name>/<name>.ipynb (default: exercises/)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "instructor" / "sample_class",
        help="where to write <student>/<name>/<name>.ipynb (default: instructor/sample_class/)",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if --out is out of date"
    )
    args = parser.parse_args(argv)
    if not args.release.is_dir():
        print(f"error: no release folder {args.release} (run `make exercises`)", file=sys.stderr)
        return 2
    if args.check:
        with tempfile.TemporaryDirectory(prefix="sample-class-") as tmp:
            build(args.release, Path(tmp))
            problems = differences(Path(tmp), args.out)
        for line in problems:
            print(f"stale: {line}")
        if problems:
            print("the sample class is out of date: run `python tools/make_sample_class.py`")
            return 1
        print("the sample class is up to date")
        return 0
    files = build(args.release, args.out)
    print(f"wrote {len(files) // 2} submissions of {len(STUDENTS)} students to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
