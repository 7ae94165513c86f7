"""The capstone's classic buggy classes, each written as learners write it: exercise 09's
solution cells with one edit, where the bug lives. Shared by the tests that judge them
live and through the grader (tests/answers/test_class_answers.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
CAPSTONE = "09_autograd_by_hand"
CLASS_CELLS = ("value_add", "value_mul", "value_pow", "value_relu")
APPEND = ""
"""An edit whose text to replace is this appends its new text to the cell."""

LESSON_MINUS = """
Value.__neg__ = lambda self: self * -1
Value.__sub__ = lambda self, other: self + (-other)
Value.__rsub__ = lambda self, other: Value(other) - self
"""
LESSON_DIVISION = """
Value.__truediv__ = lambda self, other: self * other**-1
Value.__rtruediv__ = lambda self, other: other * self**-1
"""
DENOMINATOR = "-self.data / other.data**2 * out.grad"
MUL_SIDES = "self.grad += other.data * out.grad\n        other.grad += self.data * out.grad"
BFS = """        self.grad = 1.0
        todo, queued = [self], {self}
        while todo:
            node = todo.pop(0)
            node._backward()
            for child in node._prev:
                if child not in queued:
                    queued.add(child)
                    todo.append(child)"""
WALK = """        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()"""

# name -> (cell, text to replace, its replacement), the bug's key, the class's points of 8
CLASSES: dict[str, tuple[tuple[str, str, str] | None, str, int]] = {
    "right (the solution)": (None, "", 8),
    "lesson's unary minus (self * -1) and a - b = a + (-b)": (
        ("value_mul", APPEND, LESSON_MINUS), "", 8),
    "= for += in __add__": (
        ("value_add", "self.grad += out.grad", "self.grad = out.grad"), "overwrite_add", 7),
    "topological list not reversed": (
        ("value_add", "for node in reversed(order):", "for node in order:"), "unreversed", 1),
    "no visited set": (("value_add", "if node not in seen:", "if True:"), "no_visited", 7),
    "output's grad never set to 1": (("value_add", "self.grad = 1.0\n", "\n"), "no_seed", 0),
    "breadth-first backward()": (("value_add", WALK, BFS), "order", 7),
    "missing __radd__": (("value_add", "    __radd__ = __add__\n", ""), "missing___radd__", 6),
    "missing __rmul__": (
        ("value_mul", "Value.__mul__ = Value.__rmul__ = _mul", "Value.__mul__ = _mul"),
        "missing___rmul__", 7),
    "* uses each side's own value": (
        ("value_mul", MUL_SIDES, MUL_SIDES.replace("other.data *", "X").replace(
            "self.data *", "other.data *").replace("X", "self.data *")), "mul_own", 7),
    "* without its local factor": (
        ("value_mul", MUL_SIDES, "self.grad += out.grad\n        other.grad += out.grad"),
        "mul_factor", 7),
    "unary - with slope +1": (
        ("value_mul", "self.grad += -out.grad", "self.grad += out.grad"), "neg_sign", 7),
    "__neg__ cuts the graph": (
        ("value_mul", APPEND, "\nValue.__neg__ = lambda self: Value(-self.data)\n"),
        "cut_neg", 7),
    "__rsub__ with operands swapped": (
        ("value_mul", "other + (-self)", "self + (-other)"), "rsub_swap", 7),
    "**'s slope written n * x**n": (
        ("value_pow", "n * self.data ** (n - 1)", "n * self.data ** n"), "pow_power", 7),
    "**'s slope without n": (
        ("value_pow", "n * self.data ** (n - 1)", "self.data ** (n - 1)"), "pow_factor", 7),
    "ReLU's slope taken as its output": (
        ("value_relu", "(1.0 if self.data > 0 else 0.0)", "out.data"), "relu_output", 7),
    "ReLU's slope 1 at the kink (>= 0)": (
        ("value_relu", "self.data > 0", "self.data >= 0"), "relu_kink", 7),
    "ReLU's slope on the wrong side": (
        ("value_relu", "self.data > 0", "self.data < 0"), "relu_side", 7),
    "lesson's division (self * other**-1)": (("value_pow", APPEND, LESSON_DIVISION), "", 8),
    "/'s slope towards b with the wrong sign": (
        ("value_pow", DENOMINATOR, DENOMINATOR[1:]), "div_sign", 7),
    "/'s slope towards b without its square": (
        ("value_pow", DENOMINATOR, "-self.data / other.data * out.grad"), "div_square", 7),
    "/'s slope towards b without 1/b²": (
        ("value_pow", DENOMINATOR, "-self.data * out.grad"), "div_square", 7),
    "/'s slope towards a written b, as *'s": (
        ("value_pow", "out.grad / other.data", "other.data * out.grad"), "div_numerator", 7),
    "__rtruediv__ with operands swapped": (
        ("value_pow", "Value(other) / self", "self / Value(other)"), "rdiv_swap", 7),
    "missing __rtruediv__": (
        ("value_pow", "Value.__rtruediv__ = lambda self, other: Value(other) / self\n", ""),
        "missing___rtruediv__", 7),
    "= for += in __truediv__": (
        ("value_pow", "other.grad += -self.data", "other.grad = -self.data"), "overwrite_div", 7),
}  # fmt: skip


def solution_cells() -> dict[str, str]:
    """The class cells of the solution notebook, solution markers removed."""
    path = ROOT / "solutions" / CAPSTONE / f"{CAPSTONE}.ipynb"
    cells = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c.source
        for c in nbformat.read(path, as_version=4).cells
    }
    return {
        name: cells[name].replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "")
        for name in CLASS_CELLS
    }


def class_cells(name: str) -> dict[str, str]:
    """The class cells of the class `name`, the bug put where it lives."""
    cells = solution_cells()
    edit = CLASSES[name][0]
    if edit is not None:
        cell, old, new = edit
        if old == APPEND:
            cells[cell] += new
        else:
            assert old in cells[cell], (name, old)
            cells[cell] = cells[cell].replace(old, new)
    return cells
