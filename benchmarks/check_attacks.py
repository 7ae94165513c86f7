"""Benchmark: honest learners checking while the check service is attacked (issue 26).

Starts a real JupyterHub with the check service (tests/check_hub.py), hub and service
limited to 1024 open files (a common soft limit), with H honest learners (default 20)
and 4 hostile ones. Honest learners each send ada's neuron check (as
benchmarks/check_latency.py does), one after another with a second's thought between,
first alone (the baseline) and then while, from another process, all of these run at
once:
- heavy checks: each hostile learner sends 2 MB checks within the caps (30 cells of plain
  assignments, about 15 s of a judge's work here), again as soon as answered;
- unauthenticated bodies: 64 connections each send a 4 MB request without a token;
- idle connections: about 1100 connections each stopped in the middle of its headers,
  reopened whenever the service closes one;
- made-up tokens: one made-up token sent again and again, and fresh made-up tokens.
Prints the honest learners' p50/p95/max in each phase (and the ratio to the baseline),
how many honest checks were not answered, what each attack got (HTTP statuses, connections
closed), the service's memory (its first process, and its judges together) before, at its
peak and after the attacks, the service's and the hub's CPU, and how many times the hub
was asked about a token. Every loop stops by itself (--seconds); traffic only to
127.0.0.1.

    python benchmarks/check_attacks.py --honest 20 --seconds 40
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import secrets
import select
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

import process_tree  # noqa: E402
from check_hub import CheckHub  # noqa: E402
from check_latency import check_request, p95, summary  # noqa: E402

from autograder_client import DEFAULT_TIMEOUT  # noqa: E402

GOAL = 1.0  # s: honest p95 under attack
FILE_LIMIT = 1024
HOSTILE = [f"x{i}" for i in range(4)]
UNAUTHENTICATED = 64
IDLE = 1100
THINK = 1.0  # s between an honest learner's checks
TICKS = os.sysconf("SC_CLK_TCK")


def heavy_check() -> bytes:
    """2.1 MB within the caps: 30 cells of 3000 plain assignments (the issue's attack)."""
    cell = "\n".join(f"v{i} = {i} * 2.0 + 1" for i in range(3000))
    return json.dumps({"exercise": "03_a_neuron_by_hand", "cells": [cell] * 30}).encode()


def post(url: str, token: str, body: bytes, timeout: float = 60) -> tuple[int, float]:
    """(HTTP status, seconds) of one check; status 0: no answer (with the error's name)."""
    request = urllib.request.Request(
        f"{url}api/check", data=body, headers={"Authorization": f"token {token}"}, method="POST"
    )
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:
        status = 0
    return status, time.perf_counter() - start


def honest_phase(
    url: str, tokens: dict[str, str], until: float
) -> tuple[list[float], Counter[int]]:
    """Every honest learner checks until `until`: answered checks' seconds, statuses."""
    body = json.dumps(check_request(0)).encode()
    seconds: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def learner(token: str) -> None:
        while time.monotonic() < until:
            status, took = post(url, token, body, timeout=DEFAULT_TIMEOUT)  # the kernel's
            with lock:
                statuses[status] += 1
                if status == 200:
                    seconds.append(took)
            time.sleep(THINK)

    threads = [threading.Thread(target=learner, args=(t,)) for t in tokens.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seconds, statuses


# --- the attacks (run in a process of their own) ---------------------------------------


def heavy(url: str, token: str, until: float, got: Counter[str]) -> None:
    body = heavy_check()
    while time.monotonic() < until:
        status, _ = post(url, token, body, timeout=max(1.0, until - time.monotonic()))
        got[f"heavy {status}"] += 1
        if status != 200:
            time.sleep(0.2)  # refused: try again soon (a real attacker would)


def unauthenticated(port: int, until: float, got: Counter[str]) -> None:
    head = (
        "POST /services/checks/api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Length: {4 << 20}\r\n\r\n"
    ).encode()
    body = b"x" * (4 << 20)
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                connection.sendall(head)
                try:
                    connection.sendall(body)
                except OSError:
                    got["4 MB body cut short"] += 1
                answer = connection.recv(64)
                got[f"unauthenticated {answer[9:12].decode() or 'closed'}"] += 1
        except OSError as error:
            got[f"unauthenticated {type(error).__name__}"] += 1


def idle(port: int, until: float, got: Counter[str]) -> None:
    """Keep IDLE connections each in the middle of its headers, reopening closed ones."""
    half = b"POST /services/checks/api/check HTTP/1.1\r\nHost: 127"
    held: dict[int, socket.socket] = {}
    watch = select.poll()
    while time.monotonic() < until:
        while len(held) < IDLE and time.monotonic() < until:
            try:
                made = socket.create_connection(("127.0.0.1", port), timeout=5)
                made.sendall(half)
            except OSError:
                got["idle connect failed"] += 1
                break
            held[made.fileno()] = made
            watch.register(made, select.POLLIN)
        got["idle max held"] = max(got["idle max held"], len(held))
        for fd, _ in watch.poll(500):  # readable: closed by the service (nothing else comes)
            watch.unregister(fd)
            held.pop(fd).close()
            got["idle closed by the service"] += 1
    for connection in held.values():
        connection.close()


def made_up(url: str, until: float, got: Counter[str], fresh: bool) -> None:
    token = secrets.token_hex(16)
    while time.monotonic() < until:
        status, _ = post(url, secrets.token_hex(16) if fresh else token, b"{}", timeout=10)
        got[f"made-up {'fresh' if fresh else 'repeated'} {status}"] += 1


ATTACKS = ("heavy", "unauthenticated", "idle", "made-up")


def attack(
    url: str,
    port: int,
    tokens: dict[str, str],
    seconds: float,
    out: Any,
    attacks: tuple[str, ...] = ATTACKS,
) -> None:
    """The `attacks` at once for `seconds`; puts what each got on `out`."""
    until = time.monotonic() + seconds
    got: Counter[str] = Counter()
    threads = {
        "heavy": [
            threading.Thread(target=heavy, args=(url, tokens[n], until, got)) for n in HOSTILE
        ],
        "unauthenticated": [
            threading.Thread(target=unauthenticated, args=(port, until, got))
            for _ in range(UNAUTHENTICATED)
        ],
        "idle": [threading.Thread(target=idle, args=(port, until, got))],
        "made-up": [
            threading.Thread(target=made_up, args=(url, until, got, fresh))
            for fresh in (False, True)
        ],
    }
    jobs = [job for name in attacks for job in threads[name]]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    out.put(dict(got))


# --- measuring the service -------------------------------------------------------------


def service_processes(hub: CheckHub) -> tuple[int, list[int]]:
    """The service's first process and its judges."""
    parents = process_tree.parents()
    for pid in process_tree.descendants(hub.process.pid, parents):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"checks.server" in command and parents.get(pid) == hub.process.pid:
            return pid, [p for p, parent in parents.items() if parent == pid]
    raise SystemExit("no check service running")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


class Memory:
    """The service's memory (its first process; its judges together), sampled."""

    def __init__(self, hub: CheckHub) -> None:
        self.hub = hub
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample)

    def now(self) -> tuple[float, float]:
        first, judges = service_processes(self.hub)
        return rss_mb(first), sum(rss_mb(p) for p in judges)

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            self.samples.append(self.now())

    def __enter__(self) -> Memory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def hub_questions(hub: CheckHub) -> int:
    return hub.log(whole=True).count("GET /hub/api/user (")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=40, help="of the attack phase")
    parser.add_argument(
        "--attacks",
        nargs="+",
        choices=ATTACKS,
        default=list(ATTACKS),
        help="which attacks run (default: all at once); one alone shows what it costs",
    )
    args = parser.parse_args()
    honest = [f"h{i:02d}" for i in range(args.honest)]
    with tempfile.TemporaryDirectory(prefix="check-attacks-") as folder:
        hub = CheckHub.start(Path(folder) / "hub", honest + HOSTILE, file_limit=FILE_LIMIT)
        try:
            url, port = hub.direct_checks_url, hub.service_port
            first, _ = service_processes(hub)
            honest_tokens = {n: hub.tokens[n] for n in honest}
            honest_phase(url, honest_tokens, time.monotonic() + 3)  # tokens known, warm
            before = Memory(hub).now()
            base_cpu = cpu_seconds(first), cpu_seconds(hub.process.pid)
            alone, alone_statuses = honest_phase(
                url, honest_tokens, time.monotonic() + args.seconds / 2
            )
            alone_cpu = cpu_seconds(first) - base_cpu[0], cpu_seconds(hub.process.pid) - base_cpu[1]
            asked_before = hub_questions(hub)
            out: Any = multiprocessing.get_context("fork").Queue()
            attacker = multiprocessing.get_context("fork").Process(
                target=attack, args=(url, port, hub.tokens, args.seconds, out, tuple(args.attacks))
            )
            start_cpu = cpu_seconds(first), cpu_seconds(hub.process.pid)
            start_judges = sum(cpu_seconds(p) for p in service_processes(hub)[1])
            with Memory(hub) as memory:
                attacker.start()
                time.sleep(2)  # the attacks under way
                attacked, attacked_statuses = honest_phase(
                    url, honest_tokens, time.monotonic() + args.seconds - 4
                )
                judges_cpu = sum(cpu_seconds(p) for p in service_processes(hub)[1])
                got = out.get(timeout=args.seconds + 120)
                attacker_cpu = cpu_seconds(attacker.pid or 0)
                attacker.join(timeout=60)
                attack_cpu = (
                    cpu_seconds(first) - start_cpu[0],
                    cpu_seconds(hub.process.pid) - start_cpu[1],
                )
                asked = hub_questions(hub) - asked_before
                time.sleep(5)  # after: does it keep what it grew?
            after = memory.now()
        finally:
            hub.stop()
    print(f"{args.honest} honest learners checking (one every {THINK:g} s each), hub and "
          f"service limited to {FILE_LIMIT} open files, on {os.cpu_count()} cores:")  # fmt: skip
    print(f"  {summary('alone (baseline)', alone)}; not answered: {_failed(alone_statuses)}")
    print(f"  {summary('under attack', attacked)}; not answered: {_failed(attacked_statuses)}")
    print(f"  p95 under attack / alone: {p95(attacked) / p95(alone):.1f}x; goal p95 < {GOAL:g} s: "
          f"{'met' if p95(attacked) < GOAL else 'NOT met'}")  # fmt: skip
    described = {
        "heavy": f"{len(HOSTILE)} learners' 2 MB checks",
        "unauthenticated": f"{UNAUTHENTICATED} connections of 4 MB without a token",
        "idle": f"{IDLE} idle half-headers",
        "made-up": "made-up tokens",
    }
    print(f"attacks for {args.seconds:g} s ({', '.join(described[a] for a in args.attacks)}), "
          "what each got:")  # fmt: skip
    for what, count in sorted(got.items()):
        print(f"  {what}: {count}")
    made_up_requests = sum(n for w, n in got.items() if w.startswith("made-up"))
    print(f"  the hub asked about a token {asked} times for {made_up_requests} requests with "
          "made-up tokens (and the honest ones' tokens once a minute)")  # fmt: skip
    peak_first = max(s[0] for s in memory.samples)
    peak_judges = max(s[1] for s in memory.samples)
    print(f"service memory (MB RSS; first process / judges together): before {before[0]:.0f} / "
          f"{before[1]:.0f}, peak under attack {peak_first:.0f} / {peak_judges:.0f}, "
          f"5 s after {after[0]:.0f} / {after[1]:.0f}")  # fmt: skip
    per_second = [c / (args.seconds / 2) for c in alone_cpu]
    under = [c / args.seconds for c in attack_cpu]
    print(f"CPU s per s (service's first process, hub): alone {per_second[0]:.2f}, "
          f"{per_second[1]:.2f}; under attack {under[0]:.2f}, {under[1]:.2f}; the judges "
          f"there now (replaced ones not counted) "
          f"{(judges_cpu - start_judges) / args.seconds:.2f}, "
          f"the attacking process {attacker_cpu / args.seconds:.2f}; load average "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    return 0 if p95(attacked) < GOAL else 1


def _failed(statuses: Counter[int]) -> str:
    failed = {s: n for s, n in statuses.items() if s != 200}
    return ", ".join(f"{n} with {s or 'no answer'}" for s, n in sorted(failed.items())) or "none"


if __name__ == "__main__":
    raise SystemExit(main())
