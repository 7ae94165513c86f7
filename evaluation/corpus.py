"""Realistic wrong hand answers, written as a learner writes them, with the diagnosis each
must get: the corpus that measures how well feedback reads formulas.

Each entry is (exercise, part, the learner's line(s), the reason expected). It is judged
on many learners' numbers through the real path (`read_hand_answers`, then `judge`), with
every other part answered right in the cells before it. An outcome is *named* when the
verdict's reason is the one expected, *generic* when it names nothing ("mismatch", or
"ambiguous": two readings offered), *misnamed* otherwise.

    python -m evaluation.mistakes --corpus [--learners 20]

prints the figures per mistake class.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from autograder.core.givens import Site
from autograder.core.spec import CODE_KINDS, ExerciseSpec
from autograder.specs import exercise_spec, learner_givens, learner_problem

GENERIC = frozenset({"mismatch", "ambiguous"})

E1, E2, E3, E4, E5 = (
    "01_what_a_gradient_is",
    "02_the_computation_graph",
    "03_a_neuron_by_hand",
    "04_the_dead_relu",
    "05_three_mechanics",
)
E6, E7, E8, E9 = (
    "06_one_backward_every_parameter",
    "07_try_it",
    "08_when_backward_complains",
    "09_autograd_by_hand",
)

CORPUS: tuple[tuple[str, str, str, str], ...] = (
    # 01: y = x², its slope, one step
    (E1, "y_start", "y_start = 2 * x", "doubled_not_squared"),
    (E1, "y_start", "y_start = x * 2", "doubled_not_squared"),
    (E1, "y_start", "y_start = x", "square_forgotten"),
    (E1, "slope_start", "slope_start = x ** 2", "forward_value"),
    (E1, "slope_start", "slope_start = x", "slope_missing"),
    (E1, "slope_start", "slope_start = 2 * x ** 2", "wrong_power"),
    (E1, "slope_start", "slope_start = -2 * x", "sign"),
    (E1, "slope_start", "slope_start = 2 + x", "sum_for_product"),
    (E1, "slope_start", "slope_start = 2 * 3.0", "no_arithmetic"),
    (E1, "slope_other", "slope_other = x_other ** 2", "power_rule"),
    (E1, "slope_other", "slope_other = -2 * x_other", "sign"),
    (E1, "slope_other", "slope_other = 2 * x", "given_swap"),
    (E1, "slope_other", "slope_other = x_other", "slope_missing"),
    (E1, "x_after_step", "x_after_step = x + step_size * slope_start", "step_with_slope"),
    (E1, "x_after_step", "x_after_step = x - slope_start", "rate_forgotten"),
    (E1, "x_after_step", "x_after_step = x - step_size * x", "wrong_quantity"),
    (E1, "x_after_step", "x_after_step = step_size * slope_start", "term_missing"),
    (E1, "x_after_step", "x_after_step = x - 0.1 * slope_start", "lesson_number"),
    (E1, "x_after_step", "x_after_step = x - step_size * 2 * x ** 2", "wrong_power"),
    (E1, "y_after_step", "y_after_step = x ** 2", "wrong_quantity"),
    (
        E1,
        "y_after_step",
        "x_after_step = x + step_size * slope_start\ny_after_step = x_after_step ** 2",
        "follow_on",
    ),
    (E1, "y_after_step", "y_after_step = x_after_step", "square_forgotten"),
    (E1, "y_after_step", "y_after_step = 2 * x_after_step", "doubled_not_squared"),
    # 02: y = x², z = c·y + d
    (E2, "y_value", "y_value = 2 * x", "doubled_not_squared"),
    (E2, "z_value", "z_value = c * y_value - d", "sign"),
    (E2, "z_value", "z_value = c + y_value + d", "sum_for_product"),
    (E2, "z_value", "z_value = c * x + d", "wrong_quantity"),
    (E2, "z_value", "z_value = c * y_value", "term_missing"),
    (E2, "z_value", "z_value = 2.0 * y_value + d", "lesson_number"),
    (E2, "dz_dy", "dz_dy = c + 1", "sum_for_product"),
    (E2, "dz_dy", "dz_dy = c * y_value", "extra_factor"),
    (E2, "dz_dy", "dz_dy = c * y_value + d", "forward_value"),
    (E2, "dz_dy", "dz_dy = 1 * d", "given_swap"),
    (E2, "dz_dy", "dz_dy = c + d", "constant_kept"),
    (E2, "dy_dx", "dy_dx = x ** 2", "forward_value"),
    (E2, "dy_dx", "dy_dx = x", "slope_missing"),
    (E2, "dy_dx", "dy_dx = 2 * x ** 2", "wrong_power"),
    (E2, "dy_dx", "dy_dx = 2 * c", "given_swap"),
    (E2, "dz_dx", "dz_dx = 2 * c * x + d", "constant_kept"),
    (E2, "dz_dx", "dz_dx = dz_dy + dy_dx", "sum_for_product"),
    (E2, "dz_dx", "dz_dx = 2 * x", "given_missing"),
    (E2, "dz_dx", "dz_dx = c * x ** 2 + d", "forward_value"),
    (E2, "dz_dx", "dz_dx = c * 2 * x ** 2", "wrong_power"),
    (E2, "dz_dx", "dz_dx = dz_dy * dy_dx * x", "given_extra"),
    (E2, "dz_dx", "dz_dx = 2 * c * x + 1", "constant_kept"),
    (E2, "dz_dx", "dz_dx = 4 * x", "lesson_number"),  # the lesson's 4x: its c = 2 in it
    # 03: the neuron, ReLU open
    (E3, "h", "h = w * x - b", "sign"),
    (E3, "h", "h = w + x + b", "sum_for_product"),
    (E3, "h", "h = w * b + x", "given_swap"),
    (E3, "h", "h = w * x", "term_missing"),
    (E3, "h", "h = 3.0 * x + b", "lesson_number"),
    (E3, "L", "L = (a - y) ** 2 / 2", "half_mse"),
    (E3, "L", "L = a - y", "square_forgotten"),
    (E3, "L", "L = (a + y) ** 2", "sign"),
    (E3, "L", "L = (h - y) * 2", "doubled_not_squared"),
    (E3, "dL_da", "dL_da = a - y", "slope_missing"),
    (E3, "dL_da", "dL_da = 2 * (y - a)", "sign"),
    (E3, "dL_da", "dL_da = (a - y) ** 2", "forward_value"),
    (E3, "dL_da", "dL_da = 2 * (a - y) ** 2", "wrong_power"),
    (E3, "dL_da", "dL_da = 2 * a", "term_missing"),
    (E3, "dL_da", "dL_da = 2 * (a - x)", "given_swap"),
    (E3, "dL_dh", "dL_dh = dL_da + da_dh", "sum_for_product"),
    (E3, "dL_dh", "dL_dh = dL_da * x", "given_extra"),
    (E3, "dL_dh", "dL_da = a - y\ndL_dh = dL_da * da_dh", "follow_on"),
    (E3, "dL_dh", "dL_da = a - y\ndL_dh = dL_da + da_dh", "sum_for_product"),
    (E3, "dh_dw", "dh_dw = w", "given_swap"),
    (E3, "dh_dw", "dh_dw = x + b", "constant_kept"),
    (E3, "dL_dw", "dL_dw = dL_dh", "given_missing"),
    (E3, "dL_dw", "dL_dw = dL_dh * w", "given_swap"),
    (E3, "dL_dw", "dL_dw = dL_dh + x", "sum_for_product"),
    (E3, "dL_dw", "dL_dw = (a - y) * x", "slope_missing"),
    (E3, "dL_dw", "dL_dw = 2 * (y - a) * x", "sign"),
    (E3, "dL_dw", "dL_dw = dL_dh * x * w", "given_extra"),
    (E3, "dL_dw", "dL_dw = dL_dh * x + b", "constant_kept"),
    (E3, "dL_dw", "dL_dw = dL_dh * 2.0", "lesson_number"),
    (E6, "dL_dw", "dL_dw = dL_dy * 3.0", "lesson_number"),
    (E9, "dL_dw", "dL_dw = 2 * (a - y) * 2.0", "lesson_number"),
    (E3, "dL_db", "dL_db = dL_dh * x", "given_extra"),
    (E3, "dL_db", "dL_db = dL_dh * b", "given_extra"),
    (E3, "dL_db", "dL_db = dL_dh + 1", "sum_for_product"),
    # 04: the dead ReLU, then LeakyReLU
    (E4, "h", "h = w * x - b", "sign"),
    (E4, "a", "a = h", "relu_forgotten"),
    (E4, "a", "a = w * x + b", "relu_forgotten"),
    (E4, "L", "L = (h - y) ** 2", "relu_forgotten"),
    (E4, "L", "L = (a - y) ** 2 / 2", "half_mse"),
    (E4, "L", "L = a - y", "square_forgotten"),
    (E4, "dL_da", "dL_da = a - y", "slope_missing"),
    (E4, "dL_da", "dL_da = 2 * (y - a)", "sign"),
    (E4, "dL_da", "dL_da = 2 * (h - y)", "relu_forgotten"),
    (E4, "dL_dh", "dL_dh = dL_da", "gate_shut"),
    (E4, "dL_dw", "dL_dw = dL_da * x", "gate_shut"),
    (E4, "dL_db", "dL_db = dL_da", "gate_shut"),
    (E4, "leaky_a", "leaky_a = h", "given_missing"),
    (E4, "leaky_a", "leaky_a = a", "other_quantity"),
    (E4, "leaky_a", "leaky_a = leaky_slope + h", "sum_for_product"),
    (E4, "leaky_a", "leaky_a = -leaky_slope * h", "sign"),
    (E4, "leaky_L", "leaky_L = (a - y) ** 2", "relu_for_leaky"),
    (E4, "leaky_L", "leaky_L = (h - y) ** 2", "wrong_quantity"),
    (E4, "leaky_L", "leaky_L = (leaky_a - y) ** 2 / 2", "half_mse"),
    (E4, "leaky_L", "leaky_L = leaky_a - y", "square_forgotten"),
    (E4, "leaky_dL_da", "leaky_dL_da = 2 * (a - y)", "relu_for_leaky"),
    (E4, "leaky_dL_da", "leaky_dL_da = leaky_a - y", "slope_missing"),
    (E4, "leaky_dL_da", "leaky_dL_da = 2 * (y - leaky_a)", "sign"),
    (E4, "leaky_da_dh", "leaky_da_dh = leaky_slope * h", "forward_value"),
    (E4, "leaky_dL_dw", "leaky_dL_dw = leaky_dL_da * x", "given_missing"),
    (E4, "leaky_dL_dw", "leaky_dL_dw = leaky_dL_da * leaky_slope", "given_missing"),
    (E4, "leaky_dL_dw", "leaky_dL_dw = leaky_dL_da * leaky_slope * w", "given_swap"),
    (E4, "leaky_dL_dw", "leaky_dL_dw = dL_da * leaky_slope * x", "relu_for_leaky"),
    (E4, "leaky_dL_db", "leaky_dL_db = leaky_dL_da", "given_missing"),
    (E4, "leaky_dL_db", "leaky_dL_db = leaky_dL_da * leaky_slope * x", "given_extra"),
    (E4, "leaky_dL_db", "leaky_dL_db = dL_da * leaky_slope", "relu_for_leaky"),
    # 05: three mechanics
    (E5, "x_grad", "x_grad = 3 * x_cube ** 2", "given_missing"),
    (E5, "x_grad", "x_grad = k * x_cube ** 3", "power_rule"),
    (E5, "x_grad", "x_grad = k * x_cube ** 2", "factor_missing"),
    (E5, "x_grad", "x_grad = k + 3 * x_cube ** 2", "sum_for_product"),
    (E5, "x_grad", "x_grad = k * 3 * x_cube", "given_missing"),
    (E5, "y_grad", "y_grad = k * 3 * x_cube ** 2", "other_quantity"),
    (E5, "y_grad", "y_grad = 3 * x_cube ** 2", "other_quantity"),
    (E5, "grad_after_three_calls", "grad_after_three_calls = 2 * x_square", "calls_missing"),
    (E5, "grad_after_three_calls", "grad_after_three_calls = 3 * x_square", "slope_missing"),
    (E5, "grad_after_three_calls", "grad_after_three_calls = 3 * x_square ** 2", "power_rule"),
    (
        E5,
        "grad_after_zero_and_backward",
        "grad_after_zero_and_backward = 3 * 2 * x_square",
        "accumulation",
    ),
    (
        E5,
        "grad_after_zero_and_backward",
        "grad_after_zero_and_backward = x_square ** 2",
        "forward_value",
    ),
    (E5, "detached_value", "detached_value = x_square", "square_forgotten"),
    (E5, "detached_value", "detached_value = 2 * x_square", "doubled_not_squared"),
    # 06: one backward, every parameter; fan-out
    (E6, "y_value", "y_value = w * x - b", "sign"),
    (E6, "y_value", "y_value = w * b + x", "given_swap"),
    (E6, "loss", "loss = (y_value - target) ** 2 / 2", "half_mse"),
    (E6, "loss", "loss = y_value - target", "square_forgotten"),
    (E6, "loss", "loss = (target - w) ** 2", "wrong_quantity"),
    (E6, "dL_dy", "dL_dy = y_value - target", "slope_missing"),
    (E6, "dL_dy", "dL_dy = 2 * (target - y_value)", "sign"),
    (E6, "dL_dy", "dL_dy = (y_value - target) ** 2", "forward_value"),
    (E6, "dy_dw", "dy_dw = w", "given_swap"),
    (E6, "dL_dw", "dL_dw = dL_dy * w", "given_swap"),
    (E6, "dL_dw", "dL_dw = dL_dy + x", "sum_for_product"),
    (E6, "dL_dw", "dL_dw = dL_dy", "given_missing"),
    (E6, "dL_dw", "dL_dw = (y_value - target) * x", "slope_missing"),
    (E6, "dL_db", "dL_db = dL_dy * x", "given_extra"),
    (E6, "dL_dw", "dL_dy = y_value - target\ndL_dw = dL_dy * dy_dw", "follow_on"),
    (E6, "dL_dw", "dL_dy = y_value - target\ndL_dw = dL_dy * w", "given_swap"),
    (E6, "dL_db", "dL_db = dL_dy * b", "given_extra"),
    (E6, "dL_db", "dL_db = dL_dy + 1", "sum_for_product"),
    (E6, "share_direct", "share_direct = 2 * u ** 2", "other_path"),
    (E6, "share_direct", "share_direct = u", "square_forgotten"),
    (E6, "share_direct", "share_direct = 3 * u ** 2", "total"),
    (E6, "share_sq", "share_sq = 2 * u", "slope_alone"),
    (E6, "share_sq", "share_sq = u ** 2", "other_path"),
    (E6, "share_sq", "share_sq = u + 2 * u", "sum_for_product"),
    (E6, "df_du", "df_du = share_direct * share_sq", "multiplied"),
    (E6, "df_du", "df_du = u ** 3", "power_rule"),
    (E6, "df_du", "df_du = 3 * u ** 2 + 1", "constant_kept"),
    (E6, "df_du", "df_du = share_sq", "one_path"),
    (E6, "df_du", "df_du = share_direct", "one_path"),
    (E6, "grad_detached", "grad_detached = 3 * u ** 2", "both_paths"),
    (E6, "grad_detached", "grad_detached = 2 * u ** 2", "wrong_path"),
    # 07: the polynomial, then a second weight
    (E7, "cubic_value", "cubic_value = x_cubic ** 3 + 2 * x_cubic", "sign"),
    (E7, "cubic_value", "cubic_value = x_cubic ** 2 - 2 * x_cubic", "wrong_power"),
    (E7, "cubic_value", "cubic_value = x_cubic ** 3 - 2", "given_missing"),
    (E7, "cubic_slope", "cubic_slope = 3 * x_cubic ** 2", "term_dropped"),
    (E7, "cubic_slope", "cubic_slope = 3 * x_cubic ** 2 - 2 * x_cubic", "term_kept_x"),
    (E7, "cubic_slope", "cubic_slope = 3 * x_cubic ** 2 + 2", "term_sign"),
    (E7, "cubic_slope", "cubic_slope = 3 * x_cubic - 2", "given_missing"),
    (E7, "cubic_slope", "cubic_slope = x_cubic ** 3 - 2 * x_cubic", "forward_value"),
    (E7, "out", "out = w2 * max(w * x - b, 0)", "sign"),
    (E7, "out", "out = max(w * x + b, 0)", "given_missing"),
    (E7, "out", "out = w2 + max(w * x + b, 0)", "sum_for_product"),
    (E7, "out", "a = max(w * x - b, 0)\nout = w2 * a", "sign"),
    (E7, "L", "L = out - target", "square_forgotten"),
    (E7, "L", "L = (out - target) ** 2 / 2", "half_mse"),
    (E7, "L", "L = (w2 - target) ** 2", "wrong_quantity"),
    (E7, "dL_dout", "dL_dout = out - target", "slope_missing"),
    (E7, "dL_dout", "dL_dout = 2 * (target - out)", "sign"),
    (E7, "dL_dw2", "dL_dw2 = dL_dout * w2", "wrong_quantity"),
    (E7, "dL_dw2", "dL_dout = out - target\ndL_dw2 = dL_dout * a", "follow_on"),
    (E7, "dL_dw2", "dL_dw2 = dL_dout", "factor_missing"),
    (E7, "dL_da", "dL_da = dL_dout", "given_missing"),
    (E7, "dL_da", "dL_da = dL_dout * a", "wrong_quantity"),
    (E7, "dL_da", "dL_da = dL_dout + w2", "sum_for_product"),
    (E7, "dL_dh", "dL_dh = dL_dout", "wrong_quantity"),
    (E7, "dL_dh", "dL_dh = dL_da * 0", "gate_open"),
    (E7, "dL_dw", "dL_dw = dL_dh * w", "given_swap"),
    (E7, "dL_dw", "dL_dw = dL_dout * x", "wrong_quantity"),
    (E7, "dL_dw", "dL_dw = dL_dh", "given_missing"),
    (E7, "dL_db", "dL_db = dL_dh * x", "given_extra"),
    (E7, "dL_db", "dL_db = dL_dout", "wrong_quantity"),
    # 08: three passes
    (E8, "grad_after_three_passes", "grad_after_three_passes = 2 * c * x", "calls_missing"),
    (E8, "grad_after_three_passes", "grad_after_three_passes = 3 * c * x", "slope_missing"),
    (E8, "grad_after_three_passes", "grad_after_three_passes = 3 * 2 * x", "given_missing"),
    (
        E8,
        "grad_after_three_passes",
        "grad_after_three_passes = 3 * (2 * c * x + 1)",
        "constant_kept",
    ),
    (E8, "grad_after_three_passes", "grad_after_three_passes = 3 * c * x ** 2", "power_rule"),
    (
        E8,
        "grad_after_three_passes",
        "grad_after_three_passes = 3 * (c * x ** 2 + 1)",
        "forward_value",
    ),
    (E8, "grad_after_three_passes", "grad_after_three_passes = 3 * (2 * c + x)", "sum_for_product"),
    # 09: the neuron with one's own numbers
    (E9, "L", "a = max(w * x - b, 0)\nL = (a - y) ** 2", "sign"),
    (E9, "L", "a = max(w * x + b, 0)\nL = (a - y) ** 2 / 2", "half_mse"),
    (E9, "L", "a = max(w * x + b, 0)\nL = a - y", "square_forgotten"),
    (E9, "L", "h = w * x + b\na = max(h, 0)\nL = (a - x) ** 2", "given_swap"),
    (E9, "L", "h = w + x + b\na = max(h, 0)\nL = (a - y) ** 2", "sum_for_product"),
    (E9, "dL_dw", "dL_dw = 2 * (a - y) * w", "given_swap"),
    (E9, "dL_dw", "dL_dw = 2 * (a - y)", "given_missing"),
    (E9, "dL_dw", "dL_dw = (a - y) * x", "slope_missing"),
    (E9, "dL_dw", "dL_dw = 2 * (y - a) * x", "sign"),
    (E9, "dL_dw", "dL_dw = 2 * (a - y) * x + b", "constant_kept"),
    (E9, "dL_dw", "dL_dw = (a - y) ** 2 * x", "power_rule"),
    (E9, "dL_db", "dL_db = 2 * (a - y) * x", "given_extra"),
    (E9, "dL_db", "dL_db = 2 * (a - y) * b", "given_extra"),
    (E9, "dL_db", "dL_db = a - y", "slope_missing"),
    (E9, "dL_db", "dL_db = 2 * (a - y) + 1", "constant_kept"),
    # issue 25: answers once misnamed, or accepted
    (E1, "y_start", "y_start = 0.0", "no_arithmetic"),
    (E4, "dL_da", "dL_da = 0", "no_arithmetic"),
    (E3, "dL_dw", "dL_dw = 1.5", "no_arithmetic"),
    (E4, "dL_dw", "dL_dw = dL_dh * w", "given_swap"),
    (E3, "dL_dw", "dL_dw = dL_dh * x + dL_dh", "extra_term"),
    (E6, "dL_dw", "dL_dw = dL_dy * x + dL_dy", "extra_term"),
    (
        E5,
        "grad_after_three_calls",
        "grad_after_three_calls = 2 * x_square * (1 + 2 + 3)",
        "accumulation",
    ),
    (E7, "dL_dh", "dL_dh = dL_da * w2", "given_extra"),
)


P4, P4_OVER, P2_OVER = (f"{E8}[{tag}]" for tag in ("p4", "p4_over", "p2_over"))
MINUS_C3, HALF_C2, HALF_C3 = (f"{E5}[{tag}]" for tag in ("minus_c3", "half_c2", "half_c3"))
K10_C4, K8_C1_2, K1_20_C5 = (f"{E9}[{tag}]" for tag in ("k10_c4", "k8_c1_2", "k1_20_c5"))
G3 = "grad_after_three_passes"
C3 = "grad_after_three_calls"

VARIANT_CORPUS: tuple[tuple[str, str, str, str], ...] = (
    # Written in a class variant's own terms, where no lesson entry is the same mistake
    # (`as_the_lesson`): (problem, part, the learner's line(s), the reason expected).
    # 08: z = c·x⁴ + 1, x⁴/c + 1, x²/c + 1
    (P4, G3, f"{G3} = 4 * c * x**3", "calls_missing"),
    (P4, G3, f"{G3} = 3 * c * x**3", "slope_missing"),
    (P4, G3, f"{G3} = 3 * 4 * x**3", "given_missing"),
    (P4, G3, f"{G3} = 3 * (4 * c * x**3 + 1)", "constant_kept"),  # hidden by large numbers
    (P4, G3, f"{G3} = 3 * c * x**4", "power_rule"),
    (P4, G3, f"{G3} = 3 * 4 * c * x**4", "wrong_power"),
    (P4, G3, f"{G3} = 3 * 4 * c * x**2", "wrong_power"),
    (P4, G3, f"{G3} = 3 * (c * x**4 + 1)", "forward_value"),
    (P4, G3, f"{G3} = 3 * (4 * c + x**3)", "sum_for_product"),
    (P4_OVER, G3, f"{G3} = 4 * x**3 / c", "calls_missing"),
    (P4_OVER, G3, f"{G3} = 3 * x**3 / c", "slope_missing"),
    (P4_OVER, G3, f"{G3} = 3 * 4 * x**3", "given_missing"),
    (P4_OVER, G3, f"{G3} = 3 * (4 * x**3 / c + 1)", "constant_kept"),
    (P4_OVER, G3, f"{G3} = 3 * x**4 / c", "power_rule"),
    (P4_OVER, G3, f"{G3} = 3 * (x**4 / c + 1)", "forward_value"),
    (P2_OVER, G3, f"{G3} = 2 * x / c", "calls_missing"),
    (P2_OVER, G3, f"{G3} = 3 * x / c", "slope_missing"),
    (P2_OVER, G3, f"{G3} = 3 * 2 * x", "given_missing"),
    (P2_OVER, G3, f"{G3} = 3 * (2 * x / c + 1)", "constant_kept"),
    (P2_OVER, G3, f"{G3} = 3 * x**2 / c", "power_rule"),
    (P2_OVER, G3, f"{G3} = 3 * 2 * x * c", "lesson_structure"),
    # 05: z = −k·y or k·y/2; y = 2x² or 3x²
    (MINUS_C3, "x_grad", "x_grad = k * 3 * x_cube**2", "lesson_structure"),
    (MINUS_C3, "x_grad", "x_grad = -3 * x_cube**2", "given_missing"),
    (MINUS_C3, "x_grad", "x_grad = -k * x_cube**3", "power_rule"),
    (MINUS_C3, "x_grad", "x_grad = -k * x_cube**2", "factor_missing"),
    (MINUS_C3, "y_grad", "y_grad = k", "lesson_structure"),
    (MINUS_C3, "y_grad", "y_grad = -k * 3 * x_cube**2", "other_quantity"),
    (MINUS_C3, C3, f"{C3} = 6 * x_square", "lesson_structure"),
    (MINUS_C3, C3, f"{C3} = 3 * 3 * x_square", "factor_missing"),
    (MINUS_C3, C3, f"{C3} = 3 * 3 * x_square**2", "power_rule"),
    (MINUS_C3, "detached_value", "detached_value = 3 * x_square", "given_missing"),
    (HALF_C2, "x_grad", "x_grad = k * 3 * x_cube**2", "lesson_structure"),
    (HALF_C2, "x_grad", "x_grad = 3 * x_cube**2 / 2", "given_missing"),
    (HALF_C2, "x_grad", "x_grad = k / 2 * x_cube**3", "power_rule"),
    (HALF_C2, "y_grad", "y_grad = k", "lesson_structure"),
    (HALF_C2, "y_grad", "y_grad = k / 2 * 3 * x_cube**2", "other_quantity"),
    (HALF_C2, C3, f"{C3} = 4 * x_square", "calls_missing"),
    (HALF_C2, C3, f"{C3} = 3 * 2 * x_square", "lesson_structure"),
    (HALF_C2, "detached_value", "detached_value = 2 * x_square", "given_missing"),
    (HALF_C2, "detached_value", "detached_value = 4 * x_square", "other_quantity"),
    (HALF_C3, C3, f"{C3} = 6 * x_square", "lesson_structure"),
    (HALF_C3, "detached_value", "detached_value = 3 * x_square", "given_missing"),
    # 09: h = g(w·x + b), L = s(a − y)²
    (K10_C4, "dL_dw", "dL_dw = 8 * (a - y) * x", "slope_missing"),
    (K10_C4, "dL_dw", "dL_dw = 8 * (a - y) * 10 * w", "given_swap"),
    (K10_C4, "dL_dw", "dL_dw = 4 * (a - y) * 10 * x", "factor_missing"),
    (K10_C4, "dL_dw", "dL_dw = 8 * (y - a) * 10 * x", "sign"),
    (K10_C4, "dL_db", "dL_db = 8 * (a - y) * 10 * x", "given_extra"),
    (K10_C4, "dL_db", "dL_db = 8 * (a - y)", "slope_missing"),
    (K8_C1_2, "dL_dw", "dL_dw = 2 * (a - y) * 8 * x", "slope_extra"),
    (K8_C1_2, "dL_dw", "dL_dw = (a - y) * x", "slope_missing"),
    (K8_C1_2, "dL_dw", "dL_dw = (y - a) * 8 * x", "sign"),
    (K8_C1_2, "dL_db", "dL_db = (a - y) * 8 * x", "given_extra"),
    (K1_20_C5, "dL_dw", "dL_dw = 10 * (a - y) * x", "slope_missing"),
    (K1_20_C5, "dL_dw", "dL_dw = 5 * (a - y) * x / 20", "factor_missing"),
    (K1_20_C5, "dL_db", "dL_db = 10 * (a - y) * x / 20", "given_extra"),
)


@dataclass(frozen=True)
class Outcome:
    """One corpus entry judged for one learner."""

    exercise: str
    part: str
    lines: str
    expected: str
    learner: str
    problem: str
    """The learner's problem (their structure, in a class)."""
    reason: str
    message: str
    seconds: float
    """How long reading the cells and judging took."""

    @property
    def verdict(self) -> str:
        """named, generic, misnamed, or passed (the wrong formula is right for these numbers)."""
        if self.reason == "match":
            return "passed"
        if self.reason == self.expected:
            return "named"
        return "generic" if self.reason in GENERIC else "misnamed"


def cells(exercise: str, part: str, lines: str) -> list[str]:
    """The learner's code cells: the given line, every other part right, `lines` for `part`."""
    spec = exercise_spec(exercise)
    names = ", ".join(spec.given_names)
    quoted = ", ".join(repr(n) for n in spec.given_names)
    sources = [f"{names} = exercise.given({quoted})"]
    for p in spec.parts:
        if p.kind in CODE_KINDS or p.kind == "fact":
            continue
        sources.append(lines if p.name == part else p.code)
    return sources


def judge_entry(
    exercise: str, part: str, lines: str, learner: str, site: Site | None = None
) -> tuple[str, str]:
    """(reason, message) the grader gives `lines` for `part`, with `learner`'s numbers (in
    a class `site`, and their own structure)."""
    from autograder.diagnosis.byhand import read_hand_answers
    from autograder.diagnosis.judge import JudgeContext, judge

    problem = exercise if site is None else learner_problem(exercise, learner, site)
    givens = (
        learner_givens(exercise, learner)
        if site is None
        else learner_givens(exercise, learner, site)
    )
    hand = read_hand_answers(cells(problem, part, lines), givens)
    verdict = judge(problem, part, JudgeContext(problem, givens, hand))
    return verdict.reason, verdict.message


def written_out(spec: ExerciseSpec, part: str, kept: Collection[str]) -> str:
    """The model answer of `part` with every earlier part not in `kept` written out as its
    own model answer, down to the givens (what the lines stand for where they write no
    name for that part)."""
    import ast

    class WriteOut(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in spec.part_names and node.id not in kept and node.id != part:
                return ast.parse(written_out(spec, node.id, kept), mode="eval").body
            return node

    tree = WriteOut().visit(ast.parse(spec.part(part).answer, mode="eval"))
    return ast.unparse(tree)


def as_the_lesson(problem: str, part: str, lines: str) -> bool:
    """Whether a corpus entry, written in the lesson's structure, is the same mistake in
    `problem`: the part's model answer, with every earlier part the lines do not name
    written out, is the same in both (`dL_dw = dL_dh * w` swaps the x of the lesson's
    dh/dw = x: not the same mistake where dh/dw = 2x), and the lines write out no number
    (a number there is the lesson's arithmetic, e.g. the 2 of its x²)."""
    import ast

    lesson, theirs = exercise_spec(problem.partition("[")[0]), exercise_spec(problem)
    tree = ast.parse(lines)
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assigned = {
        t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
        if isinstance(t, ast.Name) and t.id in lesson.part_names
    }  # fmt: skip
    for name in {part} | assigned:  # a helper line for an earlier part: the same there too
        setup = (s.part(name).code.split("\n")[:-1] for s in (lesson, theirs))
        if next(setup) != next(setup):
            return False
        if written_out(theirs, name, named - {name}) != written_out(lesson, name, named - {name}):
            return False
    numbers = (n for n in ast.walk(tree) if isinstance(n, ast.Constant))
    return not any(type(n.value) in (int, float) for n in numbers)


def outcomes(learners: Iterable[str], site: Site | None = None) -> list[Outcome]:
    """Every corpus entry judged for every learner; in a class `site`, the lesson's entries
    that mean the same mistake in the learner's own structure (`as_the_lesson`), and the
    entries written for that structure (`VARIANT_CORPUS`)."""
    found = []
    for learner in learners:
        for exercise, part, lines, expected in CORPUS:
            problem = exercise if site is None else learner_problem(exercise, learner, site)
            if problem == exercise or as_the_lesson(problem, part, lines):
                found.append(_judged(exercise, part, lines, expected, learner, site, problem))
        if site is not None:
            found.extend(variant_outcomes([learner], site))
    return found


def variant_outcomes(learners: Iterable[str], site: Site) -> list[Outcome]:
    """The entries written for a class variant, judged for each learner who has it."""
    found = []
    for learner in learners:
        for problem, part, lines, expected in VARIANT_CORPUS:
            exercise = problem.partition("[")[0]
            if learner_problem(exercise, learner, site) == problem:
                found.append(_judged(exercise, part, lines, expected, learner, site, problem))
    return found


def _judged(
    exercise: str,
    part: str,
    lines: str,
    expected: str,
    learner: str,
    site: Site | None,
    problem: str,
) -> Outcome:
    import time

    start = time.perf_counter()
    reason, message = judge_entry(exercise, part, lines, learner, site)
    seconds = time.perf_counter() - start
    return Outcome(exercise, part, lines, expected, learner, problem, reason, message, seconds)


def figures(found: Iterable[Outcome]) -> dict[str, Counter[str]]:
    """Per expected mistake class: how many outcomes were named, generic, misnamed, passed."""
    table: dict[str, Counter[str]] = {}
    for outcome in found:
        table.setdefault(outcome.expected, Counter())[outcome.verdict] += 1
    return table
