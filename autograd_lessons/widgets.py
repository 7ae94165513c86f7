"""The three interactive widgets of the course (ipywidgets 8 + matplotlib).

Each widget renders a pure state function (``tangent_state``, ``neuron_state``,
``AccumulationDemo``, in ``states.py``) that the tests call without a browser.
The picture lives in an ``ipywidgets.Output``; every update replaces its content in
one step (one ``outputs`` change rather than a clear followed by a display), so it
never flickers or jumps, and it works without a kernel, which lets tests check it.

The read-outs are ``ipywidgets.HTML`` with stable CSS classes and texts, for
browser tests; numbers use 6 significant digits, whole numbers end in ``.0`` and
``-0.0`` shows as ``0.0`` (``12.0``, ``0.0408``, ``0.0``).
"""

from __future__ import annotations

import ipywidgets as widgets

from ._format import format_short
from .pictures import HistoryPicture, NeuronPicture, TangentPicture
from .states import (
    AccumulationDemo,
    NeuronState,
    TangentState,
    neuron_state,
    tangent_state,
)
from .widget_parts import StillBox, show_picture, slider, still_of

__all__ = [
    "AccumulationDemo",
    "AccumulationStepper",
    "NeuronExplorer",
    "NeuronState",
    "TangentExplorer",
    "TangentState",
    "accumulation_stepper",
    "neuron_explorer",
    "neuron_state",
    "tangent_explorer",
    "tangent_state",
]

GATE_COLOURS = {"open": "#1a7f37", "shut": "#c62828"}
# Secondary text: JupyterLab's own secondary colour (readable in light and dark themes).
HOW_STYLE = "color: var(--jp-content-font-color2, #555); padding-left: 1.5em"
LEAK = 0.01


# --- lesson 1: the tangent ---------------------------------------------------------


def tangent_html(state: TangentState) -> str:
    """``x = 3.0 | y = 9.0 | slope = 6.0 | step left`` inside ``div.tangent-readout``."""
    return (
        '<div class="tangent-readout">'
        f'<span class="tangent-x">x = {format_short(state.x)}</span> | '
        f'<span class="tangent-y">y = {format_short(state.y)}</span> | '
        f'<span class="tangent-slope">slope = {format_short(state.slope)}</span> | '
        f'<b class="tangent-direction">{state.direction}</b>'
        "</div>"
    )


def tangent_alt(state: TangentState) -> str:
    """Text alternative of the tangent picture."""
    where = (
        "the tangent is flat: this is the minimum"
        if state.slope == 0
        else f"a green arrow points {'left' if state.slope > 0 else 'right'}, downhill"
    )
    return (
        f"Plot of the curve y = x² with its tangent line at x = {format_short(state.x)} "
        f"(y = {format_short(state.y)}, slope {format_short(state.slope)}); {where}."
    )


class TangentExplorer:
    """Slider for x in [-4, 4]; the tangent of y = x² at x; x, y, slope and direction."""

    def __init__(self, x: float = 3.0) -> None:
        self.slider = slider("x", x, (-4.0, 4.0))
        self.readout = widgets.HTML()
        self.plot = widgets.Output()
        self.picture = TangentPicture()
        self.widget = StillBox([self.slider, self.readout, self.plot], {})
        self.widget.add_class("tangent-explorer")
        self.state = self.update()
        self.widget.still = still_of(self.readout.value, self.picture, tangent_alt(self.state))
        self.slider.observe(self._on_change, names="value")

    def _on_change(self, change: object) -> None:
        self.state = self.update()

    def update(self) -> TangentState:
        """Recompute from the slider, refresh the read-out and the picture."""
        state = tangent_state(self.slider.value)
        self.readout.value = tangent_html(state)
        self.picture.update(state)
        show_picture(self.plot, self.picture, tangent_alt(state))
        return state


def tangent_explorer(x: float = 3.0) -> widgets.Widget:
    """Widget: move x and watch the tangent of y = x² and the slope PyTorch computes.

    Read-out text: ``x = 3.0 | y = 9.0 | slope = 6.0 | step left`` (``step right``,
    ``at the minimum``), in ``div.tangent-readout`` with spans ``.tangent-x``,
    ``.tangent-y``, ``.tangent-slope`` and ``.tangent-direction``.
    """
    return TangentExplorer(x).widget


# --- lessons 3 and 4: the neuron and its gate ----------------------------------------


def _factor(number: float) -> str:
    """A number as a factor of a worked product: negative ones in brackets, ``(-1.0)``."""
    text = format_short(number)
    return f"({text})" if text.startswith("-") else text


# Fixed column widths (em) and digits of one width: the columns never shift as numbers
# change. The first is wide enough for ``dL/dw = -0.020575``, the second for the gate note.
READOUT_COLUMNS_EM = (10.5, 26.0)


def neuron_html(state: NeuronState) -> str:
    """The read-out table of the neuron explorer (format documented in ``neuron_explorer``).

    Negative factors of the worked products are bracketed: ``w·x + b = 3.0·(-1.0) + (-1.0)``.
    """
    act = f"LeakyReLU({format_short(state.negative_slope)})" if state.negative_slope else "ReLU"
    f, p = format_short, _factor
    gate_note = (
        "h > 0: the gate passes the gradient (da/dh = 1)"
        if state.gate == "open"
        else "h ≤ 0: the gate lets only the leak through"
        if state.negative_slope
        else "h ≤ 0: the gate multiplies the gradient by 0"
    )
    rows = [
        ("h", f"h = {f(state.h)}", f"w·x + b = {p(state.w)}·{p(state.x)} + {p(state.b)}"),
        ("a", f"a = {f(state.a)}", f"{act}(h)"),
        ("loss", f"L = {f(state.loss)}", f"(a − target)², target = {f(state.target)}"),
        ("gate", f"gate: {state.gate}", gate_note),
        ("dL_da", f"dL/da = {f(state.dL_da)}", "2(a − target)"),
        ("da_dh", f"da/dh = {f(state.da_dh)}", f"local slope of the {act}"),
        ("dL_dh", f"dL/dh = {f(state.dL_dh)}", "dL/da × da/dh"),
        ("dL_dw", f"dL/dw = {f(state.dL_dw)}", f"dL/dh × x = {p(state.dL_dh)} × {p(state.x)}"),
        ("dL_db", f"dL/db = {f(state.dL_db)}", f"dL/dh × 1 = {f(state.dL_dh)}"),
    ]
    cells = []
    for key, text, how in rows:
        style = ""
        if key == "gate":
            style = f' style="color: {GATE_COLOURS[state.gate]}; font-weight: bold"'
            key = f"gate gate gate-{state.gate}"  # class="neuron-gate gate gate-open"
        cells.append(
            f'<tr><td class="neuron-{key}"{style}>{text}</td>'
            f'<td class="neuron-how" style="{HOW_STYLE}">{how}</td></tr>'
        )
    first, second = READOUT_COLUMNS_EM
    table_style = (
        f"table-layout: fixed; width: {first + second}em; border-collapse: collapse; "
        "white-space: nowrap; font-variant-numeric: tabular-nums"
    )
    columns = f'<colgroup><col style="width: {first}em"><col style="width: {second}em"></colgroup>'
    return f'<table class="neuron-readout" style="{table_style}">{columns}{"".join(cells)}</table>'


def neuron_alt(state: NeuronState) -> str:
    """Text alternative of the neuron picture."""
    act = "LeakyReLU" if state.negative_slope else "ReLU"
    f = format_short
    return (
        f"Left: the {act} curve with h = {f(state.h)} marked, gate {state.gate}. "
        f"Right: bars of the gradients dL/da = {f(state.dL_da)}, dL/dh = {f(state.dL_dh)}, "
        f"dL/dw = {f(state.dL_dw)}, dL/db = {f(state.dL_db)}."
    )


# Slider ranges (step 0.5). x reaches -1, the dead case of lesson 4; w goes well past
# its starting 3.0, so "make w bigger and watch dL/dw grow" works.
X_RANGE = (-3.0, 3.0)
W_RANGE = (-4.0, 6.0)
B_RANGE = (-4.0, 4.0)


def largest_h(
    x_range: tuple[float, float], w_range: tuple[float, float], b_range: tuple[float, float]
) -> float:
    """The largest |h| = |w·x + b| the sliders can reach (22.0 for the ranges above)."""
    wx = max(abs(w * x) for w in w_range for x in x_range)
    return wx + max(abs(b) for b in b_range)


class NeuronExplorer:
    """Sliders for x, w, b; the forward values, the gate, every gradient, a picture."""

    def __init__(
        self,
        x: float = 2.0,
        w: float = 3.0,
        b: float = -1.0,
        target: float = 2.0,
        negative_slope: float = 0.0,
    ) -> None:
        self.target = target
        self.leak_value = negative_slope or LEAK
        self.x_slider = slider("x", x, X_RANGE)
        self.w_slider = slider("w", w, W_RANGE)
        self.b_slider = slider("b", b, B_RANGE)
        self.leaky = widgets.Checkbox(
            value=negative_slope > 0,
            description=f"LeakyReLU (slope {format_short(self.leak_value)} for h < 0)",
            indent=False,
        )
        self.readout = widgets.HTML()
        self.plot = widgets.Output()
        self.picture = NeuronPicture(h_limit=largest_h(X_RANGE, W_RANGE, B_RANGE))
        controls = widgets.VBox([self.x_slider, self.w_slider, self.b_slider, self.leaky])
        self.widget = StillBox([widgets.HBox([controls, self.readout]), self.plot], {})
        self.widget.add_class("neuron-explorer")
        self.state = self.update()
        self.widget.still = still_of(self.readout.value, self.picture, neuron_alt(self.state))
        for control in (self.x_slider, self.w_slider, self.b_slider, self.leaky):
            control.observe(self._on_change, names="value")

    def _on_change(self, change: object) -> None:
        self.state = self.update()

    def update(self) -> NeuronState:
        """Recompute forward and backward from the controls; refresh table and picture."""
        state = neuron_state(
            self.x_slider.value,
            self.w_slider.value,
            self.b_slider.value,
            self.target,
            self.leak_value if self.leaky.value else 0.0,
        )
        self.readout.value = neuron_html(state)
        self.picture.update(state)
        show_picture(self.plot, self.picture, neuron_alt(state))
        return state


def neuron_explorer(
    x: float = 2.0,
    w: float = 3.0,
    b: float = -1.0,
    target: float = 2.0,
    negative_slope: float = 0.0,
) -> widgets.Widget:
    """Widget: the neuron of lessons 3-4. Move x in [-3, 3], w in [-4, 6], b in [-4, 4] (step 0.5).

    The table (``table.neuron-readout``) has one row per quantity; the first cell's
    text is exactly ``h = 5.0``, ``a = 5.0``, ``L = 9.0``, ``gate: open`` (or
    ``gate: shut``), ``dL/da = 6.0``, ``da/dh = 1.0``, ``dL/dh = 6.0``,
    ``dL/dw = 12.0``, ``dL/db = 6.0``, with classes ``neuron-h``, ``neuron-a``,
    ``neuron-loss``, ``neuron-gate gate gate-open`` (or ``gate-shut``), ``neuron-dL_da``,
    ``neuron-da_dh``, ``neuron-dL_dh``, ``neuron-dL_dw``, ``neuron-dL_db``; the second
    cell (``neuron-how``) says how it was obtained, negative factors bracketed
    (``w·x + b = 3.0·(-1.0) + (-1.0)``). At x = -1 the cells read
    ``gate: shut``, ``dL/dw = 0.0`` and ``dL/db = 0.0``. A checkbox switches to
    LeakyReLU (``negative_slope``, or 0.01 if that is 0).
    """
    return NeuronExplorer(x, w, b, target, negative_slope).widget


# --- lesson 5.2: gradients accumulate ----------------------------------------------


def history_html(demo: AccumulationDemo) -> str:
    """``x.grad after each backward: 6.0, 12.0, 18.0`` inside ``div.accumulation-history``."""
    values = ", ".join(format_short(v) for v in demo.history) or "none yet"
    one = format_short(demo.true_gradient)
    zeroing = "zeroed before each backward" if demo.zero_grad else "not zeroed: it adds up"
    return (
        '<div class="accumulation-history">'
        f'<div class="accumulation-values">x.grad after each backward: {values}</div>'
        f'<div class="accumulation-note">one backward gives {one}; .grad is {zeroing}</div>'
        "</div>"
    )


def history_alt(demo: AccumulationDemo) -> str:
    """Text alternative of the accumulation picture."""
    values = ", ".join(format_short(v) for v in demo.history) or "no backward call yet"
    return (
        f"Bar chart of x.grad after each backward call: {values}. A dashed line marks "
        f"the gradient of one call, {format_short(demo.true_gradient)}."
    )


def _compact() -> widgets.Layout:
    return widgets.Layout(width="auto", margin="2px 12px 2px 0")


class AccumulationStepper:
    """Buttons to run ``y = x**2; y.backward()`` again, zero first or not, and reset."""

    def __init__(self, x: float = 3.0) -> None:
        self.demo = AccumulationDemo(x)
        # Widths "auto" (ipywidgets gives buttons 148 px and a checkbox 300 px by default)
        # and small right margins: the three controls sit side by side, compactly.
        self.step_button = widgets.Button(
            description="backward again", icon="play", layout=_compact()
        )
        self.zero_box = widgets.Checkbox(
            value=False,
            description="zero .grad before each backward",
            indent=False,
            layout=_compact(),
        )
        self.reset_button = widgets.Button(description="reset", icon="undo", layout=_compact())
        self.readout = widgets.HTML()
        self.plot = widgets.Output()
        self.picture = HistoryPicture()
        buttons = widgets.HBox(
            [self.step_button, self.zero_box, self.reset_button],
            layout=widgets.Layout(align_items="center", flex_flow="row wrap"),
        )
        self.widget = StillBox([buttons, self.readout, self.plot], {})
        self.widget.add_class("accumulation-stepper")
        self.step_button.on_click(lambda _button: self.step())
        self.reset_button.on_click(lambda _button: self.reset())
        self.zero_box.observe(self._on_zero, names="value")
        self.refresh()
        self.widget.still = still_of(self.readout.value, self.picture, history_alt(self.demo))

    def _on_zero(self, change: object) -> None:
        self.demo.zero_grad = bool(self.zero_box.value)
        self.refresh()

    def step(self) -> float:
        """One more backward pass; returns the new x.grad."""
        value = self.demo.backward_again()
        self.refresh()
        return value

    def reset(self) -> None:
        """Back to no backward passes and ``x.grad`` None."""
        self.demo.reset()
        self.refresh()

    def refresh(self) -> None:
        """Redraw the read-out and the bar picture from the demo's history."""
        self.readout.value = history_html(self.demo)
        self.picture.update(self.demo.history, self.demo.true_gradient)
        show_picture(self.plot, self.picture, history_alt(self.demo))


def accumulation_stepper(x: float = 3.0) -> widgets.Widget:
    """Widget: press "backward again" and watch ``x.grad`` grow (6, 12, 18 at x = 3).

    Tick "zero .grad before each backward" and it stays at 6. The read-out reads
    ``x.grad after each backward: 6.0, 12.0, 18.0`` (``none yet`` before the first
    press) in ``div.accumulation-values``.
    """
    return AccumulationStepper(x).widget
