"""CSV files a spreadsheet opens as data, never as formulas (OWASP's CSV injection advice).

A spreadsheet reads a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage
return before one) as a formula: a learner's formula `-2 * (a - y)` or a name such as
`=HYPERLINK(...)` would run. Every CSV the project writes goes through `InertWriter`,
whose cells starting with one of those are given a leading apostrophe, which spreadsheets
read as "text" and do not show. Numbers stay numbers: an int or float, or a text that is a
plain number (`-0.5`, `1e-3`), is written as it is.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import IO, Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def inert_cell(value: object) -> object:
    """`value` as a cell no spreadsheet runs: numbers as they are, None as empty, text
    that a spreadsheet would read as a formula behind an apostrophe."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


class InertWriter:
    """`csv.writer` whose every cell passes through `inert_cell`."""

    def __init__(self, handle: IO[str], **options: Any) -> None:
        self._writer = csv.writer(handle, **options)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([inert_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)
