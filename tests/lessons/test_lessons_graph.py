"""autograd_lessons.graph: the real backward graph, its values and gradients, and its drawing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import base64  # noqa: E402
import html  # noqa: E402
import io  # noqa: E402
import re  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from autograd_lessons import (  # noqa: E402
    GraphDrawing,
    GraphFreedError,
    GraphNode,
    Tape,
    draw_graph,
    walk_graph,
)
from autograd_lessons._layout import layout  # noqa: E402
from autograd_lessons.drawing import BOX_FONTSIZE, DEAD  # noqa: E402
from autograd_lessons.expressions import operation_text  # noqa: E402


def summary(nodes: list[GraphNode]) -> list[tuple[str, str | None, float | None, float | None]]:
    return [(n.op, n.name, n.value, n.grad) for n in nodes]


# --- lesson 2: z = 2x² + 1 at x = 3 -------------------------------------------------


def test_the_lesson_2_graph_with_a_tape() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        y = x**2
        z = 2 * y + 1
    nodes = walk_graph(z, tape)
    assert summary(nodes) == [
        ("AddBackward0", "z", 19.0, 1.0),
        ("MulBackward0", None, 18.0, 1.0),
        ("PowBackward0", "y", 9.0, 2.0),
        ("leaf", "x", 3.0, 12.0),
    ]
    assert [n.id for n in nodes] == [0, 1, 2, 3]
    assert [n.inputs for n in nodes] == [(1,), (2,), (3,), ()]
    assert str(nodes[2]) == "PowBackward0 (y): value = 9.0, grad = 2.0"
    assert str(nodes[3]) == "leaf x: value = 3.0, grad = 12.0"


def test_without_a_tape_unnamed_values_are_unknown() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    y = x**2
    z = 2 * y + 1
    assert summary(walk_graph(z)) == [
        ("AddBackward0", "z", 19.0, 1.0),  # the root's own value
        ("MulBackward0", None, None, 1.0),  # 2 * y has no name
        ("PowBackward0", "y", 9.0, 2.0),  # the variable y is this node's output
        ("leaf", "x", 3.0, 12.0),
    ]


def test_the_tape_records_values_by_backward_node() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        y = x**2
        z = 2 * y + 1
        with torch.no_grad():
            _ = x * 10  # no graph: not recorded
    assert len(tape) == 3
    value = tape.value_of(y.grad_fn)
    assert value is not None and value.item() == 9.0 and not value.requires_grad
    assert z.grad_fn in tape
    assert tape.value_of(None) is None
    assert {t.item() for t in tape.live_outputs()} >= {9.0, 19.0}  # 2 * y is gone


def test_walking_changes_no_grad() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    y = x**2
    y.retain_grad()
    z = 2 * y + 1
    walk_graph(z)
    assert x.grad is None and y.grad is None
    z.backward(retain_graph=True)
    walk_graph(z)
    assert x.grad is not None and x.grad.item() == 12.0
    assert y.grad is not None and y.grad.item() == 2.0


def test_names_can_be_given() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    nodes = walk_graph(x**2 + 1, names={"input": x})
    assert [n.name for n in nodes] == [None, None, "input"]


def test_names_come_from_the_callers_locals() -> None:
    def build() -> list[GraphNode]:
        a = torch.tensor(2.0, requires_grad=True)
        b = a * a
        return walk_graph(b)

    assert summary(build()) == [("MulBackward0", "b", 4.0, 1.0), ("leaf", "a", 2.0, 4.0)]


def test_a_leaf_root_is_one_node() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    assert walk_graph(x) == [GraphNode(0, "leaf", "x", 3.0, 1.0, ())]


# --- lesson 3: the ReLU neuron ------------------------------------------------------


def neuron(x: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Tape]:
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    with Tape() as tape:
        loss = (torch.relu(w * x + b) - torch.tensor(2.0)) ** 2
    return loss, w, b, tape


def test_the_relu_network() -> None:
    loss, w, b, tape = neuron(2.0)
    nodes = walk_graph(loss, tape, names={"w": w, "b": b, "loss": loss})
    by_op = {n.op: n for n in nodes if not n.is_leaf}
    leaves = {n.name: n for n in nodes if n.is_leaf}
    assert nodes[0].op == "PowBackward0" and (nodes[0].value, nodes[0].grad) == (9.0, 1.0)
    assert (by_op["SubBackward0"].value, by_op["SubBackward0"].grad) == (3.0, 6.0)
    assert (by_op["ReluBackward0"].value, by_op["ReluBackward0"].grad) == (5.0, 6.0)
    assert (by_op["AddBackward0"].value, by_op["AddBackward0"].grad) == (5.0, 6.0)
    assert (by_op["MulBackward0"].value, by_op["MulBackward0"].grad) == (6.0, 6.0)
    assert (leaves["w"].value, leaves["w"].grad) == (3.0, 12.0)
    assert (leaves["b"].value, leaves["b"].grad) == (-1.0, 6.0)
    assert len(nodes) == 8  # and the target, a data node
    assert [n.name for n in nodes if n.is_data] == [None]  # not named in `names`
    assert w.grad is None and b.grad is None
    loss.backward()
    assert w.grad == 12.0 and b.grad == 6.0  # walking first changed nothing


def test_the_dead_relu_sends_nothing_back() -> None:
    loss, w, b, tape = neuron(-1.0)
    nodes = walk_graph(loss, tape, names={"w": w, "b": b})
    grads = {n.op if not n.is_leaf else n.name: n.grad for n in nodes}
    assert nodes[0].value == 4.0
    assert grads["ReluBackward0"] == -4.0  # the gradient reaches the ReLU ...
    assert grads["AddBackward0"] == 0.0  # ... and stops there
    assert (grads["w"], grads["b"]) == (0.0, 0.0)


# --- shared inputs, models, errors -------------------------------------------------


def test_a_shared_input_adds_up_both_paths() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        z = x * x + 3 * x
    nodes = walk_graph(z, tape)
    leaves = [n for n in nodes if n.is_leaf]
    assert len(leaves) == 1  # reached by three edges, listed once
    assert (leaves[0].name, leaves[0].grad) == ("x", 2 * 3.0 + 3)
    square = nodes[nodes[0].inputs[0]]
    assert square.inputs == (leaves[0].id, leaves[0].id)  # x * x uses x twice
    assert (square.value, nodes[0].value) == (9.0, 18.0)


def test_a_model_names_its_parameters_and_shows_shapes() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    loss = ((model(torch.randn(4, 3)) - 1) ** 2).mean()
    nodes = walk_graph(loss)
    leaves = {n.name: n for n in nodes if n.is_leaf}
    assert set(leaves) == {"model.weight", "model.bias"}
    assert leaves["model.weight"].shape == (1, 3) and leaves["model.weight"].grad is None
    assert leaves["model.bias"].grad == pytest.approx(
        torch.autograd.grad(loss, model.bias, retain_graph=True)[0].item()
    )
    assert str(nodes[1]) == "PowBackward0: value = 4×1 tensor, grad = 4×1 tensor"


def test_a_non_scalar_root_is_refused() -> None:
    with pytest.raises(ValueError, match=r"scalar.*shape \(3,\).*\.sum\(\)"):
        walk_graph(torch.ones(3, requires_grad=True) * 2)


def test_a_tensor_without_graph_is_refused() -> None:
    with pytest.raises(ValueError, match="requires_grad=True"):
        walk_graph(torch.tensor(1.0) * 2)


def test_a_freed_graph_says_how_to_fix_it() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    z = 2 * x**2 + 1
    z.backward()
    with pytest.raises(GraphFreedError, match="retain_graph=True") as caught:
        walk_graph(z)
    assert isinstance(caught.value, RuntimeError)
    assert "Rebuild the graph" in str(caught.value)


# --- drawing -----------------------------------------------------------------------


def boxes_of(figure: Figure) -> list[Text]:
    """The node boxes (edge labels have a smaller font)."""
    return [t for t in figure.axes[0].texts if t.get_fontsize() == BOX_FONTSIZE]


def texts_of(figure: Figure) -> list[str]:
    return [t.get_text() for t in boxes_of(figure)]


def edge_texts_of(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.axes[0].texts if t.get_fontsize() != BOX_FONTSIZE]


def lesson_2() -> GraphDrawing:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        y = x**2
        z = 2 * y + 1
    return draw_graph(z, tape, names={"x": x, "y": y, "z": z})


def test_draw_graph_draws_the_backward_pass_with_local_slopes_and_products() -> None:
    drawing = lesson_2()
    figure = drawing.figure
    assert texts_of(figure) == [
        "z = 2·y + 1\nvalue 19.0\ngrad 1.0 (start)",
        "2·y\nvalue 18.0\ngrad 1.0",
        "y = x²\nvalue 9.0\ngrad 2.0",
        "x\nvalue 3.0\ngrad 12.0",
    ]
    assert edge_texts_of(figure) == ["×1\n1×1 = 1", "×2\n1×2 = 2", "×6\n2×6 = 12"]
    arrows = [p for p in figure.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3
    for arrow in arrows:  # backward: from the right (the consumer) to the left
        (x0, _), (x1, _) = arrow._posA_posB  # type: ignore[attr-defined]
        assert x1 < x0
    assert not figure.axes[0].axison
    assert "Computation graph of z" in figure.axes[0].get_title()
    assert "torch.autograd.grad" in figure.axes[0].get_title()
    assert ".backward()" not in figure.axes[0].get_title().replace("as .backward", "")


def test_the_drawing_has_a_text_alternative_and_an_opaque_background() -> None:
    drawing = lesson_2()
    bundle = drawing._repr_mimebundle_()
    assert bundle["text/plain"] == drawing.alt
    assert "x = 3.0; y = x² = 9.0; 2·y = 18.0; z = 2·y + 1 = 19.0" in drawing.alt
    assert "to x: local slope 6.0, 2.0 × 6.0 = 12.0" in drawing.alt
    match = re.fullmatch(
        r'<img src="data:image/png;base64,([^"]+)" alt="([^"]+)">', bundle["text/html"]
    )
    assert match and html.unescape(match[2]) == drawing.alt
    with Image.open(io.BytesIO(base64.b64decode(match[1]))) as image:
        assert image.convert("RGBA").getpixel((1, 1)) == (255, 255, 255, 255)  # dark themes


def test_data_inputs_are_nodes_and_a_shut_gate_is_marked() -> None:
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    x, target = torch.tensor(-1.0), torch.tensor(2.0)
    with Tape() as tape:
        h = w * x + b
        a = torch.relu(h)
        loss = (a - target) ** 2
    drawing = draw_graph(loss, tape)
    texts = texts_of(drawing.figure)
    assert "x (data)\nvalue -1.0\nno gradient" in texts
    assert "target (data)\nvalue 2.0\nno gradient" in texts
    assert "h = w·x + b\nvalue -4.0\ngrad 0.0" in texts
    assert "×0\n(-4)×0 = 0\ngate shut" in edge_texts_of(drawing.figure)
    dead = [t for t in boxes_of(drawing.figure) if t.get_text().endswith("grad 0.0")]
    assert len(dead) == 4 and all(t.get_color() == DEAD for t in dead)
    assert "(gradient stops)" in drawing.alt


def test_paths_add_up_in_the_drawing() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        y = x**2
        f = x * y
    drawing = draw_graph(f, tape)
    assert "x\nvalue 3.0\ngrad 9.0 + 18.0 = 27.0" in texts_of(drawing.figure)
    assert sorted(edge_texts_of(drawing.figure)) == [
        "×3\n1×3 = 3",
        "×6\n3×6 = 18",
        "×9\n1×9 = 9",
    ]
    assert "x gets 9.0 + 18.0 = 27.0" in drawing.alt


def test_draw_graph_goes_left_to_right() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with Tape() as tape:
        z = 2 * x**2 + 1
    xs = [t.get_position()[0] for t in boxes_of(draw_graph(z, tape).figure)]
    assert xs == sorted(xs, reverse=True)  # root first in the list, rightmost on the page


def test_drawing_without_a_tape_says_how_to_get_the_values() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    figure = draw_graph(2 * x**2 + 1).figure
    assert "value ?" in texts_of(figure)[1]
    assert "with Tape() as tape:" in figure.axes[0].get_title()


def test_no_text_is_clipped_and_no_boxes_overlap() -> None:
    x, w, b = (
        torch.tensor(2.0),
        torch.tensor(3.0, requires_grad=True),
        torch.tensor(-1.0, requires_grad=True),
    )
    with Tape() as tape:
        h = w * x + b
        a = torch.relu(h)
        loss = (a - 2.0) ** 2
        shared = loss * loss + 3 * loss
    for root in (loss, shared):
        figure = draw_graph(root, tape).figure
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        page = figure.bbox
        patches = [t.get_bbox_patch() for t in boxes_of(figure)]
        boxes = [p.get_window_extent(renderer) for p in patches if p is not None]
        assert len(boxes) == len(boxes_of(figure))
        labels = [t.get_window_extent(renderer) for t in figure.axes[0].texts]
        title = figure.axes[0].title.get_window_extent(renderer)
        for box in [*boxes, *labels, title]:
            assert (
                page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
            )
        for i, one in enumerate(boxes):
            assert not one.overlaps(title)
            for other in boxes[i + 1 :]:
                assert not one.overlaps(other)


OUTPUT_AREA_PX = 800  # JupyterLab's output area at a 1280 px wide window, where images shrink


def displayed_label_px(figure: Figure) -> float:
    """Height in CSS pixels of a box label's font once the browser fits the picture in."""
    shrink = min(1.0, OUTPUT_AREA_PX / (figure.get_figwidth() * figure.dpi))
    size = boxes_of(figure)[0].get_fontsize()
    return float(size) * figure.dpi / 72 * shrink


def test_wide_graphs_keep_readable_labels() -> None:
    """The neuron's graph (lesson 3: six columns, two data inputs, edge labels) is only as
    wide as its boxes and labels need, so its text is never tiny once JupyterLab fits it in."""
    figure_2 = lesson_2().figure
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    x, target = torch.tensor(2.0), torch.tensor(2.0)
    with Tape() as tape:
        h = w * x + b
        a = torch.relu(h)
        loss = (a - target) ** 2
    figure_3 = draw_graph(loss, tape).figure
    assert figure_3.get_figwidth() > figure_2.get_figwidth()  # more columns, wider
    assert figure_3.get_figwidth() < 10.5
    assert displayed_label_px(figure_2) == pytest.approx(12.5)  # 9 pt at 100 dpi, unscaled
    assert displayed_label_px(figure_3) >= 9.5


def test_drawing_into_given_axes_and_leaving_no_pyplot_figure_open() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    before = plt.get_fignums()
    draw_graph(x * x)
    assert plt.get_fignums() == before
    fig, ax = plt.subplots()
    assert draw_graph(x * x, ax=ax).figure is fig
    assert len(boxes_of(fig)) == 2
    plt.close(fig)


# --- properties ------------------------------------------------------------------

small = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False).map(lambda v: round(v, 3))


@settings(max_examples=40, deadline=None)
@given(small, small, small, small, small)
def test_leaf_grad_is_what_autograd_computes(
    a: float, b: float, c: float, d: float, x0: float
) -> None:
    x = torch.tensor(x0, requires_grad=True)
    p = a * x**3 + b * x**2 + c * x + d
    (expected,) = torch.autograd.grad(p, x, retain_graph=True)
    leaf = [n for n in walk_graph(p, names={"x": x}) if n.is_leaf]
    assert [n.name for n in leaf] == ["x"]
    assert leaf[0].grad == expected.item()


@settings(max_examples=40, deadline=None)
@given(small)
def test_the_chain_rule_one_node_at_a_time(x0: float) -> None:
    x = torch.tensor(x0, requires_grad=True)
    add, mul, power, leaf = walk_graph(2 * x**2 + 1, names={"x": x})
    assert (add.grad, mul.grad, power.grad) == (1.0, 1.0, 2.0)  # local slopes 1, then 2
    assert leaf.grad == pytest.approx(4 * x0, rel=1e-6, abs=1e-6)  # times 2x at the leaf


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=8))
def test_layout_puts_every_node_left_of_what_it_feeds(choices: list[int]) -> None:
    x = torch.tensor(1.5, requires_grad=True)
    values = [x]
    for k, choice in enumerate(choices):  # a random graph reusing earlier values
        a, b = values[choice % len(values)], values[(choice + k) % len(values)]
        values.append(a * b if choice % 2 else a + b)
    nodes = walk_graph(values[-1] * 1.0, names={"x": x})
    where = layout(nodes)
    for node in nodes:
        for source in node.inputs:
            assert where[source][0] < where[node.id][0]
    assert len(set(where.values())) == len(nodes)


# --- operations named as written ---------------------------------------------------


@pytest.mark.parametrize(
    ("func", "operands", "numeric", "written"),
    [
        ("mul", ["y", "2"], [False, True], "2·y"),  # PyTorch records 2 * y as mul(y, 2)
        ("mul", ["w", "x"], [False, False], "w·x"),
        ("add", ["2·y", "1"], [False, True], "2·y + 1"),
        ("sub", ["a", "b + c"], [False, False], "a − (b + c)"),
        ("__rsub__", ["n", "1"], [False, True], "1 − n"),
        ("pow", ["a − target", "2"], [False, True], "(a − target)²"),
        ("pow", ["x", "0.5"], [False, True], "x**0.5"),
        ("relu", ["h"], [False], "ReLU(h)"),
        ("neg", ["x"], [False], "−x"),
        ("unknown_op", ["x"], [False], None),
    ],
)
def test_operations_are_named_as_written(
    func: str, operands: list[str], numeric: list[bool], written: str | None
) -> None:
    assert operation_text(func, operands, numeric) == written


def test_without_a_tape_operations_keep_pytorch_names() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    nodes = walk_graph(2 * x**2 + 1, names={"x": x})
    assert [n.written for n in nodes] == ["Add", "Mul", "Pow", "x"]
    assert all(n.expression is None for n in nodes)
