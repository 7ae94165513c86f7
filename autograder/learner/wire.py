"""A learner's value as the class check service receives it: plain JSON, never the object.

Numbers keep their exact type and value (bool, int, float: `repr`, so nan and inf too);
None stays None; anything else travels as its type's name, whether it is a PyTorch
tensor, and how `format_value` shows it. `decode_value` gives the judge a stand-in that
prints and is classified as the kernel's object was, so verdicts read as in self-study.
Shipped in the students' environment: imports only `core.verdict`.
"""

from __future__ import annotations

from typing import Any

from autograder.core.verdict import Shown, is_tensor, short_repr

MAX_TEXT = 200


def encode_value(value: object) -> dict[str, Any]:
    """`value` as JSON the check service can judge."""
    kind = type(value)
    if kind is bool:
        return {"bool": value}
    if kind is int:
        return {"int": str(value)}
    if kind is float:
        return {"float": repr(value)}
    if value is None:
        return {"none": True}
    return {"type": kind.__name__[:80], "tensor": is_tensor(value), "shown": short_repr(value)}


class _TorchTensor(Shown):
    """Stands for a PyTorch tensor (`_result_problem` looks for a torch `Tensor` base)."""


_TorchTensor.__name__ = _TorchTensor.__qualname__ = "Tensor"
_TorchTensor.__module__ = "torch"


def decode_value(wire: object) -> object:
    """The judge's view of an encoded value; ValueError when it is not one."""
    if not isinstance(wire, dict):
        raise ValueError("a value must be a JSON object")
    if "bool" in wire and type(wire["bool"]) is bool:
        return wire["bool"]
    if "int" in wire and isinstance(wire["int"], str) and len(wire["int"]) <= 4300:
        return int(wire["int"])
    if "float" in wire and isinstance(wire["float"], str) and len(wire["float"]) <= 40:
        return float(wire["float"])
    if wire.get("none") is True:
        return None
    name, shown = wire.get("type"), wire.get("shown")
    if isinstance(name, str) and name.isidentifier() and isinstance(shown, str):
        base = _TorchTensor if wire.get("tensor") is True else Shown
        stand_in = type(name[:80], (base,), {"__module__": "learner"})
        return stand_in(shown[:MAX_TEXT])
    raise ValueError(f"not an encoded value: {str(wire)[:80]}")
