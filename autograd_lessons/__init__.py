"""Helpers the lessons import: graph drawing, widgets and the hand-vs-.grad comparison.

- ``compare`` / ``compare_values``: check a hand-derived number against ``.grad``.
- ``Tape``, ``walk_graph``, ``draw_graph``: the real autograd graph, values and grads.
- ``tangent_explorer``, ``neuron_explorer``, ``accumulation_stepper``: the widgets,
  with their pure state functions ``tangent_state``, ``neuron_state``, ``AccumulationDemo``.
- ``check_prediction``, ``nudge_slope``, ``gradient_check``: predict, then run;
  hand, nudge, ``.grad``.
- ``setup_notebook``: the setup cell of every lesson.
"""

from .compare import Comparison, compare, compare_values
from .drawing import GraphDrawing, draw_graph
from .graph import GraphFreedError, GraphNode, Tape, walk_graph
from .predict import check_prediction, gradient_check, nudge_slope
from .setup import setup_notebook
from .states import AccumulationDemo, NeuronState, TangentState, neuron_state, tangent_state
from .widgets import (
    AccumulationStepper,
    NeuronExplorer,
    TangentExplorer,
    accumulation_stepper,
    neuron_explorer,
    tangent_explorer,
)

__all__ = [
    "AccumulationDemo",
    "AccumulationStepper",
    "Comparison",
    "GraphDrawing",
    "GraphFreedError",
    "GraphNode",
    "NeuronExplorer",
    "NeuronState",
    "Tape",
    "TangentExplorer",
    "TangentState",
    "accumulation_stepper",
    "check_prediction",
    "compare",
    "compare_values",
    "draw_graph",
    "gradient_check",
    "neuron_explorer",
    "neuron_state",
    "nudge_slope",
    "setup_notebook",
    "tangent_explorer",
    "tangent_state",
    "walk_graph",
]
