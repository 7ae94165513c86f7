"""``Value``: autograd by hand, one number at a time (micrograd's whole interface).

Lesson 9 builds this class piece by piece and shows each piece's source with
``show_source``; the graded version is the learner's own. Every operation returns a
new ``Value`` that remembers its inputs and how to send a gradient back to them;
``backward()`` sorts the graph topologically and runs those steps right to left,
adding (``+=``) what each path sends. Like micrograd's engine it has ``+ - * / **``
(numbers on either side), unary ``-``, ``relu()`` and ``backward()``, so micrograd's
examples run on it unchanged.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable

__all__ = ["Source", "Value", "show_source"]

Number = int | float


class Value:
    """One number with a gradient: ``Value(3.0)``; ``.data``, ``.grad`` (starts at 0)."""

    def __init__(self, data: Number, children: tuple[Value, ...] = (), op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._backward: Callable[[], None] = lambda: None
        self._prev = children
        self._op = op

    def __add__(self, other: Value | Number) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad  # local slope 1 towards each side
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Value | Number) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data * out.grad  # the slope towards one side is the other side
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, exponent: Number) -> Value:
        out = Value(self.data**exponent, (self,), f"**{exponent}")

        def _backward() -> None:
            self.grad += exponent * self.data ** (exponent - 1) * out.grad

        out._backward = _backward
        return out

    def relu(self) -> Value:
        out = Value(max(self.data, 0.0), (self,), "ReLU")

        def _backward() -> None:
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad  # the gate

        out._backward = _backward
        return out

    def backward(self) -> None:
        order: list[Value] = []
        visited: set[int] = set()

        def visit(node: Value) -> None:  # every input before the values made from it
            if id(node) not in visited:
                visited.add(id(node))
                for child in node._prev:
                    visit(child)
                order.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()

    def __neg__(self) -> Value:
        return self * -1

    def __sub__(self, other: Value | Number) -> Value:
        return self + (-other)

    def __radd__(self, other: Number) -> Value:
        return self + other

    def __rsub__(self, other: Number) -> Value:
        return Value(other) - self

    def __rmul__(self, other: Number) -> Value:
        return self * other

    def __truediv__(self, other: Value | Number) -> Value:
        return self * other**-1

    def __rtruediv__(self, other: Number) -> Value:
        return other * self**-1

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


class Source:
    """Source code shown as a highlighted Python block (plain text for other front ends)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, str]:
        return {"text/markdown": f"```python\n{self.code}\n```", "text/plain": self.code}


def show_source(*methods: Callable[..., object]) -> Source:
    """The source of pieces of ``Value``, dedented, one blank line apart (displays as code)."""
    return Source("\n\n".join(textwrap.dedent(inspect.getsource(m)).rstrip() for m in methods))
