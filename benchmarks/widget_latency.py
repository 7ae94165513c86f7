"""How long one widget update takes, headless (Agg): the neuron and tangent explorers.

One update is what a slider move triggers: recompute forward and backward with
PyTorch, rewrite the HTML read-out, move the picture's artists, render the PNG
and hand it to the Output widget. The target is a median under 100 ms, so the
widgets feel immediate while a learner drags a slider.

    .venv/bin/python benchmarks/widget_latency.py --repeats 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, too

from autograd_lessons.states import neuron_state, tangent_state  # noqa: E402
from autograd_lessons.widgets import NeuronExplorer, TangentExplorer  # noqa: E402

SLIDER_VALUES = [v / 2 for v in range(-6, 7)]  # -3.0 ... 3.0, every step a change


def timed(action: Callable[[int], object], repeats: int, warmup: int) -> list[float]:
    """Milliseconds per call of ``action(i)``, after ``warmup`` untimed calls."""
    for i in range(warmup):
        action(i)
    times = []
    for i in range(warmup, warmup + repeats):
        start = time.perf_counter()
        action(i)
        times.append((time.perf_counter() - start) * 1000)
    return times


def summary(label: str, times: list[float], budget_ms: float | None) -> tuple[str, bool]:
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[8] if len(times) > 1 else times[0]
    line = f"  {label:<34} median {median:7.2f} ms   p90 {p90:7.2f} ms"
    ok = True
    if budget_ms is not None:
        ok = median < budget_ms
        line += f"   median < {budget_ms:g} ms: {'yes' if ok else 'NO'}"
    return line, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=100, help="timed updates per widget")
    parser.add_argument("--warmup", type=int, default=5, help="untimed updates first")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="target median (ms)")
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 if a median misses the budget"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    start = time.perf_counter()
    neuron = NeuronExplorer()
    first_neuron = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    tangent = TangentExplorer()
    first_tangent = (time.perf_counter() - start) * 1000

    def move_x(i: int) -> None:
        neuron.x_slider.value = SLIDER_VALUES[i % len(SLIDER_VALUES)]

    def move_tangent(i: int) -> None:
        tangent.slider.value = SLIDER_VALUES[i % len(SLIDER_VALUES)] * 4 / 3

    def forward_backward(i: int) -> None:
        neuron_state(SLIDER_VALUES[i % len(SLIDER_VALUES)], 3.0, -1.0, 2.0)

    def redraw(i: int) -> None:
        neuron.picture.update(neuron_state(SLIDER_VALUES[i % len(SLIDER_VALUES)], 3.0, -1.0, 2.0))
        neuron.picture.png()

    print(
        f"widget update latency (headless Agg; {args.repeats} timed updates after "
        f"{args.warmup} warm-up)"
    )
    results = [
        summary(
            "neuron explorer: move x slider",
            timed(move_x, args.repeats, args.warmup),
            args.budget_ms,
        ),
        summary(
            "tangent explorer: move x slider",
            timed(move_tangent, args.repeats, args.warmup),
            args.budget_ms,
        ),
        summary(
            "  part: neuron_state (fwd + bwd)",
            timed(forward_backward, args.repeats, args.warmup),
            None,
        ),
        summary("  part: neuron picture redraw", timed(redraw, args.repeats, args.warmup), None),
        summary(
            "  part: tangent_state (fwd + bwd)",
            timed(lambda i: tangent_state(i % 8 - 4.0), args.repeats, args.warmup),
            None,
        ),
    ]
    for line, _ in results:
        print(line)
    print(
        f"  first display (builds the figure):  neuron {first_neuron:.1f} ms, "
        f"tangent {first_tangent:.1f} ms"
    )
    all_ok = all(ok for _, ok in results)
    return 1 if args.strict and not all_ok else 0


if __name__ == "__main__":
    sys.exit(main())
