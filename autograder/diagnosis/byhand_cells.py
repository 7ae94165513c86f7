"""Split a learner's cell into statements for the by-hand reader, without running it.

A cell is parsed with `ast`; IPython-only lines (magics, `!shell`, `help?`) are made
harmless first, and a cell with a syntax error somewhere is salvaged statement by
statement. Every parse is charged to a `ReadingCost`, and salvage stops once it has
parsed `SALVAGE_WORK_PER_CHAR` times the cell's size, so a cell costs time in proportion
to its length whatever it holds.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Final

MAX_CELL_CHARS: Final = 100_000
"""Longest cell parsed; the names a longer cell assigns are reported unreadable."""
SALVAGE_MAX_CHARS: Final = 20_000
"""Longest cell salvaged after a syntax error."""
SALVAGE_SPAN: Final = 20
"""Longest statement (in lines) recovered from a cell that does not parse as a whole."""
SALVAGE_PARSES: Final = 1000
"""Most parse attempts spent recovering one cell; later lines are reported unreadable."""
SALVAGE_WORK_PER_CHAR: Final = 40
"""Characters parsed while salvaging a cell, per character of the cell, at most."""
PYTHON_CELL_MAGICS: Final = frozenset({"time", "capture"})

_PARSE_ERRORS: Final = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_ASSIGNED: Final = re.compile(
    r"([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*)[ \t]*(?::[^=\n]*)?=(?!=)"
)
_HELP_LINE: Final = re.compile(r"\s*(?:\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*")
_MAGIC_ASSIGN: Final = re.compile(r"(\s*[A-Za-z_][\w, \t]*?)=\s*[%!]")
_CLAUSE: Final = re.compile(r"(?:else|elif|except|finally)\b")


@dataclass
class ReadingCost:
    """Work spent reading cells: characters given to the parser and ast nodes visited."""

    parsed_chars: int = 0
    nodes: int = 0


@dataclass(frozen=True)
class BadLine:
    """A line of a cell that could not be parsed, and the names it seems to assign."""

    lineno: int
    names: tuple[str, ...]
    message: str


Item = ast.stmt | BadLine


def assigned_names(line: str) -> tuple[str, ...]:
    """Names a top-level line looks like it assigns (`a = ...`, `a, b = ...`)."""
    match = _ASSIGNED.match(line)
    if match is None:
        return ()
    return tuple(part.strip() for part in match.group(1).split(","))


def _bad_lines(source: str, message: str, first: int = 0) -> list[Item]:
    """Every line from index `first` that looks like an assignment, reported as `message`."""
    lines = source.split("\n")
    return [
        BadLine(i + 1, names, message)
        for i in range(first, len(lines))
        if (names := assigned_names(lines[i]))
    ]


def strip_magics(source: str) -> str | None:
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


def parse(source: str, cost: ReadingCost) -> list[ast.stmt] | None:
    """The statements of `source`, or None when it does not parse."""
    cost.parsed_chars += len(source)
    try:
        return ast.parse(source).body
    except _PARSE_ERRORS:
        return None


def _continuations(lines: list[str]) -> list[bool]:
    """For each index j, True when the next code line from j continues the statement
    before it (indented, a closing bracket, `.attr`, or an else/elif/except/finally)."""
    result = [False] * (len(lines) + 1)
    for k in range(len(lines) - 1, -1, -1):
        stripped = lines[k].lstrip()
        if not stripped.strip() or stripped.startswith("#"):
            result[k] = result[k + 1]
        else:
            result[k] = (
                lines[k][0] in " \t" or stripped[0] in ")]}." or bool(_CLAUSE.match(stripped))
            )
    return result


def salvage(source: str, cost: ReadingCost) -> list[Item]:
    """Recover the parsable statements of a cell with a syntax error somewhere."""
    if len(source) > SALVAGE_MAX_CHARS:
        return _bad_lines(source, "cell too long to recover from its syntax error")
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    items: list[Item] = []
    continues = _continuations(lines)
    parses = SALVAGE_PARSES
    budget = cost.parsed_chars + SALVAGE_WORK_PER_CHAR * len(source)
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        for j in range(i + 1, min(len(lines), i + SALVAGE_SPAN) + 1):
            if parses <= 0 or (j < len(lines) and continues[j]):
                continue
            if cost.parsed_chars + starts[j] - starts[i] > budget:
                message = "cell too costly to recover from its syntax error"
                return items + _bad_lines(source, message, i)
            parses -= 1
            body = parse("\n".join(lines[i:j]), cost)
            if body is not None:
                items.extend(body)
                i = j
                break
        else:
            names = assigned_names(lines[i])
            if names:
                items.append(BadLine(i + 1, names, f"syntax error on line {i + 1} of its cell"))
            i += 1
    return items


def cell_items(source: str, cost: ReadingCost) -> list[Item]:
    """The statements of one cell in order, with the lines that could not be parsed."""
    if len(source) > MAX_CELL_CHARS:
        return _bad_lines(source, f"cell too long to read (over {MAX_CELL_CHARS} characters)")
    body = parse(source, cost)
    if body is not None:
        return list(body)
    cleaned = strip_magics(source)
    if cleaned is None:
        return []
    body = parse(cleaned, cost)
    if body is not None:
        return list(body)
    return salvage(cleaned, cost)
