"""Releasing learners' feedback from a warm process, for `autograder serve --release-feedback`.

`python -m autograder.service.release_feedback COURSE_DIR` imports nbgrader once, then for
each request line `{"assignment": ..., "student": ...}` on stdin runs nbgrader's own
generate_feedback (forced: the submission was just regraded) and release_feedback for that
learner, through `NbGraderAPI` as formgrader does, checks that every page is in the exchange
where `nbgrader fetch_feedback` looks, and answers one line: `{"ok": true, "pages": N}` or
`{"ok": false, "reason": "..."}`. Each learner's feedback then costs its own work, not two
nbgrader start-ups nor a compilation of nbconvert's templates (compiled once, at start:
`feedback_exporter.warm_up`), nor a new gradebook engine for each query: the process shares
one (`nbgrader_internals.shared_gradebook_work`, made before the first learner, so every
child starts with its tables checked). Rendering runs in a child forked from this warm
process (`Renderer`: one child renders learner after learner, warm) and is killed past
`Budgets.max_render_seconds`: one slow notebook is that learner's failure, never a
stalled queue. The process runs at a lower CPU priority
(`NICENESS`) than the grading service: on a machine of few cores, in a rush of hand-ins,
grading goes first and feedback uses what is left, so it can fall behind but never holds
grading back."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

NICENESS = 5  # added to the service's nice value: lower priority, never starved


class FeedbackError(Exception):
    """Feedback that could not be generated or released; the text says why."""


def released_pages(coursedir: Any, outbound: Path, assignment: str, student: str) -> int:
    """How many of the learner's feedback pages are in the exchange's `outbound` folder as
    generated; FeedbackError naming one that is missing or differs."""
    from nbgrader.utils import notebook_hash

    folder = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
    pages = sorted(folder.glob("*.html"))
    if not pages:
        raise FeedbackError(f"no feedback page in {folder}")
    secret = (folder / "submission_secret.txt").read_text()
    for page in pages:
        released = outbound / f"{notebook_hash(secret=secret, notebook_id=page.stem)}.html"
        if not released.is_file() or released.read_bytes() != page.read_bytes():
            raise FeedbackError(f"{page.name} is not in the exchange ({released})")
    return len(pages)


RENDERS_PER_CHILD = 200
"""Requests a renderer child answers before a fresh one is forked (none grows for long)."""


class Renderer:
    """A child forked from this warm process that runs `work(request)` for one request after
    another, each within its budget: what a page warms (lexers, regular expressions, the
    gradebook's compiled statements) stays warm for the next learner, where a child per
    learner began cold each time (about 0.2 CPU-s a page). A request past its budget, or a
    child that dies, is that request's FeedbackError, the child killed; the next request
    forks a fresh one from the warm parent, as does every RENDERS_PER_CHILD-th."""

    def __init__(self, work: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.work = work
        self.pid: int | None = None
        self.to_child = self.from_child = -1
        self.answered = 0

    def _fork(self) -> None:
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: answer each request line, never return
            from autograder.sandbox.isolation import PR_SET_PDEATHSIG, libc

            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # never outlives its parent
            if os.getppid() != parent:  # it died before the line above
                os._exit(0)
            os.close(requests_write)
            os.close(answers_read)
            try:
                self._serve(requests_read, answers_write)
            finally:
                os._exit(0)
        os.close(requests_read)
        os.close(answers_write)
        self.pid, self.to_child, self.from_child = pid, requests_write, answers_read
        self.answered = 0

    def _serve(self, requests_fd: int, answers_fd: int) -> None:
        with os.fdopen(requests_fd, "rb") as requests, os.fdopen(answers_fd, "wb", 0) as answers:
            for line in requests:
                try:
                    result = json.dumps(self.work(json.loads(line)))
                except BaseException as error:  # reported to the parent, whatever it was
                    error_text = f"{type(error).__name__}: {error}"
                    result = json.dumps({"success": False, "error": error_text})
                answers.write(result.encode() + b"\n")

    def ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The child's answer to `request` (FeedbackError past `seconds`, or if it died)."""
        if self.pid is None:
            self._fork()
        os.write(self.to_child, json.dumps(request).encode() + b"\n")
        chunks: list[bytes] = []
        deadline = time.monotonic() + seconds
        while not chunks or not chunks[-1].endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise FeedbackError(
                    f"rendering took over {seconds:g} s, the budget (c.Budgets.max_render_seconds)"
                )
            ready, _, _ = select.select([self.from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                self.stop()
                raise FeedbackError("the rendering process ended without an answer")
            chunks.append(chunk)
        self.answered += 1
        if self.answered >= RENDERS_PER_CHILD:
            self.stop()
        try:
            answer: dict[str, Any] = json.loads(b"".join(chunks))
        except ValueError:
            raise FeedbackError("the rendering process gave no answer it could read") from None
        return answer

    def stop(self) -> None:
        """End the child (idle, or past its budget) and reap it."""
        if self.pid is None:
            return
        os.close(self.to_child)
        os.close(self.from_child)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.pid = None


def within_budget(seconds: float, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`work()`'s JSON result, computed in a forked child that is killed after `seconds`
    (FeedbackError saying so); the child's crash is reported the same way."""
    renderer = Renderer(lambda request: work())
    try:
        return renderer.ask({}, seconds)
    finally:
        renderer.stop()


def failure(step: str, result: dict[str, Any]) -> FeedbackError:
    """Why nbgrader's `step` failed, from its captured log or traceback."""
    lines = (result.get("error") or result.get("log") or "").strip().splitlines()
    errors = [line for line in lines if "ERROR" in line or "CRITICAL" in line]
    return FeedbackError(f"{step}: {(errors or lines or ['no reason given'])[-1].strip()}")


class Releaser:
    """nbgrader's feedback commands for one course, loaded once."""

    def __init__(self, course: Path) -> None:
        from nbgrader.api import Gradebook
        from nbgrader.apps.api import NbGraderAPI

        from autograder.grading.budgets import Budgets
        from autograder.nbgrader_plugins.feedback_exporter import warm_up
        from autograder.sandbox.workers import load_config
        from autograder.service.collect import ExchangeCollector

        config = load_config(course)
        self.render_seconds = float(Budgets(config=config).max_render_seconds)
        exchange = ExchangeCollector(config, lambda: set())  # for its paths alone
        self.coursedir = exchange.coursedir
        self.outbound = exchange.inbound.parent / "feedback"
        self.api = NbGraderAPI(coursedir=self.coursedir, config=config)
        warm_up(config)  # every renderer child starts with the compiled templates
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id):
            pass  # its engine made and its tables checked once, before the first child
        self.renderer = Renderer(self._generate)

    def __enter__(self) -> Releaser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the renderer child. A child left behind keeps a copy of every descriptor the
        parent had when it forked (a pipe another process waits to see closed, say)."""
        self.renderer.stop()

    def _generate(self, request: dict[str, Any]) -> dict[str, Any]:
        """nbgrader's generate_feedback for one learner (in the renderer child)."""
        api = self.api
        return dict(api.generate_feedback(request["assignment"], request["student"], force=True))

    def release(self, assignment: str, student: str) -> int:
        """Generate and release one learner's feedback; the pages released."""
        result = self.renderer.ask(
            {"assignment": assignment, "student": student}, self.render_seconds
        )
        if not result.get("success"):
            raise failure("generate_feedback", result)
        result = self.api.release_feedback(assignment, student)
        if not result.get("success"):
            raise failure("release_feedback", result)
        return released_pages(self.coursedir, self.outbound, assignment, student)


def main() -> int:
    from autograder.grading.nbgrader_internals import shared_gradebook_work

    os.nice(NICENESS)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr  # anything nbgrader prints stays off the answers
    with shared_gradebook_work(), Releaser(Path(sys.argv[1]).resolve()) as releaser:
        serve_requests(releaser, answers)
    return 0


def serve_requests(releaser: Releaser, answers: Any) -> None:
    """Answer each request line on stdin on `answers`, until stdin ends."""
    answers.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            pages = releaser.release(request["assignment"], request["student"])
        except (FeedbackError, OSError) as error:
            answer: dict[str, Any] = {"ok": False, "reason": str(error)}
        except Exception as error:  # nbgrader's own failure: reported, the worker goes on
            answer = {"ok": False, "reason": f"{type(error).__name__}: {error}"}
        else:
            answer = {"ok": True, "pages": pages}
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    sys.exit(main())
