"""The sample class, stated once: seven students, their slips per assignment, and how each
works. `tools/make_sample_class.py` builds their submissions and expected grades from this
statement and the specs; nothing else states what a sample student got wrong.

Each slip is the line the student wrote (with the given names, so it is wrong for their
own numbers) and what went wrong. This module is long because it is data: one entry per
student and assignment, kept together so a reader sees a student's whole story at once.

The students:
  ada  all correct, by-hand arithmetic throughout
  ben  flipped signs and a dropped factor 2; later answers built on a wrong one are wrong;
       in 08 one backward pass counted, a mean for a sum; in 09 a Value whose - has the
       wrong sign (every later class part whose graphs use - is wrong too)
  cyd  other mistakes: a tensor for a number, the leaf counted as a node, a shut ReLU
       treated as open, an accumulated gradient, a training loop that never zeroes .grad,
       an in-place update on a leaf (08), the ReLU's slope on the wrong side (09)
  dee  blank: submits every release notebook untouched
  eve  used autograd (.backward(), .grad) for hand answers, in 09 her own Value: zero
  fay  mostly right, some answers as plain numbers, two rounded too early; never submitted 06
  gus  copied ada's numbers (not her formulas): right only where the numbers coincide
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.specs import SPECS


@dataclass(frozen=True)
class Slip:
    """A wrong answer: the student's code for the part, and what went wrong."""

    code: str
    mistake: str
    unaffected: tuple[str, ...] = ()
    """Later parts that stay right although they are computed from this one."""


@dataclass(frozen=True)
class Student:
    """One student: their slips per assignment, and how they work."""

    name: str
    profile: str
    slips: dict[str, dict[str, Slip]] = field(default_factory=dict)
    written: dict[str, dict[str, str]] = field(default_factory=dict)
    not_submitted: tuple[str, ...] = ()
    blank: bool = False
    literal: tuple[str, ...] = ()
    """Assignments answered as plain numbers (the student's own, worked out elsewhere)."""
    copied_from: str = ""
    """Whose numbers the student copied as plain numbers, in every assignment."""
    day_offset: int = 0


def _autograd(setup: str, answer: str) -> str:
    return f"import torch\n\n{setup}\n{answer}"


def _neuron_autograd(extra: str = "") -> str:
    return (
        "wt = torch.tensor(w, requires_grad=True)\nbt = torch.tensor(b, requires_grad=True)\n"
        "ht = wt * x + bt\nht.retain_grad()\nat = torch.relu(ht)\nat.retain_grad()\n" + extra
    )


AUTOGRAD = "used autograd for a hand answer"

SUB_SIGN_SLIP = """def _mul(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data * other.data, (self, other))

    def _backward():
        self.grad += other.data * out.grad
        other.grad += self.data * out.grad

    out._backward = _backward
    return out


def _sub(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data - other.data, (self, other))

    def _backward():
        self.grad += out.grad
        other.grad += out.grad

    out._backward = _backward
    return out


Value.__mul__ = Value.__rmul__ = _mul
Value.__sub__ = _sub
Value.__rsub__ = lambda self, other: Value(other) - self"""

RELU_SIDE_SLIP = """def _relu(self):
    out = Value(max(self.data, 0.0), (self,))

    def _backward():
        self.grad += (1.0 if self.data < 0 else 0.0) * out.grad

    out._backward = _backward
    return out


Value.relu = _relu"""

WRITTEN_GOOD: dict[str, dict[str, str]] = {
    "01_what_a_gradient_is": {
        "which_way_to_step": (
            "To the right. At x_other the slope is negative, so y goes down when x goes up; "
            "stepping against the slope subtracts a negative number and increases x."
        )
    },
    "02_the_computation_graph": {
        "what_the_node_remembers": (
            "It keeps x, because its local slope is 2x and it needs x to compute it on the way "
            "back. Those saved inputs stay in memory until backward, which is why training "
            "needs more memory than inference."
        )
    },
    "03_a_neuron_by_hand": {
        "why_dw_and_db_differ": (
            "Only the last factor differs: dh/dw = x but dh/db = 1. Everything before it "
            "(dL/dh) is shared, so dL/dw is x times dL/db."
        )
    },
    "04_the_dead_relu": {
        "why_both_are_zero": (
            "h < 0, so the ReLU is closed: it outputs 0 and its slope is 0. That 0 multiplies "
            "everything on the way back, so w and b get nothing although the loss is not 0. "
            "If h is negative for every example the neuron never learns again."
        )
    },
    "05_three_mechanics": {
        "why_gradients_accumulate": (
            "Gradient accumulation: add up the gradients of several small batches and step "
            "once, when the big batch does not fit in memory. zero_grad() goes at the start "
            "of every iteration, before loss.backward()."
        )
    },
    "06_one_backward_every_parameter": {
        "one_call_at_scale": (
            "One. backward() walks the whole graph once from the loss, and the graph reaches "
            "every parameter, so each .grad is filled in that single walk."
        )
    },
    "07_try_it": {
        "what_w2_changed": (
            "The first factor is now 2(out - target), and the chain gained the ×w2 node, "
            "whose slope w2 multiplies everything behind it."
        )
    },
    "08_when_backward_complains": {
        "why_the_graph_is_freed": (
            "The saved tensors cost memory and one backward needs them once. Keep the graph "
            "only to run a second backward through the same forward pass."
        )
    },
    "09_autograd_by_hand": {
        "what_pytorch_adds": (
            "Tensors instead of single numbers (fast, vectorised, on a GPU), and the local "
            "slopes of hundreds of operations, not just +, *, ** and ReLU."
        )
    },
}

STUDENTS: tuple[Student, ...] = (
    Student("ada", "all correct, by hand", written=WRITTEN_GOOD, day_offset=0),
    Student(
        "ben",
        "flipped signs and a dropped factor 2",
        slips={
            "01_what_a_gradient_is": {
                "x_after_step": Slip(
                    "x_after_step = x + step_size * slope_start", "stepped with the slope"
                )
            },
            "02_the_computation_graph": {"dy_dx": Slip("dy_dx = x", "dropped the 2 of x²")},
            "03_a_neuron_by_hand": {"dL_da": Slip("dL_da = a - y", "dropped the 2 of (a - y)²")},
            "04_the_dead_relu": {
                "dL_da": Slip(
                    "dL_da = 2 * (y - a)",
                    "flipped the sign",
                    unaffected=("dL_dh", "dL_dw", "dL_db"),  # behind the shut ReLU: all 0
                ),
                "leaky_dL_da": Slip("leaky_dL_da = 2 * (y - leaky_a)", "flipped the sign"),
            },
            "05_three_mechanics": {
                "grad_after_three_calls": Slip(
                    "grad_after_three_calls = 3 * x_square", "slope of x² taken as x"
                ),
                "grad_after_zero_and_backward": Slip(
                    "grad_after_zero_and_backward = x_square", "slope of x² taken as x"
                ),
                "grad_of_intermediate": Slip("x.retain_grad()", "retain_grad() on the leaf"),
            },
            "06_one_backward_every_parameter": {
                "dL_dy": Slip("dL_dy = 2 * (target - y_value)", "flipped the sign")
            },
            "08_when_backward_complains": {
                "grad_after_three_passes": Slip(
                    "grad_after_three_passes = 2 * c * x", "counted one backward pass only"
                ),
                "first_grad": Slip("y.mean().backward()", "took the mean, not the sum"),
            },
            "09_autograd_by_hand": {
                "value_mul": Slip(
                    SUB_SIGN_SLIP,
                    "the slope of a - b towards b taken as +1",
                    unaffected=("value_pow",),  # its graphs have no -
                ),
                "dL_db": Slip("dL_db = (a - y) * 1", "dropped the 2 of the square"),
            },
            "07_try_it": {
                "cubic_slope": Slip("cubic_slope = 3 * x_cubic**2 + 2", "slope of -2x as +2"),
                "dL_dout": Slip("dL_dout = out - target", "dropped the 2 of the square"),
            },
        },
        written={
            "01_what_a_gradient_is": {
                "which_way_to_step": "Left, because the slope is negative so we go down."
            },
            "02_the_computation_graph": {"what_the_node_remembers": "It remembers y."},
            "03_a_neuron_by_hand": {"why_dw_and_db_differ": "Because w is bigger than b."},
            "04_the_dead_relu": {"why_both_are_zero": "The loss is too small."},
            "05_three_mechanics": {"why_gradients_accumulate": "It is a bug in PyTorch."},
            "06_one_backward_every_parameter": {"one_call_at_scale": "A million, one each."},
            "07_try_it": {"what_w2_changed": "Everything is smaller."},
        },
        day_offset=1,
    ),
    Student(
        "cyd",
        "a tensor for a number, the leaf as a node, an open ReLU that is shut, accumulation",
        slips={
            "01_what_a_gradient_is": {
                "slope_start": Slip(
                    "import torch\n\nslope_start = torch.tensor(2 * x)", "a tensor, not a number"
                )
            },
            "02_the_computation_graph": {
                "operation_nodes": Slip("operation_nodes = 4", "counted the leaf x as a node")
            },
            "04_the_dead_relu": {"da_dh": Slip("da_dh = 1.0", "treated the shut ReLU as open")},
            "05_three_mechanics": {
                "grad_after_zero_and_backward": Slip(
                    "grad_after_zero_and_backward = 3 * 2 * x_square", "forgot zero_() emptied it"
                ),
                "train": Slip("", "deleted the placeholder and added nothing"),
            },
            "07_try_it": {
                "cubic_slope": Slip(
                    "cubic_slope = 3 * x_cubic**2 - 2 * x_cubic", "slope of -2x as -2x"
                )
            },
            "08_when_backward_complains": {
                "sgd_step": Slip("w -= lr * w.grad", "kept the in-place update on the leaf"),
            },
            "09_autograd_by_hand": {
                "value_relu": Slip(RELU_SIDE_SLIP, "the ReLU's slope on the wrong side"),
            },
        },
        written={
            "01_what_a_gradient_is": {"which_way_to_step": "right"},
            "02_the_computation_graph": {"what_the_node_remembers": "x"},
            "03_a_neuron_by_hand": {"why_dw_and_db_differ": "x"},
            "04_the_dead_relu": {"why_both_are_zero": "relu gives 0"},
            "05_three_mechanics": {"why_gradients_accumulate": "big batches, before backward"},
            "06_one_backward_every_parameter": {"one_call_at_scale": "one"},
            "07_try_it": {"what_w2_changed": "w2"},
        },
        day_offset=2,
    ),
    Student("dee", "blank: submits the release untouched", blank=True, day_offset=3),
    Student(
        "eve",
        "autograd instead of hand arithmetic for the gradients",
        slips={
            "01_what_a_gradient_is": {
                "slope_start": Slip(
                    _autograd(
                        "t = torch.tensor(x, requires_grad=True)\n(t**2).backward()",
                        "slope_start = t.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "slope_other": Slip(
                    _autograd(
                        "t = torch.tensor(x_other, requires_grad=True)\n(t**2).backward()",
                        "slope_other = t.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "slope_at_0": Slip(
                    _autograd(
                        "t = torch.tensor(0.0, requires_grad=True)\n(t**2).backward()",
                        "slope_at_0 = t.grad.item()",
                    ),
                    AUTOGRAD,
                ),
            },
            "02_the_computation_graph": {
                "dy_dx": Slip(
                    _autograd(
                        "xt = torch.tensor(x, requires_grad=True)\n"
                        "(dy_dx_t,) = torch.autograd.grad(xt**2, xt)",
                        "dy_dx = dy_dx_t.item()",
                    ),
                    AUTOGRAD,
                ),
                "dz_dx": Slip(
                    _autograd(
                        "xt = torch.tensor(x, requires_grad=True)\n"
                        "zt = c * xt**2 + d\nzt.backward()",
                        "dz_dx = xt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
            },
            "03_a_neuron_by_hand": {
                "dL_da": Slip(
                    _autograd(
                        _neuron_autograd("((at - y) ** 2).backward()"), "dL_da = at.grad.item()"
                    ),
                    AUTOGRAD,
                ),
                "dL_dh": Slip("dL_dh = ht.grad.item()", AUTOGRAD),
                "dL_dw": Slip("dL_dw = wt.grad.item()", AUTOGRAD),
                "dL_db": Slip("dL_db = bt.grad.item()", AUTOGRAD),
            },
            "04_the_dead_relu": {
                "leaky_dL_dw": Slip(
                    _autograd(
                        "wt = torch.tensor(w, requires_grad=True)\n"
                        "bt = torch.tensor(b, requires_grad=True)\n"
                        "at = torch.nn.functional.leaky_relu(wt * x + bt, leaky_slope)\n"
                        "((at - y) ** 2).backward()",
                        "leaky_dL_dw = wt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "leaky_dL_db": Slip("leaky_dL_db = bt.grad.item()", AUTOGRAD),
            },
            "05_three_mechanics": {
                "x_grad": Slip(
                    "xt = torch.tensor(x_cube, requires_grad=True)\nyt = xt**3\n"
                    "yt.retain_grad()\nzt = yt * k\nzt.backward()\nx_grad = xt.grad.item()",
                    AUTOGRAD,
                ),
                "y_grad": Slip("y_grad = yt.grad.item()", AUTOGRAD),
                "grad_after_three_calls": Slip(
                    "xt = torch.tensor(x_square, requires_grad=True)\n"
                    "for _ in range(3):\n    (xt**2).backward()\n"
                    "grad_after_three_calls = xt.grad.item()",
                    AUTOGRAD,
                ),
            },
            "06_one_backward_every_parameter": {
                "dL_dw": Slip(
                    _autograd(
                        "wt = torch.tensor(w, requires_grad=True)\n"
                        "bt = torch.tensor(b, requires_grad=True)\n"
                        "loss_t = (wt * x + bt - target) ** 2\nloss_t.backward()",
                        "dL_dw = wt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "dL_db": Slip("dL_db = bt.grad.item()", AUTOGRAD),
            },
            "07_try_it": {
                "cubic_slope": Slip(
                    _autograd(
                        "xt = torch.tensor(x_cubic, requires_grad=True)\n"
                        "(xt**3 - 2 * xt).backward()",
                        "cubic_slope = xt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "dL_dout": Slip(
                    _autograd(
                        _neuron_autograd(
                            "w2t = torch.tensor(w2, requires_grad=True)\n"
                            "outt = w2t * at\noutt.retain_grad()\n"
                            "((outt - target) ** 2).backward()"
                        ),
                        "dL_dout = outt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
                "dL_dw2": Slip("dL_dw2 = w2t.grad.item()", AUTOGRAD),
                "dL_da": Slip("dL_da = at.grad.item()", AUTOGRAD),
                "dL_dh": Slip("dL_dh = ht.grad.item()", AUTOGRAD),
                "dL_dw": Slip("dL_dw = wt.grad.item()", AUTOGRAD),
                "dL_db": Slip("dL_db = bt.grad.item()", AUTOGRAD),
            },
            "08_when_backward_complains": {
                "grad_after_three_passes": Slip(
                    _autograd(
                        "xt = torch.tensor(x, requires_grad=True)\nzt = c * xt**2 + 1\n"
                        "for _ in range(3):\n    zt.backward(retain_graph=True)",
                        "grad_after_three_passes = xt.grad.item()",
                    ),
                    AUTOGRAD,
                ),
            },
            "09_autograd_by_hand": {
                "dL_dw": Slip(
                    "wv, bv = Value(w), Value(b)\nlv = ((wv * x + bv).relu() - y) ** 2\n"
                    "lv.backward()\ndL_dw = wv.grad",
                    AUTOGRAD,  # her own Value class: still not by hand
                ),
                "dL_db": Slip("dL_db = bv.grad", AUTOGRAD),
            },
        },
        written={
            name: {gid: "PyTorch computes it for me."}
            for name, gids in ((s.name, [g for g, _ in s.written]) for s in SPECS.values())
            for gid in gids
        },
        day_offset=4,
    ),
    Student(
        "fay",
        "mostly right, 03 in plain numbers, two answers rounded too early; 06 not submitted",
        slips={
            "04_the_dead_relu": {
                "leaky_dL_dw": Slip(
                    "leaky_dL_dw = round(leaky_dL_da * leaky_da_dh * x, 1)", "rounded too early"
                ),
                "leaky_dL_db": Slip(
                    "leaky_dL_db = round(leaky_dL_da * leaky_da_dh, 1)", "rounded too early"
                ),
            },
        },
        literal=("03_a_neuron_by_hand",),
        written=WRITTEN_GOOD,
        not_submitted=("06_one_backward_every_parameter",),
        day_offset=5,
    ),
    Student(
        "gus",
        "copied ada's numbers as plain numbers instead of computing his own",
        copied_from="ada",
        day_offset=6,
    ),
)
