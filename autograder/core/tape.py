"""What a spec's program records (`Tape`), and the error a spec that cannot hold raises.

Apart from the engine, so the spec format (`core.spec`) can name the tape its programs
take without importing the engine that runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class SpecError(AssertionError):
    """A spec's program, chain or model answer disagrees with PyTorch."""


class Tape:
    """What a spec's program records: its givens as leaves and every named node."""

    def __init__(self, leaves: Mapping[str, torch.Tensor], nudge: tuple[str, float] | None = None):
        self.nodes: dict[str, torch.Tensor] = {}
        self.nudge = nudge
        for name, leaf in leaves.items():
            self.nodes[name] = self._nudged(name, leaf)
        self.leaves = dict(leaves)

    def _nudged(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        if self.nudge is not None and self.nudge[0] == name:
            return tensor + self.nudge[1]
        return tensor

    def given(self, *names: str) -> tuple[torch.Tensor, ...]:
        """The given values `names` (leaves that require grad)."""
        return tuple(self.nodes[n] for n in names)

    def node(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """Record `tensor` as the quantity `name` and return it (nudged in checking runs)."""
        if name in self.nodes:
            raise SpecError(f"node {name!r} recorded twice")
        self.nodes[name] = self._nudged(name, tensor)
        return self.nodes[name]

    def grad(self, output: torch.Tensor, wrt: torch.Tensor) -> torch.Tensor:
        """d output / d wrt, itself differentiable (for a step of gradient descent)."""
        import torch

        (g,) = torch.autograd.grad(output.sum(), wrt, create_graph=True)
        return g
