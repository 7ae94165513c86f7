"""autograd_lessons widgets: their pure state functions, their read-outs and pictures,
the notebook setup cell and the latency benchmark. No browser: widgets are driven by
setting their values in Python, which runs the same callbacks a slider move does."""

from __future__ import annotations

import base64
import io
import re
import sys
from pathlib import Path
from typing import Any

import ipywidgets
import matplotlib
import matplotlib.pyplot as plt
import nbformat
import pytest
import stall_guard
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import autograd_lessons.setup as lesson_setup
from autograd_lessons import (
    AccumulationDemo,
    AccumulationStepper,
    NeuronExplorer,
    TangentExplorer,
    accumulation_stepper,
    neuron_explorer,
    neuron_state,
    setup_notebook,
    tangent_explorer,
    tangent_state,
)
from autograd_lessons.widgets import neuron_html

ROOT = Path(__file__).resolve().parents[2]

# --- §1 the tangent -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "slope", "direction"),
    [
        (3.0, 9.0, 6.0, "step left"),
        (-2.0, 4.0, -4.0, "step right"),
        (0.0, 0.0, 0.0, "at the minimum"),
    ],
)
def test_tangent_state(x: float, y: float, slope: float, direction: str) -> None:
    state = tangent_state(x)
    assert (state.x, state.y, state.slope, state.direction) == (x, y, slope, direction)


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=-100, max_value=100, allow_nan=False))
def test_the_slope_is_2x_and_points_uphill(x: float) -> None:
    state = tangent_state(x)
    x32 = torch.tensor(x).item()
    assert state.slope == pytest.approx(2 * x32, rel=1e-6)
    expected = "step left" if x32 > 0 else "step right" if x32 < 0 else "at the minimum"
    assert state.direction == expected


# --- §3 and §4 the neuron -------------------------------------------------------------


def test_neuron_state_lesson_3() -> None:
    s = neuron_state(2.0, 3.0, -1.0, 2.0)
    assert (s.h, s.a, s.loss, s.gate) == (5.0, 5.0, 9.0, "open")
    assert (s.dL_da, s.da_dh, s.dL_dh, s.dL_dw, s.dL_db) == (6.0, 1.0, 6.0, 12.0, 6.0)


def test_neuron_state_lesson_4_dead_relu() -> None:
    s = neuron_state(-1.0, 3.0, -1.0, 2.0)
    assert (s.h, s.a, s.loss, s.gate) == (-4.0, 0.0, 4.0, "shut")
    assert (s.da_dh, s.dL_dh, s.dL_dw, s.dL_db) == (0.0, 0.0, 0.0, 0.0)
    assert str(s.dL_dw) == "0.0"  # not -0.0


def test_neuron_state_lesson_4_leaky_relu() -> None:
    s = neuron_state(-1.0, 3.0, -1.0, 2.0, negative_slope=0.01)
    assert s.gate == "shut"
    assert s.a == pytest.approx(-0.04, rel=1e-6)
    assert s.loss == pytest.approx(4.1616, rel=1e-6)
    assert s.dL_dw == pytest.approx(0.0408, rel=1e-6)
    assert s.dL_db == pytest.approx(-0.0408, rel=1e-6)
    assert s.da_dh == pytest.approx(0.01, rel=1e-6)


values = st.sampled_from([v / 2 for v in range(-6, 7)])


@settings(max_examples=60, deadline=None)
@given(values, values, values, values, st.sampled_from([0.0, 0.01, 0.1]))
def test_neuron_gradients_follow_the_chain_rule(
    x: float, w: float, b: float, target: float, leak: float
) -> None:
    s = neuron_state(x, w, b, target, leak)
    assert s.h == w * x + b
    assert s.gate == ("open" if s.h > 0 else "shut")
    assert s.dL_da == pytest.approx(2 * (s.a - target), rel=1e-6, abs=1e-6)
    assert s.da_dh == pytest.approx(1.0 if s.h > 0 else leak)
    assert s.dL_dh == pytest.approx(s.dL_da * s.da_dh, rel=1e-6, abs=1e-7)
    assert s.dL_dw == pytest.approx(s.dL_dh * x, rel=1e-6, abs=1e-7)
    assert s.dL_db == s.dL_dh
    if s.gate == "shut" and leak == 0.0:
        assert (s.dL_dw, s.dL_db) == (0.0, 0.0)


# --- §5.2 gradients accumulate ---------------------------------------------------------


def test_accumulation_without_zeroing() -> None:
    demo = AccumulationDemo(x=3.0)
    assert [demo.backward_again() for _ in range(3)] == [6.0, 12.0, 18.0]
    assert demo.history == [6.0, 12.0, 18.0]
    assert demo.x.grad is not None and demo.x.grad.item() == 18.0


def test_accumulation_with_zeroing() -> None:
    demo = AccumulationDemo(x=3.0, zero_grad=True)
    assert [demo.backward_again() for _ in range(3)] == [6.0, 6.0, 6.0]


def test_accumulation_reset_and_switching_mid_run() -> None:
    demo = AccumulationDemo()
    demo.backward_again()
    demo.backward_again()
    demo.zero_grad = True
    assert demo.backward_again() == 6.0
    demo.reset()
    assert demo.history == [] and demo.x.grad is None
    assert demo.backward_again() == 6.0


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=8), st.sampled_from([-2.0, 0.5, 3.0]))
def test_n_backward_passes_add_up_to_n_gradients(n: int, x: float) -> None:
    demo = AccumulationDemo(x=x)
    assert demo.history == []
    for _ in range(n):
        demo.backward_again()
    assert demo.history == [2 * x * k for k in range(1, n + 1)]


# --- the widgets -----------------------------------------------------------------------


def png_of(output: ipywidgets.Output) -> bytes:
    (shown,) = output.outputs
    assert shown["output_type"] == "display_data"
    page = shown["data"]["text/html"]
    match = re.fullmatch(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="[^"]+">', page)
    assert match, page[:120]
    assert shown["data"]["text/plain"]  # the text alternative, also the img's alt
    data = base64.b64decode(match[1])
    assert data.startswith(b"\x89PNG")
    return data


def size_of(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


def test_tangent_explorer_updates_when_the_slider_moves() -> None:
    explorer = TangentExplorer(3.0)
    slider = explorer.slider
    assert (slider.min, slider.max, slider.step, slider.value) == (-4.0, 4.0, 0.5, 3.0)
    first_html, first_png = explorer.readout.value, png_of(explorer.plot)
    assert "x = 3.0 | y = 9.0 | slope = 6.0 | step left" in strip_tags(first_html)
    slider.value = -2.0
    assert strip_tags(explorer.readout.value) == "x = -2.0 | y = 4.0 | slope = -4.0 | step right"
    assert explorer.state.slope == -4.0
    assert png_of(explorer.plot) != first_png
    assert size_of(png_of(explorer.plot)) == size_of(first_png)  # nothing jumps
    slider.value = 0.0
    assert "at the minimum" in explorer.readout.value
    assert not explorer.picture.arrow.get_visible()


def test_tangent_explorer_function_returns_a_wired_widget() -> None:
    widget = tangent_explorer(x=1.0)
    assert isinstance(widget, ipywidgets.VBox)
    slider, readout, plot = widget.children
    assert isinstance(slider, ipywidgets.FloatSlider) and isinstance(plot, ipywidgets.Output)
    assert "slope = 2.0" in readout.value
    slider.value = 2.5
    assert "slope = 5.0" in readout.value
    assert "tangent-explorer" in widget._dom_classes


def strip_tags(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def cell_texts(html: str) -> list[str]:
    return re.findall(r'<td class="neuron-[^"]*"[^>]*>([^<]*)</td>', html)


def test_neuron_explorer_shows_lesson_3() -> None:
    explorer = NeuronExplorer()
    texts = cell_texts(explorer.readout.value)
    firsts = [
        t for t in texts if "=" in t and not t.startswith(("w·x", "2(", "dL/da ×", "dL/dh ×"))
    ]
    assert "gate: open" in texts
    for expected in ["h = 5.0", "a = 5.0", "L = 9.0", "dL/da = 6.0", "da/dh = 1.0"]:
        assert expected in firsts
    for expected in ["dL/dh = 6.0", "dL/dw = 12.0", "dL/db = 6.0"]:
        assert expected in firsts
    assert 'class="neuron-gate gate gate-open"' in explorer.readout.value


def test_neuron_explorer_dead_case_is_one_slider_move_away() -> None:
    explorer = NeuronExplorer()
    slider = explorer.x_slider
    assert slider.min <= -1.0 <= slider.max and (-1.0 - slider.min) % slider.step == 0
    first_png = png_of(explorer.plot)
    slider.value = -1.0
    html = explorer.readout.value
    texts = cell_texts(html)
    assert {"gate: shut", "h = -4.0", "a = 0.0", "L = 4.0", "dL/dw = 0.0", "dL/db = 0.0"} <= set(
        texts
    )
    assert 'class="neuron-gate gate gate-shut"' in html and "#c62828" in html
    assert png_of(explorer.plot) != first_png
    assert size_of(png_of(explorer.plot)) == size_of(first_png)

    explorer.leaky.value = True
    texts = cell_texts(explorer.readout.value)
    assert {"a = -0.04", "L = 4.1616", "dL/dw = 0.0408", "dL/db = -0.0408"} <= set(texts)
    assert explorer.state.negative_slope == 0.01


def test_neuron_explorer_function_and_all_sliders() -> None:
    widget = neuron_explorer(x=2.0, w=3.0, b=-1.0, target=2.0)
    assert isinstance(widget, ipywidgets.VBox) and "neuron-explorer" in widget._dom_classes
    explorer = NeuronExplorer()
    explorer.w_slider.value = 1.0  # h = 1, a = 1, L = 1, dL/da = -2
    explorer.b_slider.value = 0.0  # h = 2 = target: nothing to learn
    assert {"h = 2.0", "L = 0.0", "dL/dw = 0.0"} <= set(cell_texts(explorer.readout.value))
    assert explorer.state.gate == "open"


def test_neuron_explorer_lets_w_grow_past_its_start() -> None:
    """Lesson 3 says "make w bigger and watch dL/dw grow": the w slider has room above 3."""
    explorer = NeuronExplorer()
    w, b, x = explorer.w_slider, explorer.b_slider, explorer.x_slider
    assert (w.min, w.max, w.step, w.value) == (-4.0, 6.0, 0.5, 3.0)
    assert (b.min, b.max, b.step, b.value) == (-4.0, 4.0, 0.5, -1.0)
    assert (x.min, x.max, x.step) == (-3.0, 3.0, 0.5)
    first_png = png_of(explorer.plot)
    grads = []
    for value in (3.0, 4.0, 5.0, 6.0):
        w.value = value
        grads.append(explorer.state.dL_dw)
    assert grads == [12.0, 20.0, 28.0, 36.0]
    assert "dL/dw = 36.0" in cell_texts(explorer.readout.value)
    # the corners of the ranges: h = ±22 stays on the picture, which never changes size
    x.value, b.value = 3.0, 4.0
    assert explorer.state.h == 22.0
    assert explorer.picture.h_limits[1] > 22.0
    assert explorer.state.dL_dw == 120.0  # beyond the bar axis: clipped, value still written
    assert explorer.picture.bar_texts[2].get_text() == "120.0"
    assert size_of(png_of(explorer.plot)) == size_of(first_png)


@pytest.mark.parametrize(
    ("x", "w", "b", "h_how", "dw_how"),
    [
        (2.0, 3.0, -1.0, "w·x + b = 3.0·2.0 + (-1.0)", "dL/dh × x = 6.0 × 2.0"),
        (-1.0, 3.0, -1.0, "w·x + b = 3.0·(-1.0) + (-1.0)", "dL/dh × x = 0.0 × (-1.0)"),
        (1.0, -2.0, 1.0, "w·x + b = (-2.0)·1.0 + 1.0", "dL/dh × x = 0.0 × 1.0"),
        (-2.0, -2.0, 0.5, "w·x + b = (-2.0)·(-2.0) + 0.5", "dL/dh × x = 5.0 × (-2.0)"),
        (1.0, 1.0, -0.5, "w·x + b = 1.0·1.0 + (-0.5)", "dL/dh × x = (-3.0) × 1.0"),
    ],
)
def test_neuron_readout_brackets_every_negative_factor(
    x: float, w: float, b: float, h_how: str, dw_how: str
) -> None:
    html = neuron_html(neuron_state(x, w, b, 2.0))
    texts = cell_texts(html)
    assert h_how in texts and dw_how in texts


def test_neuron_readout_columns_have_fixed_widths() -> None:
    """The columns never move as numbers change: fixed layout, fixed widths, tabular digits."""
    tables = {
        neuron_html(neuron_state(x, w, b, 2.0, leak)).split("<tr>")[0]
        for x, w, b, leak in [(2.0, 3.0, -1.0, 0.0), (-2.5, 5.5, -4.0, 0.01), (3.0, 6.0, 4.0, 0.0)]
    }
    (opening,) = tables  # the same table and column definitions whatever the numbers
    for rule in ("table-layout: fixed", "font-variant-numeric: tabular-nums", "nowrap"):
        assert rule in opening
    widths = [float(w) for w in re.findall(r'<col style="width: ([\d.]+)em">', opening)]
    assert len(widths) == 2
    assert f"width: {sum(widths)}em" in opening


def test_accumulation_controls_are_compact() -> None:
    stepper = AccumulationStepper()
    row = stepper.widget.children[0]
    assert [child.layout.width for child in row.children] == ["auto", "auto", "auto"]
    assert row.children[1] is stepper.zero_box and not stepper.zero_box.indent


def test_accumulation_stepper_buttons_and_checkbox() -> None:
    stepper = AccumulationStepper()
    assert "x.grad after each backward: none yet" in strip_tags(stepper.readout.value)
    first_png = png_of(stepper.plot)
    for _ in range(3):
        stepper.step_button.click()
    assert "x.grad after each backward: 6.0, 12.0, 18.0" in strip_tags(stepper.readout.value)
    assert png_of(stepper.plot) != first_png
    stepper.reset_button.click()
    assert stepper.demo.history == [] and stepper.demo.x.grad is None
    stepper.zero_box.value = True
    assert [stepper.step() for _ in range(3)] == [6.0, 6.0, 6.0]
    assert "6.0, 6.0, 6.0" in stepper.readout.value
    assert "zeroed before each backward" in stepper.readout.value
    for _ in range(12):  # more calls than bars: the picture keeps its size
        stepper.step()
    assert size_of(png_of(stepper.plot)) == size_of(first_png)


def test_accumulation_stepper_function() -> None:
    widget = accumulation_stepper()
    assert isinstance(widget, ipywidgets.VBox) and "accumulation-stepper" in widget._dom_classes
    buttons = widget.children[0].children
    assert [b.description for b in buttons] == [
        "backward again",
        "zero .grad before each backward",
        "reset",
    ]
    buttons[0].click()
    buttons[0].click()
    assert "6.0, 12.0" in widget.children[1].value


def test_widgets_leave_no_pyplot_figures_behind() -> None:
    before = plt.get_fignums()
    explorer = NeuronExplorer()
    for value in (-1.0, 0.0, 1.0, 2.0):
        explorer.x_slider.value = value
    TangentExplorer()
    AccumulationStepper()
    assert plt.get_fignums() == before


# --- the setup cell ---------------------------------------------------------------------


def test_setup_notebook_is_silent_seeds_and_returns_the_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with matplotlib.rc_context():
        device = setup_notebook()
        assert matplotlib.rcParams["figure.dpi"] == 100
    assert capsys.readouterr().out == ""
    assert device == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    first = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(first, torch.rand(3))


def test_setup_notebook_warns_about_another_torch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lesson_setup.torch, "__version__", "2.12.1+cpu")
    with matplotlib.rc_context():
        setup_notebook()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "⚠ warning: this course was tested with torch 2.13, you have 2.12.1+cpu: "
        "numbers and widgets may differ slightly"
    ]


# --- the benchmark -----------------------------------------------------------------------


@pytest.mark.processes
def test_the_latency_benchmark_runs() -> None:
    script = ROOT / "benchmarks" / "widget_latency.py"
    done = stall_guard.run(
        [sys.executable, str(script), "--repeats", "3", "--warmup", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "neuron explorer: move x slider" in done.stdout
    assert "median < 100 ms:" in done.stdout
    assert "tangent explorer" in done.stdout


# --- the still picture shown before the kernel runs ----------------------------------------

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize(
    ("make", "first_state"),
    [
        (lambda: tangent_explorer(), "tangent line at x = 3.0 (y = 9.0, slope 6.0)"),
        (lambda: neuron_explorer(x=-1.0), "gate shut"),
        (lambda: accumulation_stepper(), "no backward call yet"),
    ],
)
def test_widget_display_carries_a_still_of_its_first_state(make: Any, first_state: str) -> None:
    """The display data holds the live view and a still with a text alternative."""
    widget = make()
    bundle = widget._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert first_state in bundle["text/plain"]
    alt = re.search(r'<img src="data:image/png;base64,[^"]+" alt="([^"]+)">', bundle["text/html"])
    assert alt and first_state in alt[1]
    assert "Run All Cells" in bundle["text/html"]
    for child in widget.children:  # the still stays the first state whatever happens next
        if isinstance(child, ipywidgets.FloatSlider):
            child.value = child.max
    assert widget._repr_mimebundle_()["text/plain"] == bundle["text/plain"]


def test_cleaning_drops_widget_views_that_have_a_still_and_keeps_the_rest() -> None:
    from autograder.authoring.hygiene import clean

    nb = nbformat.v4.new_notebook()
    live = nbformat.v4.new_code_cell("tangent_explorer()", execution_count=1)
    bundle = tangent_explorer()._repr_mimebundle_()
    live.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    bare = nbformat.v4.new_code_cell("ipywidgets.IntSlider()", execution_count=2)
    bare_data = {WIDGET_VIEW: {"model_id": "0" * 32}, "text/plain": "IntSlider(value=0)"}
    bare.outputs = [nbformat.v4.new_output("display_data", data=bare_data)]
    nb.cells = [live, bare]
    cleaned = clean(nb)
    assert set(cleaned.cells[0].outputs[0].data) == {"text/html", "image/png", "text/plain"}
    assert WIDGET_VIEW in cleaned.cells[1].outputs[0].data  # no still: left for the author
    assert WIDGET_VIEW in nb.cells[0].outputs[0].data  # the input is not changed
