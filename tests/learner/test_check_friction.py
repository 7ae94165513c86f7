"""Issue 25's friction: a slow check says it is working, and a check that runs the
learner's function shows PyTorch's warnings in one plain line, without its internal path."""

from __future__ import annotations

import os
import warnings
from queue import Empty
from typing import Any

import pytest
import stall_guard

from autograder.learner.check import AnswerMismatch, Exercise
from autograder.learner.kernel import WORKING, working

MECHANICS = "05_three_mechanics"


def test_a_check_that_takes_long_says_it_is_working(capsys: pytest.CaptureFixture[str]) -> None:
    with working(after=0.0) as shown:
        # the line is out before the check's work ends, however slow (this process works)
        stall_guard.wait_until(shown.is_set, "the working line", [stall_guard.cpu_of(os.getpid())])
    assert WORKING in capsys.readouterr().out


def test_a_quick_or_graded_check_says_nothing_more(capsys: pytest.CaptureFixture[str]) -> None:
    with working(after=3600.0) as shown:
        pass
    with working(after=0.0, quiet=True) as quiet:
        pass
    assert not shown.is_set() and not quiet.is_set()
    assert WORKING not in capsys.readouterr().out


def test_pytorchs_warning_reaches_the_learner_without_its_internal_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import torch

    def grad_of_intermediate(x0: float) -> Any:  # Part J without y.retain_grad()
        x = torch.tensor(float(x0), requires_grad=True)
        y = x**3
        z = y * y
        z.backward()
        return y.grad

    exercise = Exercise(MECHANICS)
    namespace = {"__name__": "__main__", "grad_of_intermediate": grad_of_intermediate}
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        with pytest.raises(AnswerMismatch):
            exec("exercise.check_function('grad_of_intermediate')",
                 {**namespace, "exercise": exercise})  # fmt: skip
    assert not escaped, [str(w.message) for w in escaped]
    printed = capsys.readouterr()
    assert "retain_grad()" in printed.out, printed.out  # PyTorch's advice, kept
    assert "Triggered internally" not in printed.out + printed.err
    assert printed.out.count("PyTorch warned") == 1


@pytest.mark.processes
def test_in_a_notebook_the_working_line_is_emptied_when_the_check_ends() -> None:
    """A real kernel: the line is a display the kernel shows, then empties (no cell keeps
    it, and a cell's printed text is the verdict alone)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        code = (
            "import threading\nfrom autograder.learner.kernel import working\n"
            "with working(after=0.0) as shown:\n    shown.wait()\nprint('verdict')"
        )
        msg_id = client.execute(code)
        kinds: list[tuple[str, str]] = []
        watch = stall_guard.Watch(
            "the kernel's check", [stall_guard.cpu_of(manager.provisioner.pid)]
        )
        while True:
            try:
                msg = client.get_iopub_msg(timeout=stall_guard.POLL_SECONDS)
            except Empty:
                watch.check()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("display_data", "update_display_data"):
                kinds.append((kind, content["data"]["text/plain"]))
            elif kind == "stream":
                kinds.append((kind, content["text"]))
            elif kind == "status" and content["execution_state"] == "idle":
                break
        assert kinds == [
            ("display_data", WORKING), ("update_display_data", ""), ("stream", "verdict\n")
        ], kinds  # fmt: skip
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _run(client: Any, code: str) -> tuple[str, list[str]]:
    """A cell run in a real kernel: its reply's status, and the errors it showed."""
    msg_id = client.execute(code)
    errors: list[str] = []
    while True:
        msg = client.get_iopub_msg(timeout=300)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            errors.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:
        reply = client.get_shell_msg(timeout=300)
        if reply["parent_header"].get("msg_id") == msg_id:
            return str(reply["content"]["status"]), errors


@pytest.mark.processes
def test_in_a_notebook_a_cross_is_an_error_that_does_not_stop_run_all() -> None:
    """A real kernel: a ✗ is shown as AnswerMismatch's error, but the cell ends "ok" (a
    front end's Run All goes on; tests/browser/test_run_all_in_browser.py runs one); while
    nbgrader executes the notebook (autograde, validate) the ✗ is raised, as before."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        cross = (
            "from autograder.learner.kernel import fail\nfail('✗ h = 1.0, but PyTorch gives 2.0')"
        )
        status, errors = _run(client, cross)
        assert status == "ok", errors
        assert errors == ["AnswerMismatch: ✗ h = 1.0, but PyTorch gives 2.0"]
        for execution in ("autograde", "validate"):
            _run(client, f"import os\nos.environ['NBGRADER_EXECUTION'] = {execution!r}")
            status, errors = _run(client, cross)
            assert status == "error" and errors == [
                "AnswerMismatch: ✗ h = 1.0, but PyTorch gives 2.0"
            ], (execution, status, errors)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_outside_a_kernel_a_cross_is_raised() -> None:
    from autograder.learner.kernel import fail

    with pytest.raises(AnswerMismatch, match="✗ wrong"):
        fail("✗ wrong")
