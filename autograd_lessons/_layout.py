"""Where each node of a graph goes in the left-to-right drawing (pure, no matplotlib).

Column: the longest path from the node to the root, counted from the right, so
every node sits left of everything it feeds and the root is alone on the right.
Row: within a column, nodes are ordered by the mean height of the nodes they feed
(which keeps arrows short and mostly uncrossed) and spaced one unit apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Protocol

__all__ = ["layout"]


class _Node(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def inputs(self) -> tuple[int, ...]: ...


def layout(nodes: Sequence[_Node]) -> dict[int, tuple[int, float]]:
    """Map node id to (column, row); ``nodes`` are root first, each before its inputs."""
    if not nodes:
        return {}
    depth: dict[int, int] = {nodes[0].id: 0}
    consumers: dict[int, list[int]] = {}
    first_seen: dict[int, int] = {nodes[0].id: 0}
    for node in nodes:
        for source in node.inputs:
            depth[source] = max(depth.get(source, 0), depth[node.id] + 1)
            consumers.setdefault(source, []).append(node.id)
            first_seen.setdefault(source, len(first_seen))
    deepest = max(depth.values())
    columns: dict[int, list[int]] = {}
    for node in nodes:
        columns.setdefault(depth[node.id], []).append(node.id)

    row: dict[int, float] = {nodes[0].id: 0.0}
    for level in range(1, deepest + 1):
        members = columns.get(level, [])
        ideal = {i: fmean(row[c] for c in consumers[i]) for i in members}
        members.sort(key=lambda i: (-ideal[i], first_seen[i]))  # top to bottom
        placed: list[float] = []
        for i in members:
            wanted = ideal[i]
            placed.append(wanted if not placed else min(wanted, placed[-1] - 1.0))
        shift = fmean(ideal.values()) - fmean(placed)
        for i, y in zip(members, placed, strict=True):
            row[i] = y + shift
    return {i: (deepest - depth[i], row[i]) for i in depth}
