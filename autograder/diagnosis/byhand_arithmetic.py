"""Evaluate one plain-arithmetic expression from a learner's cell, within fixed caps.

Only number literals, names already bound to numbers, + - * / // % **, comparisons,
and/or/not, `a if c else b` and calls of max, min, abs, round, float, int, pow and the
`math` module's functions (`math.exp`, `math.sqrt`, ...; `import math` or `from math import
exp` first) are computed.
Every cap is checked before the work it bounds: the expression's size (`MAX_NODES`, by a
walk that stops there), its nesting (`MAX_DEPTH`), integer size (`MAX_INT_BITS`, checked
before `**`), and digits of `round`; so one expression costs at most a fixed amount of
work, and `10**10**10` is refused at once.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Final, Literal, NoReturn

from autograder.diagnosis.byhand_cells import ReadingCost

Status = Literal["number", "autograd", "not_arithmetic", "unanswered", "error"]
Number = int | float | bool

ALLOWED_CALLS: Final = frozenset({"abs", "float", "int", "max", "min", "round", "pow"})
MATH_CALLS: Final[dict[str, Callable[[float], float]]] = {
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sqrt": math.sqrt,
    "tanh": math.tanh,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "atan": math.atan,
    "fabs": math.fabs,
    "expm1": math.expm1,
    "log1p": math.log1p,
}
MATH_FUNCTIONS: Final = frozenset({*MATH_CALLS, "pow"})
"""`math` functions a learner may call: arithmetic too (a recipe names them `math.exp`)."""
MATH_CONSTANTS: Final = {"pi": math.pi, "e": math.e, "tau": math.tau}
AUTOGRAD_ATTRIBUTES: Final = frozenset(
    {"backward", "grad", "retain_grad", "autograd", "jvp", "vjp", "jacobian", "hessian"}
    | {"hvp", "vhp"}
)
AUTOGRAD_NAMES: Final = frozenset({"autograd", "functorch"})
MAX_NODES: Final = 400
"""Largest right-hand side (in ast nodes) that is evaluated."""
MAX_DEPTH: Final = 50
MAX_INT_BITS: Final = 256
MAX_ROUND_DIGITS: Final = 100
MAX_DETAIL: Final = 160
"""Longest explanation kept for one answer (names and details quoted in it are cut)."""

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


def short(text: str, limit: int = MAX_DETAIL) -> str:
    """`text` cut to `limit` characters, so no detail grows with what it quotes."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Unreadable(Exception):
    """Raised while evaluating: the expression is not a hand answer."""

    def __init__(self, status: Status, detail: str, blocked_by: str = "") -> None:
        super().__init__(detail)
        self.status: Status = status
        self.detail = short(detail)
        self.blocked_by = blocked_by
        """The name whose own answer is not a number, when that is the only reason."""


def refuse(status: Status, detail: str, blocked_by: str = "") -> NoReturn:
    raise Unreadable(status, detail, blocked_by)


def walk(node: ast.AST, cost: ReadingCost, limit: int | None = None) -> Iterator[ast.AST]:
    """`ast.walk`, charging each node to `cost`; refuses once more than `limit` are seen."""
    for count, sub in enumerate(ast.walk(node), start=1):
        if limit is not None and count > limit:
            refuse("error", "expression too long to be a hand answer")
        cost.nodes += 1
        yield sub


def dotted(node: ast.AST, depth: int = 0) -> str:
    """`torch.tensor`, `x.item`, `get_ipython().getoutput`: how a call target reads."""
    if depth > 6:
        return "..."
    if isinstance(node, ast.Name):
        return short(node.id, 40)
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value, depth + 1)}.{short(node.attr, 40)}"
    if isinstance(node, ast.Call):
        return f"{dotted(node.func, depth + 1)}()"
    return "(...)"


def _checked(value: object) -> Number:
    """`value` if it is a finite, reasonably sized real number; refuses otherwise."""
    if type(value) is bool:
        return value
    if type(value) is int:
        if value.bit_length() > MAX_INT_BITS:
            refuse("error", "number too large")
        return value
    if type(value) is float:
        if not math.isfinite(value):
            refuse("error", "not a finite number")
        return value
    refuse("error", "not a real number")


def _power(base: Number, exponent: Number) -> Number:
    if type(base) is not float and type(exponent) is not float and exponent > 0:
        bits = abs(int(base)).bit_length() - 1
        if bits > 0 and exponent * bits > MAX_INT_BITS:
            refuse("error", "number too large")
    return base**exponent


def _constants_in_place(node: ast.expr) -> ast.expr:
    """`node` with each `<constant>.<name>` left by `Arithmetic.canonical` made the constant."""

    class Fold(ast.NodeTransformer):
        def visit_Attribute(self, attribute: ast.Attribute) -> ast.AST:
            if isinstance(attribute.value, ast.Constant):
                return attribute.value
            return self.generic_visit(attribute)

    folded = Fold().visit(node)
    assert isinstance(folded, ast.expr)
    return folded


def _constant(value: object) -> str:
    """How a literal that is not a number reads in a refusal (never all of a long one)."""
    if isinstance(value, str | bytes):
        return f"{type(value).__name__} {value[:30]!r}"
    return f"{type(value).__name__} {short(repr(value), 30)}"


class Arithmetic:
    """Evaluates expressions over `numbers`; `known` explains names that are not numbers."""

    def __init__(
        self,
        numbers: Mapping[str, Number],
        known: Callable[[str], tuple[Status, str] | None],
        cost: ReadingCost,
        imports: Mapping[str, str] | None = None,
    ) -> None:
        self.numbers = numbers
        self.known = known
        self.cost = cost
        self.imports = imports if imports is not None else {}
        """Names bound by an import of `math`: "math" for the module, "math.exp" for one
        of its functions (and nothing else)."""

    def callee(self, func: ast.expr) -> str | None:
        """The function a call target names, as its canonical name ("max", "math.exp"), or
        None when it is no function a hand answer may call."""
        if isinstance(func, ast.Name):
            if func.id in self.imports and self.imports[func.id] != "math":
                return self.imports[func.id]
            if func.id.startswith("math.") and func.id[5:] in MATH_FUNCTIONS:
                return func.id  # a recipe's own canonical name: no learner writes a dotted name
            if func.id in ALLOWED_CALLS and self.known(func.id) is None:
                return func.id
            return None
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and self.imports.get(func.value.id) == "math"
            and func.attr in MATH_FUNCTIONS
        ):
            return f"math.{func.attr}"
        return None

    def math_constant(self, node: ast.expr) -> float | None:
        """`math.pi` (or `m.e` after `import math as m`): its value; None for anything else."""
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and self.imports.get(node.value.id) == "math"
        ):
            return MATH_CONSTANTS.get(node.attr)
        return None

    def canonical(self, node: ast.expr) -> ast.expr:
        """`node` with each `math` call named `math.f` and each `math` constant its value, so
        the recipe is read again without the imports (`node` itself when it has none)."""
        if not self.imports:
            return node
        import copy

        twin = copy.deepcopy(node)
        changed = False
        for original, copied in zip(ast.walk(node), ast.walk(twin), strict=True):
            if isinstance(original, ast.Call) and isinstance(copied, ast.Call):
                name = self.callee(original.func)
                if name is not None and name.startswith("math."):
                    copied.func = ast.Name(name, ast.Load())
                    changed = True
            constant = self.math_constant(original) if isinstance(original, ast.expr) else None
            if constant is not None and isinstance(copied, ast.Attribute):
                copied.value = ast.Constant(constant)  # read below as the constant itself
                changed = True
        return _constants_in_place(twin) if changed else node

    def evaluate(self, node: ast.expr) -> Number:
        """The value of a plain-arithmetic expression; raises Unreadable otherwise."""
        self.screen(node)
        return self.value(node, 0)

    def screen(self, node: ast.expr) -> None:
        """Refuses (Unreadable) what is no hand answer before computing anything: an
        expression of more than MAX_NODES nodes, one that uses autograd, `None` or `...`."""
        uses = self.autograd_use(node, MAX_NODES)
        if uses is not None:
            refuse("autograd", uses)
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            refuse("unanswered", f"still `{'None' if node.value is None else '...'}`")

    def autograd_use(self, node: ast.AST, limit: int | None = None) -> str | None:
        """How `node` uses autograd (`.grad`, `torch.autograd`, a name computed so), if it
        does; with `limit`, refuses a node of more than `limit` ast nodes instead."""
        for sub in walk(node, self.cost, limit):
            if isinstance(sub, ast.Attribute) and sub.attr in AUTOGRAD_ATTRIBUTES:
                return f"uses `.{sub.attr}`"
            if isinstance(sub, ast.Name):
                if sub.id in AUTOGRAD_NAMES:
                    return f"uses `{sub.id}`"
                known = self.known(sub.id)
                if known is not None and known[0] == "autograd":
                    return f"uses `{short(sub.id, 40)}`, which came from autograd"
            if isinstance(sub, ast.Constant) and sub.value in AUTOGRAD_ATTRIBUTES:
                return f"uses '{sub.value}'"
        return None

    def value(self, node: ast.expr, depth: int) -> Number:
        if depth > MAX_DEPTH:
            refuse("error", "expression nested too deeply")
        depth += 1
        try:
            return _checked(self.compute(node, depth))
        except ZeroDivisionError:
            refuse("error", "division by zero")
        except OverflowError:
            refuse("error", "number too large")
        except (ValueError, TypeError) as problem:
            refuse("error", f"cannot compute it: {str(problem)[:60]}")

    def compute(self, node: ast.expr, depth: int) -> object:
        if isinstance(node, ast.Constant):
            if type(node.value) in (int, float, bool):
                return node.value
            if node.value is None or node.value is Ellipsis:
                refuse("not_arithmetic", f"`{node.value!r}` is not a number")
            refuse("not_arithmetic", f"{_constant(node.value)}, not a number")
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
            refuse("not_arithmetic", "operator `~`")
        if isinstance(node, ast.BinOp):
            apply = _BINARY.get(type(node.op))
            if apply is None:
                refuse("not_arithmetic", f"operator {type(node.op).__name__}")
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
            constant = self.math_constant(node)
            if constant is not None:
                return constant
            refuse("not_arithmetic", f"reads `{dotted(node)}`")
        refuse("not_arithmetic", _WHAT.get(type(node).__name__, f"a {type(node).__name__}"))

    def name(self, name: str) -> Number:
        if name in self.numbers:
            return self.numbers[name]
        known = self.known(name)
        shown = short(name, 40)
        if known is None:
            refuse("not_arithmetic", f"uses `{shown}`, which no earlier cell assigns a number")
        status, detail = known
        if status == "unanswered":
            refuse("unanswered", f"uses `{shown}`, which is not answered yet", name)
        if status == "error":
            why = f"uses `{shown}`, which could not be read ({short(detail, 80)})"
            refuse("error", why, name)
        refuse("not_arithmetic", f"uses `{shown}`, which is not a number written by hand", name)

    def compare(self, node: ast.Compare, depth: int) -> bool:
        left = self.value(node.left, depth)
        result = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            test = _COMPARE.get(type(op))
            if test is None:
                refuse("not_arithmetic", f"comparison {type(op).__name__}")
            right = self.value(right_node, depth)
            result = result and test(left, right)
            left = right
        return result

    def call(self, node: ast.Call, depth: int) -> Number:
        func = node.func
        name = self.callee(func)
        if name is None:
            if isinstance(func, ast.Name) and func.id in ALLOWED_CALLS:
                refuse("not_arithmetic", f"calls `{func.id}`, which the notebook redefines")
            refuse("not_arithmetic", f"calls `{dotted(func)}`")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            refuse("not_arithmetic", f"calls `{name}` with keyword or * arguments")
        args = [self.value(a, depth) for a in node.args]
        if name in ("pow", "math.pow"):
            if len(args) != 2:
                refuse("not_arithmetic", f"`{name}` takes two numbers here")
            return float(_power(args[0], args[1])) if name == "math.pow" else _power(*args)
        if name.startswith("math."):
            if len(args) != 1:
                refuse("not_arithmetic", f"`{name}` takes one number")
            return MATH_CALLS[name[5:]](args[0])
        if name in ("max", "min"):
            if len(args) < 2:
                refuse("not_arithmetic", f"`{name}` needs two or more numbers")
            return max(args) if name == "max" else min(args)
        if name == "round" and len(args) == 2:
            digits = args[1]
            if type(digits) is not int or abs(digits) > MAX_ROUND_DIGITS:
                refuse("error", "round() needs a small whole number of digits")
            return round(args[0], digits)
        if len(args) != 1:
            refuse("not_arithmetic", f"`{name}` takes one number")
        (arg,) = args
        if name == "abs":
            return abs(arg)
        if name == "float":
            return float(arg)
        if name == "int":
            return int(arg)
        return round(arg)
