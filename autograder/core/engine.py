"""The generic engine: every value of a spec computed by PyTorch, every gradient checked twice.

`compute(spec, [givens, ...])` runs the spec's program once on a batch of learners (each
given is a float64 tensor with one entry per learner; the programs work element-wise), reads
forward values from the named nodes, gradients and local slopes from `torch.autograd.grad`
(or from `.grad` after the real number of `.backward()` calls), and facts from the spec's
own PyTorch probes. Each gradient and local slope is then checked a second, independent
way: central finite differences, nudging the named node in two more forward runs. Finally
each chain the spec teaches (its factors multiplied) and each model answer must give
PyTorch's value. Any disagreement raises `SpecError`: a spec cannot state a wrong number.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autograder.core.spec import ExerciseSpec, Part
from autograder.core.tape import SpecError, Tape

if TYPE_CHECKING:
    import torch

FD_STEP = 1e-6
FD_RTOL = 1e-5
FD_ATOL = 1e-6
CHAIN_RTOL = 1e-9


def _run(
    spec: ExerciseSpec, base: Mapping[str, torch.Tensor], nudge: tuple[str, float] | None
) -> Tape:
    import torch

    leaves = {n: t.detach().clone().requires_grad_(True) for n, t in base.items()}
    tape = Tape(leaves, nudge)
    with torch.enable_grad():
        spec.program(tape)
    return tape


def _derivative(tape: Tape, part: Part) -> torch.Tensor:
    """PyTorch's gradient (or local slope) for `part`, with `calls` real backward calls."""
    import torch

    output, node = (tape.nodes[n] for n in part.of)
    if part.calls == 1:
        (g,) = torch.autograd.grad(output.sum(), node, retain_graph=True, allow_unused=True)
        return torch.zeros_like(node) if g is None else g.detach()
    leaf = tape.leaves.get(part.of[1])
    if leaf is None:
        raise SpecError(f"{part.name}: repeated backward calls need a given as the variable")
    leaf.grad = None
    for _ in range(part.calls):
        output.sum().backward(retain_graph=True)  # type: ignore[no-untyped-call]
    grad = leaf.grad
    if grad is None:
        raise SpecError(f"{part.name}: PyTorch left .grad empty")
    result = grad.detach().clone()
    leaf.grad = None
    return result


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=atol)


def compute(spec: ExerciseSpec, learners: Sequence[Mapping[str, float]]) -> list[dict[str, Any]]:
    """Every named value (givens, nodes, parts) for each learner's givens, checked."""
    import torch

    if not learners:
        return []
    base = {
        g: torch.tensor([float(v[g]) for v in learners], dtype=torch.float64)
        for g in spec.given_names
    }
    constants = {
        c: torch.tensor([float(v[c]) for v in learners], dtype=torch.float64)
        for c in spec.constants
    }
    tape = _run(spec, {**base, **constants}, None)
    columns: dict[str, list[Any]] = {}
    for name, tensor in tape.nodes.items():
        columns[name] = tensor.detach().tolist()
    nudged: dict[str, tuple[Tape, Tape]] = {}
    for part in spec.parts:
        if part.kind == "forward":
            columns[part.name] = columns[part.of[0]]
        elif part.kind in ("gradient", "local_slope"):
            exact = _derivative(tape, part).tolist()
            node = part.of[1]
            if node not in nudged:
                nudged[node] = (
                    _run(spec, {**base, **constants}, (node, FD_STEP)),
                    _run(spec, {**base, **constants}, (node, -FD_STEP)),
                )
            up, down = (t.nodes[part.of[0]].detach() for t in nudged[node])
            estimate = ((up - down) / (2 * FD_STEP) * part.calls).tolist()
            for i, (e, f) in enumerate(zip(exact, estimate, strict=True)):
                if not _close(e, f, FD_RTOL, FD_ATOL):
                    raise SpecError(
                        f"{spec.name}.{part.name}: autograd gives {e}, finite differences {f} "
                        f"(learner {i}: {dict(learners[i])})"
                    )
            columns[part.name] = [v + 0.0 for v in exact]
        elif part.kind == "fact":
            if part.fact is None:
                raise SpecError(f"{spec.name}.{part.name}: a fact needs a PyTorch probe")
            fact = part.fact(tape)
            columns[part.name] = [fact] * len(learners)
    _check_chains(spec, columns)
    return [{k: col[i] for k, col in columns.items()} for i in range(len(learners))]


def _column(expression: str, columns: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Evaluate a spec's arithmetic on whole columns (one entry per learner)."""
    import torch

    def value(node: ast.expr) -> torch.Tensor:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return torch.tensor(float(node.value), dtype=torch.float64)
        if isinstance(node, ast.Name):
            return columns[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Div):
                return left / right
            if isinstance(node.op, ast.Pow):
                return left**right
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [value(a) for a in node.args]
            if node.func.id in ("max", "min") and len(args) == 2:
                pick = torch.maximum if node.func.id == "max" else torch.minimum
                return pick(*torch.broadcast_tensors(*args))
            if node.func.id == "abs" and len(args) == 1:
                return torch.abs(args[0])
        raise SpecError(f"cannot evaluate {ast.unparse(node)!r} in {expression!r}")

    return value(_parsed(expression))


@functools.lru_cache(maxsize=1024)
def _parsed(expression: str) -> ast.expr:
    """A spec's expression, parsed once (the specs hold a few hundred; a class's judging
    computes them again for every learner's fresh draws). Read only, never changed."""
    return ast.parse(expression, mode="eval").body


def _check_chains(spec: ExerciseSpec, columns: Mapping[str, list[Any]]) -> None:
    """Each part's chain and model answer must give PyTorch's value, for every learner."""
    import torch

    tensors = {
        name: torch.tensor(values, dtype=torch.float64)
        for name, values in columns.items()
        if values and type(values[0]) in (int, float)
    }
    for part in spec.parts:
        if part.kind in ("fact", "function", "class"):
            continue
        reference = tensors[part.name]
        checks = [("model answer " + part.answer, _column(part.answer, tensors))]
        if part.factors:
            product = torch.ones_like(reference)
            for factor in part.factors:
                product = product * _column(factor.expr, tensors)
            checks.append(("chain", product))
        for what, got in checks:
            close = torch.isclose(got, reference, rtol=CHAIN_RTOL, atol=1e-12)
            if not bool(close.all()):
                i = int((~close).nonzero()[0])
                raise SpecError(
                    f"{spec.name}.{part.name}: {what} gives {float(got[i])}, "
                    f"PyTorch {float(reference[i])}"
                )


def count_operations(root: torch.Tensor) -> int:
    """Backward nodes reachable from `root`, leaves' AccumulateGrad excluded."""
    seen: set[int] = set()
    stack = [root.grad_fn]
    count = 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ != "AccumulateGrad":
            count += 1
        stack.extend(fn for fn, _ in node.next_functions)
    return count
