"""`autograder serve`: a real warm service grades each new submission, once per version."""

from __future__ import annotations

import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from autograder.sample_class import SAMPLE_CLASS, expected_scores, gradebook_scores, make_course
from autograder.sandbox import Sandbox, cgroup_bases

ASSIGNMENT = "03_a_neuron_by_hand"
BIN = Path(sys.executable).parent


def next_line(lines: queue.Queue[str], about: str) -> str:
    while True:
        line = lines.get(timeout=180)
        if about in line:
            return line


def test_the_service_grades_arrivals_and_resubmissions_once_each(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", [ASSIGNMENT])
    service = subprocess.Popen(
        [str(BIN / "autograder"), "serve", "--course-dir", str(course), "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert service.stdout is not None
    stdout = service.stdout
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []

    def read() -> None:
        for line in stdout:
            seen.append(line)
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        next_line(lines, "serving")
        arriving = course / "submitted" / "ada" / "arriving"  # not an assignment's name
        shutil.copytree(SAMPLE_CLASS / "ada" / ASSIGNMENT, arriving)
        arriving.rename(arriving.with_name(ASSIGNMENT))  # lands whole, at once
        first = next_line(lines, "ada/")
        assert first.startswith("graded ada/"), first
        assert (
            gradebook_scores(course)[("ada", ASSIGNMENT)] == expected_scores()[("ada", ASSIGNMENT)]
        )
        # A resubmission (the same work, saved again) is graded again.
        notebook = course / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        (tmp_path / "new").write_text(notebook.read_text() + " ")
        (tmp_path / "new").replace(notebook)
        again = next_line(lines, "ada/")
        assert again.startswith("graded ada/"), again
        assert (
            gradebook_scores(course)[("ada", ASSIGNMENT)] == expected_scores()[("ada", ASSIGNMENT)]
        )
        # A broken submission is reported once, not retried until it changes.
        broken = course / "submitted" / "cyd" / ASSIGNMENT
        broken.mkdir(parents=True)
        (broken / f"{ASSIGNMENT}.ipynb").write_text("{not json")
        failed = next_line(lines, "cyd/")
        assert failed.startswith("FAILED cyd/"), failed
    finally:
        service.send_signal(signal.SIGTERM)
        code = service.wait(timeout=60)
    assert code == 0, "".join(seen)
    assert sum("cyd/" in line for line in seen) == 1, "".join(seen)
    assert sum("ada/" in line for line in seen) == 2, "".join(seen)
    # The workers went with the service: their cgroups (made under ours) are gone.
    for base in cgroup_bases(Sandbox()).values():
        assert not list(base.glob(f"autograder-{service.pid}-*"))
