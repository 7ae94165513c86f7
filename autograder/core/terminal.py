"""Printing what learners control (file names, folder names, reasons quoting them) without
letting it drive the terminal: `shown(text)` escapes control characters (ESC sequences,
carriage returns, newlines), invisible format characters and bidirectional overrides, so a
name prints as what it is and a hand-in cannot clear the screen or forge a line.
"""

from __future__ import annotations

import unicodedata

_UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}  # control, format, separators, unassigned


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: object) -> str:
    """`text` safe to print on one terminal line: every control, format (bidi included)
    or unassigned character written as a Python escape (ESC as \\x1b)."""
    value = str(text)
    if value.isascii() and value.isprintable():
        return value  # the common case, at C speed
    return "".join(_escape(c) if unicodedata.category(c) in _UNSAFE else c for c in value)
