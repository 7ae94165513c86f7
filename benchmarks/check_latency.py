"""Benchmark: a class checking at once through the hub's check service.

Starts a real JupyterHub with the check service (tests/check_hub.py: its proxy, the
class hook), creates N learners (default 100) and their API tokens through the hub's
REST API as an admin, then every learner sends the check a notebook sends
(`exercise.check()` of the neuron exercise, as the sample learner ada wrote it: every
cell run so far and the values the check reads), all at once from a thread pool, for R
rounds; each round the learner's history has grown by the check cell run before, as a
kernel's does. Prints, per round, p50/p95/max seconds of a check through the proxy (as a
browser would reach it) or, with --direct, as the class hub's servers reach it, beside
the load average (this machine is shared: a figure means little without it); the CPU
each process spent per check (the service's processes, the hub, the proxy, this
client), which the load does not change; and, as the baseline of the same run, the CPU
of judging the same checks in this process without HTTP or the hub. The first round
is preceded, as in a notebook, by each learner's `Exercise(...)` (the Given cell asks
the service for the learner's numbers): that is where the service first asks the hub who
each token is, timed and printed apart from the checks.

    python benchmarks/check_latency.py --learners 100 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
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

import process_tree  # noqa: E402
from check_hub import CheckHub  # noqa: E402

from autograder.authoring.sample_class import SAMPLE_CLASS  # noqa: E402
from autograder.learner.wire import encode_value  # noqa: E402

EXERCISE = "03_a_neuron_by_hand"
GOAL = 0.3
TICKS = os.sysconf("SC_CLK_TCK")
ROLES = {"checks.server": "service", "configurable-http-proxy": "proxy", "jupyterhub": "hub"}


def check_request(round_number: int) -> dict[str, object]:
    """What ada's kernel sends for `exercise.check()` after running her notebook and
    `round_number` checks before this one (each a cell of its history)."""
    import nbformat

    path = SAMPLE_CLASS / "ada" / EXERCISE / f"{EXERCISE}.ipynb"
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    cells += ["exercise.check()"] * round_number
    values = {n: encode_value(1.0) for n in ("h", "a", "L")}
    return {"exercise": EXERCISE, "names": [], "cells": cells, "values": values, "kernel": True}


def timed_request(url: str, token: str, body: bytes, action: str = "check") -> float:
    """Seconds for one answer of the service to `action` (`check`: it holds verdicts)."""
    request = urllib.request.Request(
        f"{url}api/{action}", data=body, headers={"Authorization": f"token {token}"}, method="POST"
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    elapsed = time.perf_counter() - start
    assert answer["verdicts"] if action == "check" else answer["givens"], answer
    return elapsed


def p95(seconds: list[float]) -> float:
    return sorted(seconds)[max(0, round(0.95 * len(seconds)) - 1)]


def summary(label: str, seconds: list[float], what: str = "checks") -> str:
    return (
        f"{label}: {len(seconds)} {what}, p50 {statistics.median(seconds):.3f} s, "
        f"p95 {p95(seconds):.3f} s, max {max(seconds):.3f} s"
    )


def cpu_by_role(root: int) -> dict[str, float]:
    """CPU seconds (user + system) of the hub's processes so far, by role; and this one."""
    used = dict.fromkeys([*ROLES.values(), "judges", "client"], 0.0)
    parents = process_tree.parents()
    for pid in process_tree.descendants(root, parents):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        role = next((r for key, r in ROLES.items() if key in command), None)
        if role == "service" and parents.get(pid) != root:
            role = "judges"  # forked by the service's first process, which serves HTTP
        if role is not None:
            used[role] += (int(fields[11]) + int(fields[12])) / TICKS
    mine = os.times()
    used["client"] = mine.user + mine.system
    return used


def judging_alone(learners: list[str], rounds: int) -> float:
    """CPU seconds per check of judging the same requests in this process (no HTTP, no
    hub): the baseline the service's own CPU per check is compared with."""
    import secrets

    from autograder.checks.judging import Judging
    from autograder.checks.server import warm_up

    judging = Judging(secrets.token_bytes(32))
    warm_up(judging)
    bodies = [json.dumps(check_request(r)) for r in range(rounds)]
    start = time.process_time()
    for body in bodies:
        for name in learners:
            judging.answer("check", name, json.loads(body))
    return (time.process_time() - start) / (len(bodies) * len(learners))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--direct", action="store_true", help="not through the proxy")
    args = parser.parse_args()
    learners = [f"s{i:03d}" for i in range(args.learners)]
    rounds: list[list[float]] = []
    cpu: list[dict[str, float]] = []
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="check-latency-") as folder:
        started = time.perf_counter()
        hub = CheckHub.start(Path(folder) / "hub", learners)
        print(f"hub with the check service and {len(learners)} learners up in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        try:
            url = hub.direct_checks_url if args.direct else hub.checks_url
            with ThreadPoolExecutor(max_workers=len(learners)) as pool:
                # each notebook's Given cell, `Exercise(...)`, asks for the learner's numbers
                # before any check: the service's first sight of each token (asks the hub)
                opening = json.dumps({"exercise": EXERCISE}).encode()
                start = threading.Barrier(len(learners))

                def open_exercise(name: str) -> float:
                    start.wait()
                    return timed_request(url, hub.tokens[name], opening, action="exercise")

                opened = list(pool.map(open_exercise, learners))
                opened_load = os.getloadavg()[0]
                for number in range(args.rounds):
                    body = json.dumps(check_request(number)).encode()
                    gate = threading.Barrier(len(learners))

                    def one(name: str, gate: threading.Barrier = gate, body: bytes = body) -> float:
                        gate.wait()
                        return timed_request(url, hub.tokens[name], body)

                    before = cpu_by_role(hub.process.pid)
                    rounds.append(list(pool.map(one, learners)))
                    after = cpu_by_role(hub.process.pid)
                    cpu.append({role: after[role] - before[role] for role in after})
                    loads.append(os.getloadavg()[0])
        finally:
            hub.stop()
    where = "direct" if args.direct else "through the hub's proxy"
    print(f"{len(learners)} learners checking at once, {where} (load: 1-minute load average "
          f"after the round, on {os.cpu_count()} cores):")  # fmt: skip
    opening_label = "Exercise(...) first, as each notebook's Given cell (tokens new)"
    print(f"  {summary(opening_label, opened, 'answers')}; load {opened_load:.1f}")
    for number, (seconds, load) in enumerate(zip(rounds, loads, strict=True), 1):
        print(f"  {summary(f'round {number}', seconds)}; load {load:.1f}")
    everything = [s for r in rounds for s in r]
    print(f"  {summary('all', everything)}; load {min(loads):.1f}-{max(loads):.1f}")
    print("CPU per check (ms), by process, in each round:")
    for role in cpu[0]:
        shown = " ".join(f"{1000 * c[role] / len(learners):6.2f}" for c in cpu)
        print(f"  {role:8} {shown}")
    alone = judging_alone(learners, args.rounds)
    later = [c["service"] + c["judges"] for c in cpu[1:]] or [cpu[0]["service"]]
    service = statistics.mean(later) / len(learners)
    print(f"judging alone (this process, no HTTP, no hub): {1000 * alone:.2f} ms CPU per "
          f"check; the service (rounds 2-{args.rounds}) spends "
          f"{service / alone:.1f}x that")  # fmt: skip
    print(f"goal p95 < {GOAL} s: {'met' if p95(everything) < GOAL else 'NOT met'} "
          f"(load {min(loads):.1f}-{max(loads):.1f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
