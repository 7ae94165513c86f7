"""Benchmark: a class checking at once through the hub's check service.

Starts a real JupyterHub with the check service (tests/check_hub.py: its proxy, the
class hook), creates N learners (default 100) and their API tokens through the hub's
REST API as an admin, then every learner sends the same kind of check a notebook sends
(`exercise.check()` of the neuron exercise: every answer cell's source and the values
the check reads, as the sample learner ada wrote them), all at once from a thread pool,
for R rounds. Prints p50/p95/max seconds of a check through the proxy (as a browser
would reach it) or, with --direct, as the class hub's servers reach it, for the first
round (the service asks the hub who each token is) and for the later ones (cached), and
the goal: p95 under 0.3 s.

    python benchmarks/check_latency.py --learners 100 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from check_hub import CheckHub  # noqa: E402

from autograder.authoring.sample_class import SAMPLE_CLASS  # noqa: E402
from autograder.learner.wire import encode_value  # noqa: E402

EXERCISE = "03_a_neuron_by_hand"
GOAL = 0.3


def check_request() -> dict[str, object]:
    """What ada's kernel sends for `exercise.check()` after running her notebook."""
    import nbformat

    path = SAMPLE_CLASS / "ada" / EXERCISE / f"{EXERCISE}.ipynb"
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    values = {n: encode_value(1.0) for n in ("h", "a", "L")}
    return {"exercise": EXERCISE, "names": [], "cells": cells, "values": values, "kernel": True}


def timed_check(url: str, token: str, body: bytes) -> float:
    request = urllib.request.Request(
        f"{url}api/check", data=body, headers={"Authorization": f"token {token}"}, method="POST"
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    elapsed = time.perf_counter() - start
    assert answer["verdicts"], answer
    return elapsed


def summary(label: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{label}: {len(ordered)} checks, p50 {statistics.median(ordered):.3f} s, "
        f"p95 {p95:.3f} s, max {ordered[-1]:.3f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--direct", action="store_true", help="not through the proxy")
    args = parser.parse_args()
    learners = [f"s{i:03d}" for i in range(args.learners)]
    with tempfile.TemporaryDirectory(prefix="check-latency-") as folder:
        started = time.perf_counter()
        hub = CheckHub.start(Path(folder) / "hub", learners)
        print(f"hub with the check service and {len(learners)} learners up in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        try:
            url = hub.direct_checks_url if args.direct else hub.checks_url
            body = json.dumps(check_request()).encode()
            rounds: list[list[float]] = []
            with ThreadPoolExecutor(max_workers=len(learners)) as pool:
                for _ in range(args.rounds):
                    gate = threading.Barrier(len(learners))

                    def one(name: str, gate: threading.Barrier = gate) -> float:
                        gate.wait()
                        return timed_check(url, hub.tokens[name], body)

                    rounds.append(list(pool.map(one, learners)))
        finally:
            hub.stop()
    where = "direct" if args.direct else "through the hub's proxy"
    print(f"{len(learners)} learners checking at once, {where}:")
    print("  " + summary("first round (token not yet known to the service)", rounds[0]))
    later = [s for r in rounds[1:] for s in r]
    if later:
        print("  " + summary(f"rounds 2-{args.rounds}", later))
    everything = [s for r in rounds for s in r]
    print("  " + summary("all", everything))
    p95 = sorted(everything)[max(0, round(0.95 * len(everything)) - 1)]
    print(f"goal p95 < {GOAL} s: {'met' if p95 < GOAL else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
