"""Read hand answers from notebook cells without running them.

The trusted grader calls `read_hand_answers` on untrusted submissions, so nothing here
executes learner code: `byhand_cells` parses each cell with `ast`, this module follows
its statements in order and binds names, and `byhand_arithmetic` evaluates only plain
arithmetic within fixed caps. Each right-hand side is evaluated once per statement (not
once per target), so reading a cell costs time in proportion to its length.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

from autograder.diagnosis.byhand_arithmetic import (
    AUTOGRAD_ATTRIBUTES,
    AUTOGRAD_NAMES,
    MATH_CONSTANTS,
    MATH_FUNCTIONS,
    MAX_DEPTH,
    MAX_INT_BITS,
    MAX_NODES,
    Arithmetic,
    Number,
    Status,
    Unreadable,
    short,
    walk,
)
from autograder.diagnosis.byhand_cells import (
    MAX_CELL_CHARS,
    SALVAGE_PARSES,
    BadLine,
    ReadingCost,
    assigned_names,
    cell_items,
)

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_NODES",
    "SALVAGE_PARSES",
    "HandAnswer",
    "HistoryReader",
    "ReadingCost",
    "Recipe",
    "ReplayError",
    "assigned_names",
    "evaluate_expression",
    "read_hand_answers",
    "replay",
    "used_names",
]

AUTOGRAD_MODULES: Final = ("torch.autograd", "torch.func", "functorch")
GIVEN_DETAIL: Final = "your given "
"""The detail of a name bound to a given (`xx = exercise.given("x")`), before its name."""
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS: Final = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_KEYWORDS: Final = {
    "FunctionDef": "def",
    "AsyncFunctionDef": "async def",
    "AsyncFor": "async for",
    "AsyncWith": "async with",
    "TryStar": "try",
}
Outcome = tuple[Status, Number | None, str, str]
"""(status, number, detail, the name that blocked it: see `HandAnswer.blocked_by`)."""
Source = ast.expr | str | None
"""How a name got its number: the expression, the given's name, or None (no number)."""


@dataclass(frozen=True)
class Step:
    """One binding the reader made, in order: `name` and what it was computed from."""

    name: str
    source: Source


@dataclass(frozen=True)
class Recipe:
    """How the cells computed one answer: the first `length` bindings of `steps` (a list
    that only grows), the answer's own last; replayed at other numbers (`replay`)."""

    steps: list[Step]
    length: int


@dataclass(frozen=True)
class HandAnswer:
    """What the cells assign to one name: a number, or why it does not count as one."""

    name: str
    value: float | bool | None
    status: Status
    detail: str
    recipe: Recipe | None = field(default=None, compare=False, repr=False)
    """For a number: how the cells computed it (None for answers made by hand in tests);
    for an answer blocked by another name (`blocked_by`), how it would have."""
    blocked_by: str = field(default="", compare=False)
    """The earlier name whose answer is not a number, when that alone keeps this one from
    being read (`dL_dw = 2 * (a - y) * x` where `a` was refused): the judge can then take
    this step on its own (`judge.carried_forward`)."""


class ReplayError(Exception):
    """A recipe that cannot be computed at other numbers (a division by zero there)."""


def replay(
    recipe: Recipe, givens: Mapping[str, float], pinned: Mapping[str, float] | None = None
) -> Number:
    """The answer `recipe` computes when the givens are `givens`: every binding the cells
    made is computed again in order, except that a name in `pinned` keeps its pinned value
    (assignments to it are skipped) unless it is the answer's own name."""
    pins = dict(pinned or {})
    steps = recipe.steps[: recipe.length]
    own = steps[-1].name
    pins.pop(own, None)
    numbers: dict[str, Number] = dict(pins)
    arithmetic = Arithmetic(numbers, lambda _name: None, ReadingCost())
    value: Number = 0
    for index, step in enumerate(steps):
        last = index == len(steps) - 1
        if step.name in pins and not last:
            continue
        try:
            if isinstance(step.source, str):
                value = givens[step.source]
            elif step.source is None:
                numbers.pop(step.name, None)
                continue
            else:
                value = arithmetic.evaluate(step.source)
        except (Unreadable, KeyError) as problem:
            if last:
                raise ReplayError(str(problem)) from None
            numbers.pop(step.name, None)
            continue
        numbers[step.name] = value
    return value


def used_names(recipe: Recipe, stop: Collection[str] = ()) -> set[str]:
    """Every name the answer's own binding depends on, through the bindings before it
    (not through the bindings of the names in `stop`)."""
    steps = recipe.steps[: recipe.length]
    needed = _names(steps[-1].source)
    used: set[str] = set()
    for step in reversed(steps[:-1]):
        if step.name in needed:
            used.add(step.name)
            needed.discard(step.name)
            if step.name not in stop:
                needed |= _names(step.source)
    return used | needed


def _names(source: Source) -> set[str]:
    if not isinstance(source, ast.expr):
        return set()
    return {n.id for n in ast.walk(source) if isinstance(n, ast.Name)}


def read_hand_answers(
    cell_sources: Sequence[str],
    givens: Mapping[str, float] | None = None,
    cost: ReadingCost | None = None,
) -> dict[str, HandAnswer]:
    """What each name is assigned in `cell_sources`, read in order; later cells win.

    `givens` are the learner's given values: a line `x, w = exercise.given("x", "w")`
    binds them (the numbers come from here, never from the notebook). The work spent is
    added to `cost` when one is given.
    """
    reader = _Reader(givens, cost)
    for source in cell_sources:
        if isinstance(source, str):
            reader.read_cell(source)
    return reader.answers


class HistoryReader:
    """`read_hand_answers` over a history of cells that only grows (IPython's), each cell
    read once: a check reads only the cells run since the one before, so a long session's
    checks cost what its cells do, not cells × checks.

    The cells read are kept (IPython keeps them anyway) and compared by identity, a
    pointer per cell; a history that is not the one read so far extended (another list, a
    `%reset`, other givens) is read again from its first cell. The answers are always
    exactly `read_hand_answers(cells, givens)`.
    """

    def __init__(self, cost: ReadingCost | None = None) -> None:
        self._cost = cost
        self._reader: _Reader | None = None
        self._givens: dict[str, float] = {}
        self._read: list[str] = []

    def answers(
        self, cells: Sequence[str], givens: Mapping[str, float] | None = None
    ) -> dict[str, HandAnswer]:
        """What each name is assigned in `cells`, read in order; later cells win."""
        chosen = dict(givens or {})
        reader, read = self._reader, self._read
        extended = (
            reader is not None
            and chosen == self._givens
            and len(cells) >= len(read)
            and all(now is before for now, before in zip(cells, read, strict=False))
        )
        if reader is None or not extended:
            reader, read = _Reader(chosen, self._cost), []
            self._reader, self._givens, self._read = reader, chosen, read
        try:
            for source in cells[len(read) :]:
                if isinstance(source, str):
                    reader.read_cell(source)
                read.append(source)
        except BaseException:
            self._reader = None  # half-read: read again from the start next time
            raise
        return dict(reader.answers)


def evaluate_expression(expression: str, names: Mapping[str, object]) -> Number:
    """The value of plain arithmetic `expression` over the numbers in `names`. For the
    specs' own expressions (model answers, mistakes, factors), which the diagnosis computes
    again at every fresh draw: each is parsed and screened once (`_screened`)."""
    arithmetic = Arithmetic(_NumbersIn(names), lambda _name: None, ReadingCost())
    try:
        return arithmetic.value(_screened(expression), 0)
    except Unreadable as refusal:
        raise ValueError(f"cannot evaluate {expression!r}: {refusal.detail}") from None


class _NumbersIn(Mapping[str, Number]):
    """The numbers among `names` (ints, floats, bools), read where they are: a diagnosis
    evaluates each part again with every name so far, and copying them cost more than
    the arithmetic."""

    def __init__(self, names: Mapping[str, object]) -> None:
        self._names = names

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and type(self._names.get(name)) in (int, float, bool)

    def __getitem__(self, name: str) -> Number:
        value = self._names[name]
        if type(value) in (int, float, bool):
            return cast(Number, value)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._names if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@functools.lru_cache(maxsize=4096)
def _screened(expression: str) -> ast.expr:
    """`expression` parsed, and refused if it is no plain arithmetic (`Arithmetic.screen`:
    what it screens for does not depend on the numbers). A refusal is not kept."""
    node = ast.parse(expression, mode="eval").body
    _Reader().arithmetic.screen(node)
    return node


def _raises_not_implemented(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.Raise) or stmt.exc is None:
        return False
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _bound_names(stmt: ast.stmt) -> list[str]:
    """Module-level names a statement can bind (not locals of functions or comprehensions)."""
    names: list[str] = []
    stack: list[tuple[ast.AST, str]] = [(stmt, "module")]
    while stack:
        node, scope = stack.pop()
        if scope == "module":
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                names.append(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.extend(_import_name(alias) for alias in node.names if alias.name != "*")
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                names.append(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.append(node.rest)
        if isinstance(node, ast.Global):
            names.extend(node.names)
        if isinstance(node, ast.NamedExpr) and scope != "function":
            names.append(node.target.id)
        inner = scope
        if isinstance(node, _SCOPES):
            inner = "function"
        elif isinstance(node, _COMPREHENSIONS) and scope == "module":
            inner = "comprehension"
        decorators = (
            {id(d) for d in node.decorator_list}
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            else set()
        )
        for child in ast.iter_child_nodes(node):
            stack.append((child, scope if id(child) in decorators else inner))
    return list(dict.fromkeys(names))


def _import_name(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _is_autograd_import(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> bool:
    full = alias.name
    if isinstance(stmt, ast.ImportFrom):
        full = f"{stmt.module or ''}.{alias.name}"
    in_module = any(full == m or full.startswith(m + ".") for m in AUTOGRAD_MODULES)
    return in_module or alias.name in AUTOGRAD_ATTRIBUTES | AUTOGRAD_NAMES


class _Reader:
    """Walks cells in order, keeping what each name holds so far."""

    def __init__(
        self, givens: Mapping[str, float] | None = None, cost: ReadingCost | None = None
    ) -> None:
        self.answers: dict[str, HandAnswer] = {}
        self.numbers: dict[str, Number] = {}
        self.givens = dict(givens or {})
        self.cost = cost if cost is not None else ReadingCost()
        self.imports: dict[str, str] = {}
        self.arithmetic = Arithmetic(self.numbers, self.known, self.cost, self.imports)
        self.steps: list[Step] = []

    def known(self, name: str) -> tuple[Status, str] | None:
        """(status, detail) of what `name` holds so far, if the cells bound it."""
        answer = self.answers.get(name)
        return None if answer is None else (answer.status, answer.detail)

    def bind(
        self,
        name: str,
        status: Status,
        value: Number | None,
        detail: str,
        source: Source = None,
        blocked_by: str = "",
    ) -> None:
        recipe = None
        self.imports.pop(name, None)
        if status == "number" and value is not None:
            self.numbers[name] = value
            shown: float | bool | None = value if type(value) is bool else float(value)
            self.steps.append(Step(name, source))
            recipe = Recipe(self.steps, len(self.steps))
        else:
            self.numbers.pop(name, None)
            shown = None
            if blocked_by:
                root = self.answers.get(blocked_by)
                blocked_by = root.blocked_by if root is not None and root.blocked_by else blocked_by
            kept = blocked_by and isinstance(source, ast.expr)
            self.steps.append(Step(name, source if kept else None))
            if kept:
                recipe = Recipe(self.steps, len(self.steps))
        answer = HandAnswer(name, shown, status, short(detail), recipe, blocked_by)
        self.answers[name] = answer

    def read_cell(self, source: str) -> None:
        items = cell_items(source, self.cost)
        if any(isinstance(item, ast.stmt) and _raises_not_implemented(item) for item in items):
            detail = "its cell still has `raise NotImplementedError()`: replace it with your answer"
            for item in items:
                names = item.names if isinstance(item, BadLine) else _bound_names(item)
                for name in names:
                    self.bind(name, "unanswered", None, detail)
            return
        for item in items:
            if isinstance(item, BadLine):
                for name in item.names:
                    self.bind(name, "error", None, item.message)
            elif isinstance(item, ast.Raise):
                return  # nothing after a top-level raise runs
            else:
                self.statement(item)

    def given_call(self, stmt: ast.Assign) -> bool:
        """Bind `x, w = exercise.given("x", "w")` to the learner's givens; False if not one."""
        call = stmt.value
        if len(stmt.targets) != 1 or not isinstance(call, ast.Call) or call.keywords:
            return False
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "given"):
            return False
        args = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
        target = stmt.targets[0]
        names: list[ast.expr] = [target]
        if isinstance(target, ast.Tuple | ast.List):
            names = list(target.elts)
        if not args or len(names) != len(args) or not all(isinstance(n, ast.Name) for n in names):
            return False
        for node, arg in zip(names, args, strict=True):
            assert isinstance(node, ast.Name)
            if isinstance(arg, str) and arg in self.givens:
                self.bind(node.id, "number", self.givens[arg], GIVEN_DETAIL + arg, arg)
            else:
                self.bind(node.id, "not_arithmetic", None, f"{arg!r:.40} is not a given value")
        return True

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and self.given_call(stmt):
            return
        if isinstance(stmt, ast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                load = ast.Name(id=stmt.target.id, ctx=ast.Load())
                self.assign([stmt.target], ast.BinOp(left=load, op=stmt.op, right=stmt.value))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                if _is_autograd_import(stmt, alias):
                    self.bind(_import_name(alias), "autograd", None, f"imports `{alias.name}`")
                else:
                    self.bind(_import_name(alias), "not_arithmetic", None, "an imported module")
                    self.math_import(stmt, alias)
        elif isinstance(stmt, ast.Delete):
            for name in _bound_names(stmt):
                self.bind(name, "unanswered", None, "deleted with `del`")
        else:
            self.opaque(stmt)

    def math_import(self, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> None:
        """`import math [as m]`, `from math import exp [as e]`, `from math import pi`: what a
        hand answer may then call (or read) by that name."""
        if isinstance(stmt, ast.Import):
            if alias.name == "math":
                self.imports[_import_name(alias)] = "math"
            return
        if stmt.module != "math" or stmt.level:
            return
        name = alias.asname or alias.name
        if alias.name in MATH_FUNCTIONS:
            self.imports[name] = f"math.{alias.name}"
        elif alias.name in MATH_CONSTANTS:
            value = MATH_CONSTANTS[alias.name]
            self.bind(name, "number", value, f"math.{alias.name}", ast.Constant(value))

    def opaque(self, stmt: ast.stmt) -> None:
        """A statement whose bindings are not read: mark every name it may bind."""
        names = _bound_names(stmt)
        if not names:
            return
        uses = self.arithmetic.autograd_use(stmt)
        keyword = _KEYWORDS.get(type(stmt).__name__, type(stmt).__name__.lower())
        for name in names:
            if uses is not None:
                self.bind(name, "autograd", None, uses)
            elif isinstance(stmt, ast.Expr):
                self.bind(name, "not_arithmetic", None, "assigned with `:=`")
            else:
                detail = f"assigned inside a `{keyword}` statement, not by `{name} = ...`"
                self.bind(name, "not_arithmetic", None, detail)

    def assign(self, targets: list[ast.expr], value: ast.expr) -> None:
        """Bind the names of every target; like Python, the value is computed once, before
        any name is bound (each part of it once, however many targets share it)."""
        outcomes: dict[int, Outcome] = {}
        bindings: list[tuple[str, Outcome, ast.expr | None]] = []
        for target in targets:
            for name, part in self.pairs(target, value, outcomes):
                if id(part) not in outcomes:
                    outcomes[id(part)] = self.outcome(part)
                bindings.append((name, outcomes[id(part)], part))
        for name, (status, number, detail, blocked_by), part in bindings:
            if status == "number" and part is not None:
                part = self.arithmetic.canonical(part)
            self.bind(name, status, number, detail, part, blocked_by)
        for node in walk(value, self.cost):  # names bound by := inside the right-hand side
            if isinstance(node, ast.NamedExpr):
                self.bind(node.target.id, "not_arithmetic", None, "assigned with `:=`")

    def pairs(
        self, target: ast.expr, value: ast.expr, outcomes: dict[int, Outcome]
    ) -> list[tuple[str, ast.expr | None]]:
        """(name, its expression) for each name in `target`; None when it cannot be paired."""
        if isinstance(target, ast.Name):
            return [(target.id, value)]
        if isinstance(target, ast.Starred):
            return [(name, None) for name, _ in self.pairs(target.value, value, outcomes)]
        if not isinstance(target, ast.Tuple | ast.List):
            return []  # attributes and subscripts bind no name
        parts = value.elts if isinstance(value, ast.Tuple | ast.List) else []
        starred = any(isinstance(e, ast.Starred) for e in [*target.elts, *parts])
        if len(parts) != len(target.elts) or starred:
            if id(value) not in outcomes:
                outcomes[id(value)] = self.outcome(value)
            autograd = outcomes[id(value)][0] == "autograd"
            names = [n for n in walk(target, self.cost) if isinstance(n, ast.Name)]
            return [(n.id, value if autograd else None) for n in names]
        return [
            pair
            for element, part in zip(target.elts, parts, strict=True)
            for pair in self.pairs(element, part, outcomes)
        ]

    def outcome(self, value: ast.expr | None) -> Outcome:
        """(status, number, detail) for one name's right-hand side."""
        if value is None:
            detail = "unpacked from something that is not a tuple of numbers"
            return "not_arithmetic", None, detail, ""
        try:
            number = self.arithmetic.evaluate(value)
        except Unreadable as refusal:
            return refusal.status, None, refusal.detail, refusal.blocked_by
        source = ast.unparse(value)  # small: evaluate() capped its size
        return "number", number, short(source, 80), ""
