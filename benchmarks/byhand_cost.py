"""Benchmark: CPU seconds per KB the by-hand reader spends on hostile cells.

Each attack family builds a cell of a given size that once made the reader super-linear
(a chained assignment re-evaluated per target, details quoting details, salvage re-parsing
long windows, ...); an honest cell of the same size is the baseline. The reader must stay
linear: seconds per KB about the same at every size. Run it on an older checkout to see
the before figures (`PYTHONPATH=/path/to/old python benchmarks/byhand_cost.py`).

It then times a self-study kernel's checks late in a long session (a check after every
cell): the check reading the whole history again against `HistoryReader`, which reads only
the cells run since the last check.

    python benchmarks/byhand_cost.py [--sizes 4000,16000,64000] [--sessions 200,2000,10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def honest(size: int) -> str:
    """Worked answers as a learner writes them."""
    lines, i = [], 0
    while sum(map(len, lines)) < size:
        lines.append(f"h{i} = 3.0 * x - {i % 7}.5")
        lines.append(f"dL_dw{i} = 2 * (h{i} - y) * x if h{i} > 0 else 0.0")
        i += 1
    return "x, y = 2.0, 1.0\n" + "\n".join(lines)


def chain(size: int) -> str:
    """`a = a = ... = 1+1+...`: many targets sharing one large right-hand side."""
    return _repeat("a=", size // 2) + "+".join(["1"] * (size // 4))


def chain_of_tuples(size: int) -> str:
    """`(a, b) = (a, b) = ... = (1+1+..., 1+1+...)`."""
    half = "+".join(["1"] * (size // 8))
    return _repeat("(a,b)=", size // 2) + f"({half},{half})"


def chain_of_strings(size: int) -> str:
    """`a = a = ... = 'xxx...'`: a long literal quoted in every target's refusal."""
    return _repeat("a=", size // 2) + "'" + "x" * (size // 2) + "'"


def chain_of_unpacking(size: int) -> str:
    """`a, b = a, b = ... = f(1+1+...)`: unpacking something that is not a tuple."""
    return _repeat("a,b=", size // 2) + "f(" + "+".join(["1"] * (size // 4)) + ")"


def nested_targets(size: int) -> str:
    """Targets nested ever deeper over one nested tuple."""
    depth = 90
    value = "(1," * depth + "1" + ")" * depth
    targets = []
    for d in range(1, depth):
        targets.append("(a," * d + "b" + ")" * d)
    cell = "=".join(targets) + "=" + value
    return (cell + "\n") * max(1, size // (len(cell) + 1))


def error_details(size: int) -> str:
    """`a1 = a0`, `a2 = a1`, ...: each refusal quoting the one before it."""
    lines = ["a0 = 1/0"]
    while sum(map(len, lines)) < size:
        lines.append(f"a{len(lines)} = a{len(lines) - 1}")
    return "\n".join(lines)


def long_name(size: int) -> str:
    """One name as long as the cell, used again and again."""
    name = "n" * (size // 4)
    return f"{name} = 1/0\nx = {name} + {name}\ny = x = {name}"


def salvage(size: int) -> str:
    """Long lines that never parse: salvage tries windows of up to 20 lines."""
    line = "x = [" + "1," * 40
    return "\n".join([line] * max(1, size // len(line)))


def decorators(size: int) -> str:
    """Many decorators on one definition."""
    return _repeat("@d\n", size) + "def f(): pass"


def walruses(size: int) -> str:
    """`a = (b := 1) + (b := 1) + ...`, once per target."""
    return _repeat("a=", size // 2) + "+".join(["(b:=1)"] * (size // 14))


def big_numbers(size: int) -> str:
    """Numbers that grow until refused."""
    return _repeat("x = 9**9**9**9 * 10**70 * 10**70 * round(1e300, 99)\n", size)


ATTACKS: dict[str, Callable[[int], str]] = {
    f.__name__: f
    for f in (
        chain,
        chain_of_tuples,
        chain_of_strings,
        chain_of_unpacking,
        nested_targets,
        error_details,
        long_name,
        salvage,
        decorators,
        walruses,
        big_numbers,
    )
}


def seconds(cell: str) -> float:
    from autograder.diagnosis.byhand import read_hand_answers

    start = time.process_time()
    read_hand_answers([cell])
    return time.process_time() - start


SESSION_CELLS = (
    'x, w, b, y = exercise.given("x", "w", "b", "y")',
    "h = w * x + b\na = max(0.0, h)",
    "L = (a - y) ** 2\ndL_da = 2 * (a - y)",
    "dL_dw = dL_da * (1.0 if h > 0 else 0.0) * x",
)
GIVENS = {"x": 1.5, "w": 2.0, "b": -0.5, "y": 1.0}


def late_checks(cells: int, timed: int = 50) -> tuple[float, float]:
    """CPU seconds per check over the last `timed` checks of a session of `cells` cells:
    (reading the whole history at each, `HistoryReader`)."""
    from autograder.diagnosis.byhand import HistoryReader, read_hand_answers

    history = [f"{SESSION_CELLS[i % len(SESSION_CELLS)]}  # run {i}" for i in range(cells)]
    reader = HistoryReader()
    for run in range(1, cells - timed):
        reader.answers(history[:run], GIVENS)
    start = time.process_time()
    for run in range(cells - timed, cells + 1):
        reader.answers(history[:run], GIVENS)
    incremental = time.process_time() - start
    start = time.process_time()
    for run in range(cells - timed, cells + 1):
        read_hand_answers(history[:run], GIVENS)
    whole = time.process_time() - start
    assert reader.answers(history, GIVENS) == read_hand_answers(history, GIVENS)
    return whole / (timed + 1), incremental / (timed + 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4000,16000,64000")
    parser.add_argument("--limit", type=float, default=60.0, help="skip larger sizes after this")
    parser.add_argument("--sessions", default="200,2000,10000", help="cells run in a session")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'cell':<20}" + "".join(f"{f'{s // 1000} KB s/KB':>14}" for s in sizes))
    for name, build in {"honest": honest, **ATTACKS}.items():
        row = f"{name:<20}"
        for size in sizes:
            cell = build(size)
            took = seconds(cell)
            row += f"{took / (len(cell) / 1000):>14.5f}"
            if took > args.limit:
                row += "  (larger sizes skipped)"
                break
        print(row, flush=True)
    columns = ("whole history ms/check", "HistoryReader ms/check")
    print(f"\n{'cells run':>10}{columns[0]:>26}{columns[1]:>26}{'ratio':>8}")
    for cells in (int(n) for n in args.sessions.split(",")):
        whole, incremental = late_checks(cells)
        ratio = whole / incremental if incremental else float("inf")
        print(
            f"{cells:>10}{whole * 1000:>26.2f}{incremental * 1000:>26.3f}{ratio:>8.0f}", flush=True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
