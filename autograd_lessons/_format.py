"""Number formatting shared by the printed checks, the graph drawing and the widgets.

Two deterministic formats, so notebook outputs (compared by nbval) never drift:

- ``format_value``: 8 significant digits. A float32 carries about 7.2 decimal
  digits, so 8 are enough to show float32 rounding (``0.040800001``) without the
  17-digit noise of a float64 repr. Used by :func:`autograd_lessons.compare`.
- ``format_short``: 6 significant digits, for pictures and widget read-outs where
  float32 rounding would only distract (``0.0408``).

Both write whole numbers with a trailing ``.0`` (``12.0``, like Python and PyTorch
print them) and print ``-0.0`` as ``0.0``.
"""

from __future__ import annotations

import math

__all__ = ["format_diff", "format_short", "format_value"]


def _general(value: float, digits: int) -> str:
    if value == 0.0:
        return "0.0"  # also turns -0.0 (a zero gradient times a negative number) into 0.0
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{digits}g}"
    if not any(char in text for char in ".e"):
        text += ".0"
    return text


def format_value(value: float) -> str:
    """Format with 8 significant digits: ``12.0``, ``0.0408``, ``0.040800001``."""
    return _general(float(value), 8)


def format_short(value: float) -> str:
    """Format with 6 significant digits: ``12.0``, ``0.0408``, ``-0.04``."""
    return _general(float(value), 6)


def format_diff(value: float) -> str:
    """Format a difference with 2 significant digits: ``1.5e-09``, ``6``, ``0.5``."""
    return f"{float(value):.2g}"
