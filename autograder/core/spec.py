"""The exercise spec format.

An exercise is stated once, in `autograder/specs/exNN_*.py`, as an `ExerciseSpec`:
its given values with the rules that draw them, a PyTorch program that names every
quantity, and its parts. Everything else (references, diagnoses, the graded cells of the
solution notebook, the sample class's right answers, the docs tables) is derived from it.

How a learner's numbers are drawn is `autograder.core.givens`; the course's specs, by
name, are `autograder.specs`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from autograder.core.tape import Tape
    from autograder.core.tasks import ClassTask, FunctionTask

Kind = Literal["forward", "local_slope", "gradient", "fact", "function", "class"]
CODE_KINDS = ("function", "class")
"""Kinds answered with code the grader runs (no hand number to read)."""
Gate = Literal["open", "shut"]
Role = Literal["given", "slope", "value", "upstream", "calls"]


@dataclass(frozen=True)
class Given:
    """One given value and the values it may be drawn from."""

    name: str
    choices: tuple[float, ...]
    lesson: float
    """The lesson's value: never drawn for this given."""
    meaning: str = ""


@dataclass(frozen=True)
class Factor:
    """One factor of a chain: an expression over the exercise's names, and its role.

    `given`: a given value (its misuse is diagnosed by name); `slope`: a node's local slope
    (label names the node); `value`: a forward quantity such as (a - y); `upstream`: an
    earlier part's answer; `calls`: how many backward calls added up.
    """

    expr: str
    role: Role
    label: str = ""


def given(name: str) -> Factor:
    """A factor that is the given value `name`."""
    return Factor(name, "given", name)


def upstream(name: str) -> Factor:
    """A factor that is the earlier part `name`."""
    return Factor(name, "upstream", name)


def slope(expr: str, label: str) -> Factor:
    """A node's local slope, e.g. slope("2", "the square's ×2")."""
    return Factor(expr, "slope", label)


def value(expr: str) -> Factor:
    """A forward value used as a factor, e.g. value("a - y")."""
    return Factor(expr, "value", expr)


@dataclass(frozen=True)
class Part:
    """One graded part: the quantity, how it is asked, answered and diagnosed.

    `of` says which quantity PyTorch computes: (node,) for a forward value,
    (output, node) for a gradient d output / d node or a local slope.
    `factors` is the chain a learner multiplies (their product must equal PyTorch's value);
    `solution` is the model answer's right-hand side (default: the factors multiplied).
    """

    name: str
    label: str
    kind: Kind
    hint: str
    formula: str
    """What the stub says to compute, e.g. "dL/dh × dh/dw"."""
    of: tuple[str, ...] = ()
    points: int = 1
    factors: tuple[Factor, ...] = ()
    solution: str = ""
    gate: Gate | None = None
    calls: int = 1
    """Backward calls whose gradients accumulate into this quantity."""
    fact: Callable[[Tape], float | bool] | None = None
    task: FunctionTask | None = None
    build: ClassTask | None = None
    """For a "class" part: the class and the graphs it is judged on."""
    mistakes: tuple[tuple[str, str, str], ...] = ()
    """Known wrong answers: (reason, expression, explanation)."""
    title: str = ""
    """The part's heading in the notebook (default: the label)."""

    @property
    def answer(self) -> str:
        """The model answer's right-hand side (the last line of a multi-line solution)."""
        if self.solution:
            return self.solution.split("\n")[-1]
        return " * ".join(f.expr if f.role != "value" else f"({f.expr})" for f in self.factors)

    @property
    def code(self) -> str:
        """The model answer as the learner writes it: `name = ...` (after any setup lines)."""
        setup = self.solution.split("\n")[:-1] if self.solution else []
        return "\n".join([*setup, f"{self.name} = {self.answer}"])

    @property
    def stub(self) -> str:
        """The comment above the answer: what to assign and how it is computed."""
        return f"# {self.name} = ...  ({self.formula})"

    @property
    def code_names(self) -> tuple[tuple[str, str], ...]:
        """Every name the model answer's `code` uses, as (name, "Load" or "Store"), in the
        order `ast.walk` meets them. Parsed once per code: a diagnosis asks for every wrong
        answer it explains."""
        return _names_in(self.code)


@functools.lru_cache(maxsize=2048)
def _names_in(code: str) -> tuple[tuple[str, str], ...]:
    import ast

    return tuple(
        (node.id, type(node.ctx).__name__)
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Name)
    )


class Structure:
    """One structure an exercise's program may take (the power of x, the activation, ...):
    a small frozen dataclass of its choices, defined by the spec that varies. In a class
    each learner's structure is drawn from their key like their numbers; in self-study it
    is the lesson's."""

    @property
    def tag(self) -> str:
        """A short name, unique among the exercise's structures (e.g. "k3")."""
        raise NotImplementedError

    @property
    def words(self) -> str:
        """The learner's problem in words and math, as the Given cell prints it."""
        raise NotImplementedError

    @property
    def claims(self) -> tuple[tuple[str, str], ...]:
        """What the words state, as (node, Python arithmetic over the givens) pairs: the
        tests check each against the program's node for many learners."""
        raise NotImplementedError


def fraction_python(k: Fraction) -> str:
    """A fraction as Python arithmetic: 2, 1 / 2, 3 / 2."""
    return str(k.numerator) if k.denominator == 1 else f"{k.numerator} / {k.denominator}"


def scaled_python(k: Fraction, term: str) -> str:
    """k × `term` (a bracketed or atomic term) as Python arithmetic: 3 * x**2 / 2."""
    scaled = term if k.numerator == 1 else f"{k.numerator} * {term}"
    return scaled if k.denominator == 1 else f"{scaled} / {k.denominator}"


def scaled_math(k: Fraction, term: str) -> str:
    """k × `term` in math: 2(w·x + b), (a − y)²/2, 3x²/2."""
    scaled = term if k.numerator == 1 else f"{k.numerator}{term}"
    return scaled if k.denominator == 1 else f"{scaled}/{k.denominator}"


class ScaledSquare:
    """A structure with one square scaled by top/bottom (a frozen dataclass with the int
    fields `top` and `bottom`): its scale, and the square's slope's multiple."""

    top: int
    bottom: int

    @property
    def scale(self) -> Fraction:
        return Fraction(self.top, self.bottom)

    def scale_tag(self, prefix: str) -> str:
        """The scale in a structure's tag: c3, c3_2 (prefix "c")."""
        return f"{prefix}{self.top}" + ("" if self.bottom == 1 else f"_{self.bottom}")

    @property
    def twice(self) -> str:
        """2·top/bottom, the square's slope's multiple of its base, as Python arithmetic:
        2, 1, 3 / 2."""
        return fraction_python(2 * self.scale)

    def square_slope(self, base: str, wrt: str) -> Factor:
        """The scaled square's local slope with respect to `wrt`, a multiple of `base`
        (in math, e.g. "y − target"): the 2 of the square, or 2·top/bottom."""
        if self.scale == 1:
            label = f"the 2 of the square (d ({base})²/d{wrt} = 2({base}))"
        else:
            label = f"the {self.twice} of d({scaled_math(self.scale, f'({base})²')})/d{wrt}"
        return slope(self.twice, label)


@dataclass(frozen=True)
class ExerciseSpec:
    """One exercise, stated once."""

    name: str
    title: str
    givens: tuple[Given, ...]
    program: Callable[[Tape], None]
    parts: tuple[Part, ...]
    constraints: tuple[tuple[str, Callable[[Mapping[str, float]], bool]], ...] = ()
    """(what must hold, test on the drawn givens)."""
    constants: Mapping[str, float] = field(default_factory=dict)
    """Fixed numbers the learner also gets (not drawn), e.g. {}."""
    repeated_backward: tuple[str, ...] = ()
    """Parts whose gradient comes from repeated backward() calls: only there is
    accumulation blamed."""
    written: tuple[tuple[str, int], ...] = ()
    """Answers in words, read by the teacher: (grade id, points)."""
    lesson: str = ""
    """The lesson notebook this exercise practises (its numbers are the worked example)."""
    structure: Structure | None = None
    """The structure this spec states (None: the exercise has one structure only)."""
    variants: tuple[Structure, ...] = ()
    """The structures a class's learners draw from (never the lesson's)."""
    vary: Callable[[Structure], ExerciseSpec] | None = None
    """The spec for another structure: the same program and parts, stated for it."""

    def varied(self, tag: str) -> ExerciseSpec:
        """This exercise for the structure `tag`, named `<name>[<tag>]`; KeyError naming
        the valid tags."""
        chosen = [s for s in self.variants if s.tag == tag]
        if not chosen or self.vary is None:
            valid = ", ".join(s.tag for s in self.variants) or "none"
            raise KeyError(f"{self.name} has no structure {tag!r}; valid: {valid}")
        return replace(self.vary(chosen[0]), name=f"{self.name}[{tag}]")

    @property
    def max_points(self) -> int:
        """Every point of the exercise, written answers included."""
        return sum(p.points for p in self.parts) + sum(points for _, points in self.written)

    @property
    def given_names(self) -> tuple[str, ...]:
        """The given values' names, in order."""
        return tuple(g.name for g in self.givens)

    def part(self, name: str) -> Part:
        """The part called `name`; KeyError naming the valid ones."""
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} grades no {name!r}; valid: {', '.join(self.part_names)}")

    @property
    def part_names(self) -> tuple[str, ...]:
        """The graded parts' names, in order."""
        return tuple(p.name for p in self.parts)

    def letter(self, name: str) -> str:
        """The part's letter in the notebook (A, B, ...); written answers come last."""
        names = [*self.part_names, *(grade_id for grade_id, _ in self.written)]
        return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[names.index(name)]

    @property
    def lesson_givens(self) -> dict[str, float]:
        """The lesson's numbers (the worked example), which no learner draws."""
        return {g.name: g.lesson for g in self.givens}


def pairwise_different(*names: str) -> tuple[str, Callable[[Mapping[str, float]], bool]]:
    """Constraint: the named givens can be told apart in any product: they differ in size,
    none is twice another (the 2 of a square), no two multiply to 1, and none is the
    product of two others."""

    def test(g: Mapping[str, float]) -> bool:
        sizes = [round(abs(g[n]), 9) for n in names]
        distinct = set(sizes)
        if len(distinct) != len(sizes) or any(round(2 * a, 9) in distinct for a in sizes):
            return False
        for i, a in enumerate(sizes):
            for b in sizes[i + 1 :]:
                product = round(a * b, 9)
                if product == 1 or product in distinct:
                    return False
        return True

    return (f"{', '.join(names)} can be told apart in a product", test)
