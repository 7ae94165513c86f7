"""Read hand answers from notebook cells without running them.

The trusted grader calls `read_hand_answers` on untrusted submissions, so nothing here
executes learner code: cells are parsed with `ast` and only plain arithmetic is evaluated
(number literals, names assigned earlier by arithmetic, + - * / // % **, comparisons,
and/or/not, `a if c else b`, and calls of max, min, abs, round, float, int), with caps
on expression size, nesting and integer size so that `10**10**10` is refused at once.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NoReturn

Status = Literal["number", "autograd", "not_arithmetic", "unanswered", "error"]
Number = int | float | bool


@dataclass(frozen=True)
class HandAnswer:
    """What the cells assign to one name: a number, or why it does not count as one."""

    name: str
    value: float | bool | None
    status: Status
    detail: str


ALLOWED_CALLS: Final = frozenset({"abs", "float", "int", "max", "min", "round"})
AUTOGRAD_ATTRIBUTES: Final = frozenset(
    {"backward", "grad", "retain_grad", "autograd", "jvp", "vjp", "jacobian", "hessian"}
    | {"hvp", "vhp"}
)
AUTOGRAD_NAMES: Final = frozenset({"autograd", "functorch"})
AUTOGRAD_MODULES: Final = ("torch.autograd", "torch.func", "functorch")

MAX_CELL_CHARS: Final = 100_000
MAX_NODES: Final = 400
"""Largest right-hand side (in ast nodes) that is evaluated."""
MAX_DEPTH: Final = 50
MAX_INT_BITS: Final = 256
MAX_ROUND_DIGITS: Final = 100
SALVAGE_MAX_CHARS: Final = 20_000
SALVAGE_SPAN: Final = 20
"""Longest statement (in lines) recovered from a cell that does not parse as a whole."""
SALVAGE_PARSES: Final = 1000
"""Most parse attempts spent recovering one cell; later lines are reported unreadable."""
PYTHON_CELL_MAGICS: Final = frozenset({"time", "capture"})

_PARSE_ERRORS: Final = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_ASSIGNED: Final = re.compile(
    r"([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*)[ \t]*(?::[^=\n]*)?=(?!=)"
)
_HELP_LINE: Final = re.compile(r"\s*(?:\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*")
_MAGIC_ASSIGN: Final = re.compile(r"(\s*[A-Za-z_][\w, \t]*?)=\s*[%!]")

_BINARY: Final[dict[type[ast.operator], Callable[[Number, Number], Number]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: Final[dict[type[ast.cmpop], Callable[[Number, Number], bool]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS: Final = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_KEYWORDS: Final = {
    "FunctionDef": "def",
    "AsyncFunctionDef": "async def",
    "AsyncFor": "async for",
    "AsyncWith": "async with",
    "TryStar": "try",
}
_WHAT: Final = {
    "Lambda": "a lambda",
    "Subscript": "indexing",
    "JoinedStr": "an f-string",
    "NamedExpr": "a := assignment",
    "Tuple": "a tuple, not one number",
    "List": "a list, not one number",
    "Dict": "a dict",
    "Set": "a set",
    "Starred": "a * expression",
    "Await": "await",
}


class _Unreadable(Exception):
    """Raised while evaluating: the expression is not a hand answer."""

    def __init__(self, status: Status, detail: str) -> None:
        super().__init__(detail)
        self.status: Status = status
        self.detail = detail


def _refuse(status: Status, detail: str) -> NoReturn:
    raise _Unreadable(status, detail)


@dataclass(frozen=True)
class _BadLine:
    """A line of a cell that could not be parsed, and the names it seems to assign."""

    lineno: int
    names: tuple[str, ...]
    message: str


def read_hand_answers(
    cell_sources: Sequence[str], givens: Mapping[str, float] | None = None
) -> dict[str, HandAnswer]:
    """What each name is assigned in `cell_sources`, read in order; later cells win.

    `givens` are the learner's given values: a line `x, w = exercise.given("x", "w")`
    binds them (the numbers come from here, never from the notebook).
    """
    reader = _Reader(givens)
    for source in cell_sources:
        if isinstance(source, str):
            reader.read_cell(source)
    return reader.answers


def evaluate_expression(expression: str, names: Mapping[str, object]) -> Number:
    """The value of plain arithmetic `expression` over the numbers in `names`."""
    reader = _Reader()
    for name, number in names.items():
        if type(number) in (int, float, bool):
            reader.numbers[name] = number  # type: ignore[assignment]
    try:
        node = ast.parse(expression, mode="eval").body
        return reader.evaluate(node)
    except _Unreadable as refusal:
        raise ValueError(f"cannot evaluate {expression!r}: {refusal.detail}") from None


def assigned_names(line: str) -> tuple[str, ...]:
    """Names a top-level line looks like it assigns (`a = ...`, `a, b = ...`)."""
    match = _ASSIGNED.match(line)
    if match is None:
        return ()
    return tuple(part.strip() for part in match.group(1).split(","))


def _strip_magics(source: str) -> str | None:
    """The cell with IPython-only lines made harmless; None for a non-Python cell magic."""
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_CELL_MAGICS:
            return None
        lines[first] = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(("%", "!")) or _HELP_LINE.fullmatch(line):
            lines[i] = indent + "pass"
        else:
            assignment = _MAGIC_ASSIGN.match(line)
            if assignment is not None:
                lines[i] = assignment.group(1) + "= get_ipython()"
    return "\n".join(lines)


def _parse(source: str) -> list[ast.stmt] | None:
    try:
        return ast.parse(source).body
    except _PARSE_ERRORS:
        return None


def _continues(lines: list[str], next_code: list[int], j: int) -> bool:
    """True when the next code line from index j belongs to the statement before it."""
    if j >= len(lines) or next_code[j] >= len(lines):
        return False
    line = lines[next_code[j]]
    stripped = line.strip()
    if line[0] in " \t" or stripped[0] in ")]}.":
        return True
    word = re.match(r"\w+", stripped)
    return word is not None and word.group() in {"else", "elif", "except", "finally"}


def _next_code_lines(lines: list[str]) -> list[int]:
    """For each index, the index of the first line from there that holds code."""
    result = [len(lines)] * (len(lines) + 1)
    for k in range(len(lines) - 1, -1, -1):
        stripped = lines[k].strip()
        result[k] = k if stripped and not stripped.startswith("#") else result[k + 1]
    return result


def _salvage(source: str) -> list[ast.stmt | _BadLine]:
    """Recover the parsable statements of a cell with a syntax error somewhere."""
    lines = source.split("\n")
    if len(source) > SALVAGE_MAX_CHARS:
        return [
            _BadLine(i + 1, names, "cell too long to recover from its syntax error")
            for i, line in enumerate(lines)
            if (names := assigned_names(line))
        ]
    items: list[ast.stmt | _BadLine] = []
    next_code = _next_code_lines(lines)
    budget = SALVAGE_PARSES
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        for j in range(i + 1, min(len(lines), i + SALVAGE_SPAN) + 1):
            if budget <= 0 or _continues(lines, next_code, j):
                continue
            budget -= 1
            body = _parse("\n".join(lines[i:j]))
            if body is not None:
                items.extend(body)
                i = j
                break
        else:
            names = assigned_names(lines[i])
            if names:
                items.append(_BadLine(i + 1, names, f"syntax error on line {i + 1} of its cell"))
            i += 1
    return items


def _cell_items(source: str) -> list[ast.stmt | _BadLine]:
    if len(source) > MAX_CELL_CHARS:
        message = f"cell too long to read (over {MAX_CELL_CHARS} characters)"
        return [
            _BadLine(i + 1, names, message)
            for i, line in enumerate(source.split("\n"))
            if (names := assigned_names(line))
        ]
    body = _parse(source)
    if body is not None:
        return list(body)
    cleaned = _strip_magics(source)
    if cleaned is None:
        return []
    body = _parse(cleaned)
    if body is not None:
        return list(body)
    return _salvage(cleaned)


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
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
                child in node.decorator_list
            ):
                stack.append((child, scope))
            else:
                stack.append((child, inner))
    return list(dict.fromkeys(names))


def _names(target: ast.expr) -> list[ast.Name]:
    return [node for node in ast.walk(target) if isinstance(node, ast.Name)]


def _import_name(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _is_autograd_import(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> bool:
    full = alias.name
    if isinstance(stmt, ast.ImportFrom):
        full = f"{stmt.module or ''}.{alias.name}"
    in_module = any(full == m or full.startswith(m + ".") for m in AUTOGRAD_MODULES)
    return in_module or alias.name in AUTOGRAD_ATTRIBUTES | AUTOGRAD_NAMES


def _dotted(node: ast.AST, depth: int = 0) -> str:
    """`torch.tensor`, `x.item`, `get_ipython().getoutput`: how a call target reads."""
    if depth > 6:
        return "..."
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value, depth + 1)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func, depth + 1)}()"
    return "(...)"


def _checked(value: object) -> Number:
    """`value` if it is a finite, reasonably sized real number; refuses otherwise."""
    if type(value) is bool:
        return value
    if type(value) is int:
        if value.bit_length() > MAX_INT_BITS:
            _refuse("error", "number too large")
        return value
    if type(value) is float:
        if not math.isfinite(value):
            _refuse("error", "not a finite number")
        return value
    _refuse("error", "not a real number")


def _power(base: Number, exponent: Number) -> Number:
    if type(base) is not float and type(exponent) is not float and exponent > 0:
        bits = abs(int(base)).bit_length() - 1
        if bits > 0 and exponent * bits > MAX_INT_BITS:
            _refuse("error", "number too large")
    return base**exponent


class _Reader:
    """Walks cells in order, keeping what each name holds so far."""

    def __init__(self, givens: Mapping[str, float] | None = None) -> None:
        self.answers: dict[str, HandAnswer] = {}
        self.numbers: dict[str, Number] = {}
        self.givens = dict(givens or {})

    def bind(self, name: str, status: Status, value: Number | None, detail: str) -> None:
        if status == "number" and value is not None:
            self.numbers[name] = value
            shown: float | bool | None = value if type(value) is bool else float(value)
        else:
            self.numbers.pop(name, None)
            shown = None
        self.answers[name] = HandAnswer(name, shown, status, detail)

    def read_cell(self, source: str) -> None:
        items = _cell_items(source)
        if any(isinstance(item, ast.stmt) and _raises_not_implemented(item) for item in items):
            detail = "its cell still has `raise NotImplementedError()`: replace it with your answer"
            for item in items:
                names = item.names if isinstance(item, _BadLine) else _bound_names(item)
                for name in names:
                    self.bind(name, "unanswered", None, detail)
            return
        for item in items:
            if isinstance(item, _BadLine):
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
                self.bind(node.id, "number", self.givens[arg], f"your given {arg}")
            else:
                self.bind(node.id, "not_arithmetic", None, f"{arg!r} is not a given value")
        return True

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and self.given_call(stmt):
            return
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self.assign(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                load = ast.Name(id=stmt.target.id, ctx=ast.Load())
                self.assign(stmt.target, ast.BinOp(left=load, op=stmt.op, right=stmt.value))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                if _is_autograd_import(stmt, alias):
                    self.bind(_import_name(alias), "autograd", None, f"imports `{alias.name}`")
                else:
                    self.bind(_import_name(alias), "not_arithmetic", None, "an imported module")
        elif isinstance(stmt, ast.Delete):
            for name in _bound_names(stmt):
                self.bind(name, "unanswered", None, "deleted with `del`")
        else:
            self.opaque(stmt)

    def opaque(self, stmt: ast.stmt) -> None:
        """A statement whose bindings are not read: mark every name it may bind."""
        names = _bound_names(stmt)
        if not names:
            return
        uses = self.autograd_use(stmt)
        keyword = _KEYWORDS.get(type(stmt).__name__, type(stmt).__name__.lower())
        for name in names:
            if uses is not None:
                self.bind(name, "autograd", None, uses)
            elif isinstance(stmt, ast.Expr):
                self.bind(name, "not_arithmetic", None, "assigned with `:=`")
            else:
                detail = f"assigned inside a `{keyword}` statement, not by `{name} = ...`"
                self.bind(name, "not_arithmetic", None, detail)

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        """Bind the names of `target`; like Python, every value is computed before binding."""
        outcomes = [(name, self.outcome(part)) for name, part in self.pairs(target, value)]
        for name, (status, number, detail) in outcomes:
            self.bind(name, status, number, detail)
        for node in ast.walk(value):  # names bound by := inside the right-hand side
            if isinstance(node, ast.NamedExpr):
                self.bind(node.target.id, "not_arithmetic", None, "assigned with `:=`")

    def pairs(self, target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr | None]]:
        """(name, its expression) for each name in `target`; None when it cannot be paired."""
        if isinstance(target, ast.Name):
            return [(target.id, value)]
        if isinstance(target, ast.Starred):
            return [(name, None) for name, _ in self.pairs(target.value, value)]
        if not isinstance(target, ast.Tuple | ast.List):
            return []  # attributes and subscripts bind no name
        parts = value.elts if isinstance(value, ast.Tuple | ast.List) else []
        starred = any(isinstance(e, ast.Starred) for e in [*target.elts, *parts])
        if len(parts) != len(target.elts) or starred:
            uses = self.autograd_use(value)
            return [(n.id, None if uses is None else value) for n in _names(target)]
        return [
            pair
            for element, part in zip(target.elts, parts, strict=True)
            for pair in self.pairs(element, part)
        ]

    def outcome(self, value: ast.expr | None) -> tuple[Status, Number | None, str]:
        """(status, number, detail) for one name's right-hand side."""
        if value is None:
            return "not_arithmetic", None, "unpacked from something that is not a tuple of numbers"
        try:
            number = self.evaluate(value)
        except _Unreadable as refusal:
            return refusal.status, None, refusal.detail
        source = ast.unparse(value)  # small: evaluate() capped its size
        return "number", number, source if len(source) <= 80 else source[:77] + "..."

    def autograd_use(self, node: ast.AST) -> str | None:
        """How `node` uses autograd (`.grad`, `torch.autograd`, a name computed so), if it does."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in AUTOGRAD_ATTRIBUTES:
                return f"uses `.{sub.attr}`"
            if isinstance(sub, ast.Name):
                if sub.id in AUTOGRAD_NAMES:
                    return f"uses `{sub.id}`"
                known = self.answers.get(sub.id)
                if known is not None and known.status == "autograd":
                    return f"uses `{sub.id}`, which came from autograd"
            if isinstance(sub, ast.Constant) and sub.value in AUTOGRAD_ATTRIBUTES:
                return f"uses '{sub.value}'"
        return None

    def evaluate(self, node: ast.expr) -> Number:
        """The value of a plain-arithmetic expression; raises _Unreadable otherwise."""
        uses = self.autograd_use(node)
        if uses is not None:
            _refuse("autograd", uses)
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            _refuse("unanswered", f"still `{ast.unparse(node)}`")
        for count, _ in enumerate(ast.walk(node), start=1):
            if count > MAX_NODES:
                _refuse("error", "expression too long to be a hand answer")
        return self.value(node, 0)

    def value(self, node: ast.expr, depth: int) -> Number:
        if depth > MAX_DEPTH:
            _refuse("error", "expression nested too deeply")
        depth += 1
        try:
            return _checked(self.compute(node, depth))
        except ZeroDivisionError:
            _refuse("error", "division by zero")
        except OverflowError:
            _refuse("error", "number too large")
        except (ValueError, TypeError) as problem:
            _refuse("error", f"cannot compute it: {str(problem)[:60]}")

    def compute(self, node: ast.expr, depth: int) -> object:
        if isinstance(node, ast.Constant):
            if type(node.value) in (int, float, bool):
                return node.value
            if node.value is None or node.value is Ellipsis:
                _refuse("not_arithmetic", f"`{node.value!r}` is not a number")
            _refuse(
                "not_arithmetic", f"{type(node.value).__name__} {node.value!r:.30}, not a number"
            )
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand, depth)
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return +operand
            if isinstance(node.op, ast.Not):
                return not operand
            _refuse("not_arithmetic", "operator `~`")
        if isinstance(node, ast.BinOp):
            apply = _BINARY.get(type(node.op))
            if apply is None:
                _refuse("not_arithmetic", f"operator {type(node.op).__name__}")
            left, right = self.value(node.left, depth), self.value(node.right, depth)
            return _power(left, right) if isinstance(node.op, ast.Pow) else apply(left, right)
        if isinstance(node, ast.Compare):
            return self.compare(node, depth)
        if isinstance(node, ast.BoolOp):
            values = [self.value(v, depth) for v in node.values]
            if isinstance(node.op, ast.And):
                return next((v for v in values if not v), values[-1])
            return next((v for v in values if v), values[-1])
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, depth)
            body, orelse = self.value(node.body, depth), self.value(node.orelse, depth)
            return body if test else orelse
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.Attribute):
            _refuse("not_arithmetic", f"reads `{_dotted(node)}`")
        _refuse("not_arithmetic", _WHAT.get(type(node).__name__, f"a {type(node).__name__}"))

    def name(self, name: str) -> Number:
        if name in self.numbers:
            return self.numbers[name]
        known = self.answers.get(name)
        if known is None:
            _refuse("not_arithmetic", f"uses `{name}`, which no earlier cell assigns a number")
        if known.status == "unanswered":
            _refuse("unanswered", f"uses `{name}`, which is not answered yet")
        if known.status == "error":
            _refuse("error", f"uses `{name}`, which could not be read ({known.detail})")
        _refuse("not_arithmetic", f"uses `{name}`, which is not a number written by hand")

    def compare(self, node: ast.Compare, depth: int) -> bool:
        left = self.value(node.left, depth)
        result = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            test = _COMPARE.get(type(op))
            if test is None:
                _refuse("not_arithmetic", f"comparison {type(op).__name__}")
            right = self.value(right_node, depth)
            result = result and test(left, right)
            left = right
        return result

    def call(self, node: ast.Call, depth: int) -> Number:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in ALLOWED_CALLS:
            _refuse("not_arithmetic", f"calls `{_dotted(func)}`")
        if func.id in self.answers:
            _refuse("not_arithmetic", f"calls `{func.id}`, which the notebook redefines")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            _refuse("not_arithmetic", f"calls `{func.id}` with keyword or * arguments")
        args = [self.value(a, depth) for a in node.args]
        name = func.id
        if name in ("max", "min"):
            if len(args) < 2:
                _refuse("not_arithmetic", f"`{name}` needs two or more numbers")
            return max(args) if name == "max" else min(args)
        if name == "round" and len(args) == 2:
            digits = args[1]
            if type(digits) is not int or abs(digits) > MAX_ROUND_DIGITS:
                _refuse("error", "round() needs a small whole number of digits")
            return round(args[0], digits)
        if len(args) != 1:
            _refuse("not_arithmetic", f"`{name}` takes one number")
        (arg,) = args
        if name == "abs":
            return abs(arg)
        if name == "float":
            return float(arg)
        if name == "int":
            return int(arg)
        return round(arg)
