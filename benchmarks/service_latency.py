"""Benchmark: how soon `autograder serve` grades a submission after it lands in submitted/.

Starts the warm grading service on a course of one assignment, submits the sample
learners' notebooks one at a time (copied into submitted/, as `nbgrader collect` or the
Assignments tab leaves them), and prints for each the seconds from the copy to the
service's "graded" line, and the worst of them (goal: within 3 s). The first submission
also pays the workers' cold start and is shown apart. Scores are checked against
instructor/sample_class/expected_grades.csv.

    python benchmarks/service_latency.py --submissions 5
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"

from autograder.sample_class import SAMPLE_CLASS, expected_scores, make_course  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=5, help="timed submissions")
    args = parser.parse_args()
    samples = [p for p in sorted(SAMPLE_CLASS.iterdir()) if (p / ASSIGNMENT).is_dir()]
    expected = expected_scores()
    with tempfile.TemporaryDirectory(prefix="service-bench-") as tmp:
        course = make_course(Path(tmp) / "course", [ASSIGNMENT])
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        service = subprocess.Popen(
            [str(BIN / "autograder"), "serve", "--course-dir", str(course)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert service.stdout is not None
        stdout = service.stdout
        threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
        latencies: list[float] = []
        wrong: list[str] = []
        try:
            for i in range(args.submissions + 1):
                sample = samples[i % len(samples)]
                student = f"s{i:03d}"
                target = course / "submitted" / student / ASSIGNMENT
                shutil.copytree(sample / ASSIGNMENT, target.with_suffix(".part"))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.with_suffix(".part").rename(target)  # appears whole, at once
                submitted = time.perf_counter()
                while True:
                    try:
                        line = lines.get(timeout=120)
                    except queue.Empty:
                        sys.exit(f"no answer from the service for {student} within 120 s")
                    if f"{student}/{ASSIGNMENT}" in line:
                        break
                seconds = time.perf_counter() - submitted
                if not line.startswith("graded"):
                    sys.exit(f"the service did not grade {student}: {line.strip()}")
                score = float(line.split()[2].split("/")[0])
                if score != expected[(sample.name, ASSIGNMENT)]:
                    wrong.append(f"{student} ({sample.name}): {score}")
                if i == 0:
                    print(f"first submission (workers start cold): {seconds:.2f} s")
                else:
                    latencies.append(seconds)
                    print(f"submission {i}: graded {seconds:.2f} s after it landed")
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=60)
        worst = max(latencies)
        print(
            f"warm service: mean {sum(latencies) / len(latencies):.2f} s, worst {worst:.2f} s "
            f"(goal: within 3 s)   scores as expected: {not wrong}"
        )
        for entry in wrong:
            print(f"  unexpected score: {entry}")
        return 0 if worst <= 3 and not wrong and service.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
