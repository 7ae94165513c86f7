"""Benchmark: the deadline rush, many hand-ins at once to `autograder serve --release-feedback`.

A course of one assignment with its nbgrader exchange in a temporary folder; `--hand-ins`
students (s000, s001, ..., in the gradebook) each hand in once, evenly spread over
`--within` seconds, through the real exchange: each hand-in is placed in `inbound/` as
`nbgrader submit` places it (a folder `<student>+<assignment>+<timestamp>+<random>` with
the notebooks, then `timestamp.txt`, then `submission_secret.txt`; running `nbgrader
submit` itself 200 times in a minute would need more cores than it measures). Each
student's notebook is one of the sample class's profiles answered with that student's own
numbers, so each score is checked. Prints the CPU seconds a hand-in cost the service's own
processes (the grader, its sandboxed workers, the feedback processes and every child they
reaped: other engineers' work on a shared machine is not counted, unlike the machine's
busy cores, also printed), p50/p95/max seconds from each hand-in (its last
file written) to the service's `graded` line and to its `feedback ... released` line, and
how many hand-ins were lost (never graded, or graded with an unexpected score).
Goal: p95 under 10 s from hand-in to graded and to feedback released. Exit 0 when both are
met, with none lost.

`--profile N` first measures, on N hand-ins and one stage at a time in this process, where
each hand-in's time goes: collection from the exchange, preparation (read and sanitise),
the sandboxed run, nbgrader's recording (Autograde converter, gradebook), feedback
generation (nbconvert HTML) and release; it prints seconds per hand-in for each stage and
the rate the machine's cores could sustain.

`--busy N` keeps N other processes spinning on the CPU from before the service starts to
the end, or through the first `--busy-for` seconds of the rush (a machine already busy
when the rush comes).

    python benchmarks/deadline_rush.py --hand-ins 200 --within 60
    python benchmarks/deadline_rush.py --hand-ins 200 --within 60 --busy 2 --busy-for 20
    python benchmarks/deadline_rush.py --profile 20 --hand-ins 0
"""

from __future__ import annotations

import argparse
import atexit
import base64
import dataclasses
import datetime
import importlib.util
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"
GOAL = 10.0  # seconds, p95 from hand-in to graded and to feedback released (issue 17)
PROFILES = ("ada", "ben", "dee")  # right, wrong, blank

from autograder.authoring.sample_class import (  # noqa: E402
    expected_scores,
    released_through_exchange,
)
from autograder.core.givens import COURSE_ID  # noqa: E402

GRADED = re.compile(rf"^graded (\S+)/{ASSIGNMENT} (\S+)/")
RELEASED = re.compile(rf"^feedback (\S+)/{ASSIGNMENT}: released")
FAILED = re.compile(rf"^(FAILED|REFUSED)\W.*?(s\d+)\S*{ASSIGNMENT}")


def answered_notebooks(students: list[str], into: Path) -> dict[str, Path]:
    """Each student's notebook: a profile (round-robin) answered with their own numbers."""
    spec = importlib.util.spec_from_file_location(
        "make_sample_class", REPO / "tools" / "make_sample_class.py"
    )
    assert spec is not None and spec.loader is not None
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    release = nbformat.read(REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    profiles = {s.name: s for s in sample.STUDENTS}
    paths = {}
    for i, student in enumerate(students):
        profile = profiles[PROFILES[i % len(PROFILES)]]
        notebook = sample.submission(
            release, ASSIGNMENT, dataclasses.replace(profile, name=student)
        )
        paths[student] = into / f"{student}.ipynb"
        nbformat.write(notebook, paths[student])
    return paths


def hand_in(inbound: Path, student: str, notebook: Path) -> float:
    """Place one hand-in as `nbgrader submit` does; when its last file was written."""
    now = datetime.datetime.now(datetime.UTC)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f %Z")
    random = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")  # as nbgrader's
    folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+{random}"
    folder.mkdir()
    shutil.copy(notebook, folder / f"{ASSIGNMENT}.ipynb")
    (folder / "timestamp.txt").write_text(stamp)
    (folder / "submission_secret.txt").write_text(secrets.token_hex(64))
    return time.perf_counter()


def cpu_times() -> tuple[float, float, float]:
    """The machine's (busy, idle, stolen) CPU seconds since boot, all cores (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    stolen = fields[7] if len(fields) > 7 else 0  # the hypervisor's, for other machines
    return (sum(fields[:8]) - idle - stolen) / tick, idle / tick, stolen / tick


def quantile(values: list[float], share: float) -> float:
    """The value `share` of the way up `values` sorted (inf when there is none)."""
    ordered = sorted(values)
    return ordered[round(share * (len(ordered) - 1))] if ordered else float("inf")


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    p50, p95, top = (quantile(values, share) for share in (0.5, 0.95, 1.0))
    return f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {top:.2f} s"


def add_students(course: Path, students: list[str]) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        for student in students:
            gb.update_or_create_student(student)


def place_hand_ins(inbound: Path, notebooks: dict[str, Path]) -> None:
    for student, notebook in notebooks.items():
        hand_in(inbound, student, notebook)


def cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by process `pid` and every process under it."""
    return sum(cpu_parts(pid).values())


def cpu_parts(pid: int) -> dict[str, float]:
    """CPU seconds used so far by process `pid` and every process under it (and every
    child they reaped), by part: the process itself, and each kind of child under it
    (sandboxed workers, feedback processes)."""
    import psutil

    root = psutil.Process(pid)
    parts: dict[str, float] = {}
    for child in [root, *root.children()]:
        try:
            command = " ".join(child.cmdline())
            tree = [child] if child is root else [child, *child.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        part = (
            "the service itself"
            if child is root
            else "feedback processes"
            if "release_feedback" in command
            else "sandboxed workers"
            if "sandbox" in command or "bwrap" in command
            else "other children"
        )
        for process in tree:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            used = times.user + times.system + times.children_user + times.children_system
            parts[part] = parts.get(part, 0.0) + used
    return parts


def profile(count: int, root: Path) -> None:
    """Seconds per hand-in in each stage of the service, measured one stage at a time
    (CPU seconds where the machine's load would blur wall-clock ones)."""
    import cProfile
    import pstats

    from autograder.grading.runner import Grader
    from autograder.sandbox.workers import Sandbox, Worker, load_config, worker_log_dir
    from autograder.service.collect import ExchangeCollector
    from autograder.service.release_feedback import Releaser

    students = [f"p{i:03d}" for i in range(count + 1)]  # the first warms up, uncounted
    course, exchange = released_through_exchange(root, ASSIGNMENT)
    add_students(course, students)
    notebooks = answered_notebooks(students, root)
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    place_hand_ins(exchange / COURSE_ID / "inbound", notebooks)
    figures: list[tuple[str, float]] = []
    collector = ExchangeCollector(load_config(course), lambda: {ASSIGNMENT})
    collector.look()  # new folders are first seen, then collected on the next look
    started = time.thread_time()
    collector.look()
    collecting = (time.thread_time() - started) * count / (count + 1)
    figures.append(("collect from the exchange", collecting))
    worker = Worker(Sandbox(config=load_config(course)), worker_log_dir(course))
    worker.start()  # warm, as in the service before a deadline
    assert worker.process is not None
    releaser = Releaser(course)
    warm = Grader(course, students=students[:1], jobs=1, workers=[worker], persistent=True)
    for outcome in warm.run():
        releaser.api.generate_feedback(ASSIGNMENT, outcome.submission.student, force=True)
    grader = Grader(course, students=students[1:], jobs=1, workers=[worker], persistent=True)
    profiler = cProfile.Profile(time.thread_time)
    worker_cpu = cpu_seconds(worker.process.pid)
    started = time.perf_counter()
    profiler.enable()
    outcomes = list(grader.run())
    profiler.disable()
    grading = time.perf_counter() - started
    worker_cpu = cpu_seconds(worker.process.pid) - worker_cpu
    stats = pstats.Stats(profiler)
    if os.environ.get("DEADLINE_RUSH_PSTATS"):
        stats.dump_stats(os.environ["DEADLINE_RUSH_PSTATS"])
    cumulative = {
        (Path(file).name, name): entry[3]
        for (file, _, name), entry in stats.stats.items()  # type: ignore[attr-defined]
    }

    def spent(file: str, name: str) -> float:
        return float(sum(v for (f, n), v in cumulative.items() if f == file and n == name))

    figures += [
        ("grading's wall clock (1 worker)", grading),
        ("the grader's thread", spent("runner.py", "run")),
        ("  discover (fingerprints)", spent("discovery.py", "discover")),
        ("  prepare (read, sanitise)", spent("preparation.py", "prepare")),
        ("  judge (trusted verdicts)", spent("trusted.py", "verdicts")),
        ("  record (nbgrader Autograde, gradebook)", spent("recording.py", "record")),
        ("the sandboxed run (worker processes)", worker_cpu),
    ]
    graded = [o for o in outcomes if o.status == "graded"]
    generate = release = 0.0
    for outcome in graded:
        sub = outcome.submission
        started = time.thread_time()
        result = releaser.api.generate_feedback(sub.assignment, sub.student, force=True)
        generate += time.thread_time() - started
        assert result.get("success"), result
        started = time.thread_time()
        releaser.api.release_feedback(sub.assignment, sub.student)
        release += time.thread_time() - started
    figures.append(("feedback: generate (nbconvert HTML)", generate))
    figures.append(("feedback: release to the exchange", release))
    grader.close(now=True)
    warm.close(now=True)
    load = os.getloadavg()[0]
    print(f"profile of {len(graded)}/{count} hand-ins graded (load {load:.1f}); per hand-in,")
    print("CPU seconds (wall-clock where said):")
    for label, seconds in figures:
        print(f"  {label:42} {seconds / count:6.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--hand-ins", type=int, default=200)
    parser.add_argument("--within", type=float, default=60.0, help="seconds")
    parser.add_argument("--wait", type=float, default=900.0, help="seconds after the last")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="stage times first")
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="N processes spin on the CPU from before the service starts (a machine busy "
        "with other work when the rush comes)",
    )
    parser.add_argument(
        "--busy-for",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the spinning ends this long after the first hand-in (default: at the end)",
    )
    args = parser.parse_args()
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="deadline-rush-profile-") as tmp:
            profile(args.profile, Path(tmp))
    if not args.hand_ins:
        return 0
    students = [f"s{i:03d}" for i in range(args.hand_ins)]
    expected_of = expected_scores()
    expected = {
        s: expected_of[(PROFILES[i % len(PROFILES)], ASSIGNMENT)] for i, s in enumerate(students)
    }
    with tempfile.TemporaryDirectory(prefix="deadline-rush-") as tmp:
        course, exchange = released_through_exchange(Path(tmp), ASSIGNMENT)
        add_students(course, students)
        notebooks = answered_notebooks(students, Path(tmp))
        inbound = exchange / COURSE_ID / "inbound"
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        spinners = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
        ]

        def stop_spinning() -> None:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
            spinners.clear()

        atexit.register(stop_spinning)  # however it ends
        command = [str(BIN / "autograder"), "serve", "--course-dir", str(course)]
        service = subprocess.Popen(
            [*command, "--release-feedback"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        lines: queue.Queue[tuple[float, str]] = queue.Queue()
        assert service.stdout is not None
        stdout = service.stdout

        def read() -> None:
            for line in stdout:
                lines.put((time.perf_counter(), line.rstrip("\n")))

        threading.Thread(target=read, daemon=True).start()
        while True:  # ready: workers warm, as before a class's deadline
            _, line = lines.get(timeout=300)
            if line.startswith("serving"):
                break
        handed: dict[str, float] = {}
        graded: dict[str, tuple[float, float]] = {}
        released: dict[str, float] = {}
        failed: dict[str, str] = {}
        printed_lines: list[str] = []

        def drain(until: float) -> None:
            while time.perf_counter() < until:
                try:
                    printed, line = lines.get(timeout=max(0.01, until - time.perf_counter()))
                except queue.Empty:
                    return
                printed_lines.append(line)
                if found := GRADED.match(line):
                    graded[found[1]] = (printed, float(found[2]))
                elif found := RELEASED.match(line):
                    released[found[1]] = printed
                elif found := FAILED.match(line):
                    failed[found[2]] = line

        start = time.perf_counter()
        load_at_start = os.getloadavg()[0]
        cpu_at_start = cpu_times()
        service_cpu = cpu_parts(service.pid)
        try:
            for i, student in enumerate(students):
                drain(start + i * args.within / len(students))
                handed[student] = hand_in(inbound, student, notebooks[student])
                if args.busy_for and time.perf_counter() - start > args.busy_for:
                    stop_spinning()
            spread = time.perf_counter() - start
            load_after_spread = os.getloadavg()[0]
            deadline = time.perf_counter() + args.wait
            while len(released) + len(failed) < len(students) and time.perf_counter() < deadline:
                drain(min(deadline, time.perf_counter() + 1.0))
            rush = time.perf_counter() - start
            busy, idle, stolen = (b - a for a, b in zip(cpu_at_start, cpu_times(), strict=True))
            service_cpu = {
                part: used - service_cpu.get(part, 0.0)
                for part, used in cpu_parts(service.pid).items()
            }
        finally:
            stop_spinning()
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=120)
    to_graded = [graded[s][0] - handed[s] for s in students if s in graded]
    to_released = [released[s] - handed[s] for s in students if s in released]
    wrong = [s for s in students if s in graded and graded[s][1] != expected[s]]
    lost = [s for s in students if s not in graded] + wrong
    if args.busy:
        until = f"the first {args.busy_for:g} s of the rush" if args.busy_for else "the end"
        print(
            f"{args.busy} other processes spun on the CPU from before the service started "
            f"to {until}"
        )
    print(
        f"{len(students)} hand-ins placed in {spread:.1f} s through the exchange (1-minute "
        f"load average: {load_at_start:.1f} at the start, {load_after_spread:.1f} after the "
        f"last hand-in, {os.getloadavg()[0]:.1f} at the end)"
    )
    print(
        f"the machine over those {rush:.0f} s, to the last feedback: {busy / rush:.2f} of "
        f"{os.cpu_count()} cores busy ({busy / len(students):.2f} CPU-s a hand-in), "
        f"{idle / rush:.2f} idle, {stolen / rush:.2f} taken by the hypervisor"
    )
    used = sum(service_cpu.values())
    print(
        f"the service's own processes (grader, workers, feedback; not the rest of the "
        f"machine): {used:.1f} CPU-s, {used / len(students):.3f} CPU-s a hand-in ("
        + ", ".join(f"{part} {v / len(students):.3f}" for part, v in service_cpu.items())
        + ")"
    )
    print(f"hand-in to graded:           {percentiles(to_graded)}  (goal: p95 under {GOAL:g} s)")
    print(f"hand-in to feedback released: {percentiles(to_released)}  (goal: the same)")
    print(
        f"lost: {len(lost)} (never graded: {len(students) - len(graded)}, unexpected score: "
        f"{len(wrong)}); feedback not released: {len(students) - len(released)}"
    )
    for student, line in sorted(failed.items())[:10]:
        print(f"  {student}: {line}")
    if lost:
        print("the service's last lines:", *printed_lines[-15:], sep="\n  ")
    met = all(quantile(times, 0.95) < GOAL for times in (to_graded, to_released))
    return 0 if met and not lost and len(released) == len(students) else 1


if __name__ == "__main__":
    sys.exit(main())
