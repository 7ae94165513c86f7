"""CSV cells a spreadsheet never runs (core.spreadsheet), the rule OWASP gives for CSV
injection: text starting with = + - @ tab or CR behind an apostrophe, numbers as numbers."""

from __future__ import annotations

import csv
import io

import pytest

from autograder.core.spreadsheet import InertWriter, inert_cell


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("-2 * (a - y)", "'-2 * (a - y)"),  # a learner's sign mistake, as the report keeps it
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("@SUM(1+1)", "'@SUM(1+1)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("-", "'-"),
        ("-inf", "'-inf"),
        ("a - y", "a - y"),  # inside a cell is harmless
        ("ada", "ada"),
        ("-0.5", "-0.5"),  # numbers stay numbers, as text or not
        ("+3", "+3"),
        ("1e-3", "1e-3"),
        ("-1.5E+2", "-1.5E+2"),
        (-2.0, -2.0),
        (3, 3),
        (None, ""),
        (True, "True"),
    ],
)
def test_each_cell(value: object, written: object) -> None:
    assert inert_cell(value) == written


def test_writer_reads_back_as_text_and_numbers() -> None:
    out = io.StringIO()
    writer = InertWriter(out)
    writer.writerows([["student", "formula", "score"], ["=cmd", "-2 * (a - y)", -1.5]])
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[1] == ["'=cmd", "'-2 * (a - y)", "-1.5"]
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for row in rows for cell in row)
