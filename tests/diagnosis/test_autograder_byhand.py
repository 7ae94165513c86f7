"""byhand reads hand answers statically: arithmetic counts, autograd and anything else do not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reading_work import budget, work

from autograder.diagnosis import byhand
from autograder.diagnosis.byhand import HandAnswer, read_hand_answers


def read(*cells: str) -> dict[str, HandAnswer]:
    return read_hand_answers(list(cells))


def answer(name: str, *cells: str) -> HandAnswer:
    return read(*cells)[name]


# --- plain arithmetic is read -------------------------------------------------------------


def test_chain_rule_arithmetic_is_a_number() -> None:
    """dL_dw = 2 * (5 - 2) * 2 is the hand answer 12."""
    got = answer("dL_dw", "dL_dw = 2 * (5 - 2) * 2")
    assert got == HandAnswer("dL_dw", 12.0, "number", "2 * (5 - 2) * 2")


def test_names_assigned_by_arithmetic_in_earlier_cells_are_usable() -> None:
    """A neuron worked through over several cells, with tuple assignment and max for ReLU."""
    answers = read(
        "x, w, b = 2.0, 3.0, -1.0\ny = 2.0",
        "h = w * x + b\na = max(0, h)",
        "L = (a - y) ** 2\ndL_da = 2 * (a - y)",
        "dL_dw = dL_da * 1 * x",
    )
    assert {n: answers[n].value for n in ("h", "a", "L", "dL_da", "dL_dw")} == {
        "h": 5.0,
        "a": 5.0,
        "L": 9.0,
        "dL_da": 6.0,
        "dL_dw": 12.0,
    }
    assert all(a.status == "number" for a in answers.values())


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("v = 7 // 2", 3.0),
        ("v = 7 % 4", 3.0),
        ("v = 2 ** -1", 0.5),
        ("v = -(+3)", -3.0),
        ("v = abs(-4.5)", 4.5),
        ("v = round(4.16159, 4)", 4.1616),
        ("v = round(2.6)", 3.0),
        ("v = int(2.9)", 2.0),
        ("v = float(3)", 3.0),
        ("v = min(1, 2, -3)", -3.0),
        ("v = 0.01 * (-4)", -0.04),
        ("v = 3 if 5 > 0 else 0", 3.0),
        ("v = True + True", 2.0),
        ("v: float = 2.5", 2.5),
    ],
)
def test_arithmetic_forms(source: str, value: float) -> None:
    got = answer("v", source)
    assert got.status == "number"
    assert got.value == pytest.approx(value)
    assert type(got.value) is float


@pytest.mark.parametrize(
    ("source", "value"),
    [("v = False", False), ("v = 2 > 1", True), ("v = not 3 > 2", False), ("v = 1 < 2 < 0", False)],
)
def test_bools_stay_bools(source: str, value: bool) -> None:
    got = answer("v", source)
    assert (got.status, got.value) == ("number", value)
    assert type(got.value) is bool


def test_tuple_assignment_computes_every_value_before_binding() -> None:
    answers = read("a, b = 1, 2\na, b = b, a\n(c, d), e = (3, 4), w.grad\nf = g = 7")
    assert [answers[n].value for n in "abcdfg"] == [2.0, 1.0, 3.0, 4.0, 7.0, 7.0]
    assert answers["e"].status == "autograd"


def test_later_assignments_overwrite_earlier_ones() -> None:
    answers = read("g = 1\ng = 2", "g = 3", "g += 1\nk = 5\nk = w.grad")
    assert answers["g"].value == 4.0
    assert answers["k"].status == "autograd"


def test_value_is_taken_when_assigned() -> None:
    """Renaming a variable to a tensor later does not change an answer already made."""
    answers = read("x = 2.0\ndL_dw = 6 * x", "import torch\nx = torch.tensor(2.0)")
    assert (answers["dL_dw"].status, answers["dL_dw"].value) == ("number", 12.0)
    assert answers["x"].status == "not_arithmetic"


# --- the by-hand rule ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "dL_dw = w.grad.item()",
        "dL_dw = float(w.grad)",
        "dL_dw = torch.autograd.grad(L, w)[0].item()",
        "dL_dw = autograd.grad(L, w)",
        "dL_dw = torch.autograd.functional.jvp(f, x)",
        "dL_dw = torch.func.grad(f)(x)",
        "dL_dw = L.backward()",
        "dL_dw = y.retain_grad()",
        "dL_dw = getattr(w, 'grad')",
        "g = w.grad.item()\ndL_dw = g * 1",
        "g = w.grad\nh = g\ndL_dw = h + 0",
        "from torch.autograd import grad\ndL_dw = grad(L, w)",
        "from torch import autograd as ag\ndL_dw = ag.grad(L, w)",
        "import torch.autograd as ag\ndL_dw = ag",
        "dL_dw = 12\nfor _ in range(1):\n    dL_dw = w.grad.item()",
    ],
)
def test_autograd_is_not_by_hand(source: str) -> None:
    assert answer("dL_dw", source).status == "autograd"


@pytest.mark.parametrize(
    ("source", "detail"),
    [
        ("dL_dw = torch.tensor(12.0)", "calls `torch.tensor`"),
        ("t = 12.0\ndL_dw = t.real", "reads `t.real`"),
        ("dL_dw = x.item()", "calls `x.item`"),
        ("import torch\nx = torch.tensor(2.0)\ndL_dw = 6 * x", "uses `x`"),
        ("dL_dw = undefined_name * 2", "uses `undefined_name`"),
        ("dL_dw = '12'", "str"),
        ("dL_dw = [12][0]", "indexing"),
        ("dL_dw = (12, 0)", "a tuple"),
        ("dL_dw = 1j", "complex"),
        ("dL_dw = sum([6, 6])", "calls `sum`"),
        ("dL_dw = math.sqrt(144)", "calls `math.sqrt`"),
        ("dL_dw = max(*[1, 12])", "* arguments"),
        ("dL_dw = round(12.0, ndigits=1)", "keyword"),
        ("def max(*a):\n    return 12\ndL_dw = max(1, 2)", "redefines"),
        ("dL_dw = 3 << 2", "operator"),
        ("dL_dw = 1 if 2 is 2 else 0", "comparison"),
        ("x, dL_dw = divmod(25, 13)", "unpacked"),
        ("with open('f') as dL_dw:\n    pass", "`with`"),
        ("(dL_dw := 12)", ":="),
    ],
)
def test_anything_else_is_not_arithmetic(source: str, detail: str) -> None:
    got = answer("dL_dw", source)
    assert got.status == "not_arithmetic"
    assert got.value is None
    assert detail in got.detail


@pytest.mark.parametrize(
    "source",
    [
        "dL_dw = ...",
        "dL_dw = None",
        "dL_dw = 12\n# YOUR CODE HERE\nraise NotImplementedError()",
        "# YOUR CODE HERE\nraise NotImplementedError\ndL_dw = 12",
        "dL_dw = 12\ndel dL_dw",
    ],
)
def test_unanswered(source: str) -> None:
    got = answer("dL_dw", source)
    assert got.status == "unanswered"
    assert got.value is None


def test_using_an_unanswered_name_is_unanswered() -> None:
    assert answer("dL_dw", "dL_dh = ...\ndL_dw = dL_dh * 2").status == "unanswered"


def test_top_level_raise_stops_the_cell() -> None:
    answers = read("a = 1\nraise ValueError('stop')\nb = 2")
    assert "a" in answers
    assert "b" not in answers


def test_locals_of_functions_are_not_answers() -> None:
    """A helper with a local `loss` leaves the hand answer `loss` alone."""
    source = "loss = (7 - 5) ** 2\ndef f(t):\n    loss = t.sum()\n    return [y for y in t]"
    answers = read(source)
    assert (answers["loss"].status, answers["loss"].value) == ("number", 4.0)
    assert "y" not in answers
    assert answers["f"].status == "not_arithmetic"


def test_globals_assigned_in_functions_and_loops_do_not_count() -> None:
    source = "a = 1\nb = 2\ndef f():\n    global a\n    a = 5\nfor i in range(2):\n    b = i"
    answers = read(source)
    assert answers["a"].status == answers["b"].status == "not_arithmetic"
    assert "`def`" in answers["a"].detail and "`for`" in answers["b"].detail


# --- cells that do not parse --------------------------------------------------------------


def test_magics_are_skipped() -> None:
    answers = read(
        "%matplotlib inline\n!ls -la\nx = 2.0", "%%time\ny = 3.0", "%%bash\nz = 4", "files = !ls"
    )
    assert answers["x"].value == 2.0
    assert answers["y"].value == 3.0
    assert "z" not in answers
    assert answers["files"].status == "not_arithmetic"


def test_ipython_transformed_magics_are_harmless() -> None:
    """In IPython's In list, magics arrive as get_ipython() calls."""
    answers = read("get_ipython().run_line_magic('matplotlib', 'inline')\nx = 2.0")
    assert answers["x"].value == 2.0


def test_a_syntax_error_only_costs_the_names_it_touches() -> None:
    cell = "a = 1.0\nb = (2 +\nc = 3.0\nif a:\n    d = 1\nelse:\n    d = 2\ne = a +* 2\nf = 6"
    answers = read(cell)
    assert answers["a"].value == 1.0
    assert answers["f"].value == 6.0
    assert answers["b"].status == "error"
    assert "syntax error" in answers["b"].detail
    assert answers["e"].status == "error"
    assert answers["d"].status == "not_arithmetic"


def test_null_bytes_and_garbage_do_not_abort() -> None:
    answers = read("x = 1\x00", "\udcff = 2", "y = 2.0")
    assert answers["y"].value == 2.0
    assert answers["x"].status == "error"


# --- hostile input: refused fast, never executed ------------------------------------------

HOSTILE = [
    "x = 10**10**10",
    "x = 9**9**9**9",
    "x = 2**1000",
    "x = (10**70) * (10**70) * (10**70) * (10**70)",
    "x = int(1e308)",
    "x = round(5, -10**9)",
    "x = 10.0 ** 400",
    "x = 1e999",
    "x = 1e308 * 10",
    "x = (-8) ** (1/3)",
    "x = 1 / 0",
    "x = 1 // 0",
    "x = 1 % 0.0",
    "x = 0 ** -1",
    "x = " + "-" * 200 + "1",
    "x = " + "(" * 250 + "1" + ")" * 250,
    "x = " + "-(" * 150 + "1" + ")" * 150,
    "x = 1" + " + 1" * 1000,
    "x = 1" + "+1" * 60_000,
    "x = 1" + "+1" * 200_000,
    "x = " + "-" * 100_000 + "1",
    "x = " + "(" * 100_000,
    "x = 0x" + "f" * 50_000,
    "x = " + "9" * 5000,
]


@pytest.mark.parametrize("source", HOSTILE, ids=lambda s: s[:30])
def test_hostile_arithmetic_is_refused_within_the_work_budget(source: str) -> None:
    spent, answers = work([source])
    assert spent <= budget([source])
    got = answers["x"]
    assert got.status == "error"
    assert got.value is None


def test_deep_nesting_of_names_is_refused() -> None:
    got = answer("x", "a = 1\nx = " + "abs(" * 60 + "a" + ")" * 60)
    assert got.status == "error"


@pytest.mark.parametrize(
    "source",
    [
        "x = __import__('os').system('touch {marker}')",
        "x = (lambda: __import__('os').system('touch {marker}'))()",
        "x = open('{marker}', 'w').write('1')",
        "x = [c for c in ().__class__.__base__.__subclasses__()]",
        "x = a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p",
        "x = eval('1 + 1')",
        "x = exec('import os')",
        "x = breakpoint()",
        'x = f\'{{__import__("os").system("touch {marker}")}}\'',
    ],
)
def test_code_is_never_run(source: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cell = source.format(marker=marker)
    spent, answers = work([cell])
    assert spent <= budget([cell])
    got = answers["x"]
    assert got.status == "not_arithmetic"
    assert not marker.exists()


def test_a_huge_history_is_read_within_the_work_budget() -> None:
    cells = [f"v{i} = {i} * 2 + 1\nw{i} = v{i} ** 2" for i in range(2000)]
    spent, answers = work(cells)
    assert spent <= budget(cells)
    assert answers["w1999"].value == float((1999 * 2 + 1) ** 2)


def test_salvaging_a_broken_cell_is_bounded() -> None:
    cell = "\n".join(f"x{i} = (" for i in range(400))
    spent, answers = work([cell])
    assert spent <= budget([cell])
    assert answers["x0"].status == "error"


def test_byhand_never_calls_eval_exec_or_compile() -> None:
    """The module that reads untrusted source has no way to run it."""
    tree = ast.parse(
        "\n".join(p.read_text() for p in Path(byhand.__file__).parent.glob("byhand*.py"))
    )
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"eval", "exec", "compile", "__import__", "getattr", "open"}


# --- law: byhand's arithmetic is Python's arithmetic --------------------------------------

leaves = st.one_of(
    st.integers(-30, 30).map(str),
    st.floats(-100, 100, allow_nan=False).map(repr),
    st.sampled_from(["True", "False"]),
)


def combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%"]), children)
    return st.one_of(
        binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, st.integers(0, 3)).map(lambda t: f"({t[0]}) ** {t[1]}"),
        children.map(lambda c: f"-({c})"),
        st.tuples(children, children).map(lambda t: f"max({t[0]}, {t[1]})"),
        st.tuples(children, children).map(lambda t: f"({t[0]} < {t[1]})"),
        children.map(lambda c: f"abs({c})"),
    )


expressions = st.recursive(leaves, combine, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_arithmetic_agrees_with_python(expression: str) -> None:
    got = answer("v", f"v = {expression}")
    try:
        expected = eval(expression, {"__builtins__": {"max": max, "abs": abs}})  # test oracle
    except (ZeroDivisionError, OverflowError):
        assert got.status == "error"
        return
    if isinstance(expected, complex) or expected != expected or abs(expected) == float("inf"):
        assert got.status == "error"
        return
    assert got.status == "number", got.detail
    assert got.value == expected
    assert type(got.value) is (bool if type(expected) is bool else float)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=5))
def test_chains_of_names_agree_with_python(values: list[float]) -> None:
    cells = [f"n0 = {values[0]!r}"] + [
        f"n{i} = n{i - 1} * 2 - {v!r}" for i, v in enumerate(values[1:], start=1)
    ]
    expected = values[0]
    for v in values[1:]:
        expected = expected * 2 - v
    assert answer(f"n{len(values) - 1}", *cells).value == expected


def test_the_given_cell_binds_the_learners_numbers() -> None:
    """The numbers come from the grader, never from the notebook."""
    cells = ['x, w = exercise.given("x", "w")', "h = w * x", 'b = exercise.given("b")']
    answers = read_hand_answers(cells, {"x": 3.0, "w": -2.0, "b": 4.0})
    assert answers["h"].value == -6.0
    assert answers["b"].value == 4.0
    unknown = read_hand_answers(['x = exercise.given("secret")'], {"x": 3.0})["x"]
    assert unknown.status == "not_arithmetic"
    without = read_hand_answers(cells)["h"]
    assert without.status == "not_arithmetic"


def test_evaluate_expression() -> None:
    assert byhand.evaluate_expression("2 * (a - y)", {"a": 5.0, "y": 2.0}) == 6.0
    with pytest.raises(ValueError, match="cannot evaluate"):
        byhand.evaluate_expression("w.grad", {"w": 1.0})


# --- a kernel's growing history: each cell read once ------------------------------------

HISTORY_CELLS = [
    'x, w = exercise.given("x", "w")',
    "h = w * x\ndL_dh = 2 * h",
    "dL_dw = dL_dh * x",
    "dL_dw = w.grad",
    "dL_dw = 2 * (",
    "raise NotImplementedError()\ndL_dh = 1",
    "dL_dh = 3 * x",
    "",
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(HISTORY_CELLS), st.booleans()), max_size=30))
def test_a_growing_history_reads_as_if_read_from_its_start(steps: list[tuple[str, bool]]) -> None:
    """Cells run one after another, a check after some: the incremental reading gives
    exactly what reading the whole history gives."""
    givens = {"x": 3.0, "w": -2.0}
    reader = byhand.HistoryReader()
    history: list[str] = []
    for cell, check in steps:
        history.append(cell)
        if check:
            assert reader.answers(list(history), givens) == read_hand_answers(history, givens)


def test_a_history_that_is_not_the_one_read_extended_is_read_again() -> None:
    reader = byhand.HistoryReader()
    assert reader.answers(["a = 1", "b = a * 2"])["b"].value == 2
    assert reader.answers(["a = 5", "b = a * 2", "c = b"])["c"].value == 10  # other cells
    assert reader.answers(["b = 7"])["b"].value == 7  # shorter: a reset history
    cells = ['x = exercise.given("x")', "y = 2 * x"]
    assert reader.answers(cells, {"x": 1.0})["y"].value == 2
    assert reader.answers(cells, {"x": 4.0})["y"].value == 8  # other numbers (practice)


def test_checks_over_a_long_session_read_each_cell_once() -> None:
    """400 cells with a check after each cost what one reading of the 400 does; reading
    the whole history at every check (the control) costs about 200 times that."""
    cells = [f"step_{i} = {i} * 2 + 1" for i in range(400)]
    once, incremental, every_time = byhand.ReadingCost(), byhand.ReadingCost(), byhand.ReadingCost()
    read_hand_answers(cells, None, once)
    reader = byhand.HistoryReader(incremental)
    for run in range(1, len(cells) + 1):
        reader.answers(cells[:run])
        read_hand_answers(cells[:run], None, every_time)
    assert incremental == once
    assert every_time.parsed_chars > 100 * once.parsed_chars
