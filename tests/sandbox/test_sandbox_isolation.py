"""One notebook's process holds nothing of another student; nothing a notebook writes kills
its worker; cgroup v2 groups as this machine allows them.

The memory test grades two students, then, in the same worker, a notebook that reads every
readable byte of its own process (ctypes over /proc/self/maps) and counts the earlier
students' names, given numbers (as text and as doubles) and answer text. It must find
none of them, and must find its own (the scan works). The needles travel in the scanning
notebook shifted by one byte value, and each memory chunk is shifted the same way before
the search, so the needles themselves are never in its memory in plain form.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import stall_guard  # an honest notebook's wall time: only a hang reaches it

from autograder.sandbox.cgroups import (
    GRADER_LEAF,
    UNIFIED,
    check_cgroups,
    make_v2_groups,
    v1_mounted,
    v2_mount,
)
from autograder.sandbox.settings import Identity, Sandbox, SandboxUnavailable
from autograder.sandbox.workers import Worker

SHIFT = bytes((b + 1) % 256 for b in range(256))

SCAN = r"""
import ctypes, json
shift = bytes((b + 1) % 256 for b in range(256))
needles = {label: bytes.fromhex(text) for label, text in NEEDLES.items()}
found = dict.fromkeys(needles, 0)
scanned = 0
chunk_size, overlap = 1 << 23, 256
with open('/proc/self/maps') as maps:
    regions = [line.split() for line in maps]
for fields in regions:
    start, end = (int(x, 16) for x in fields[0].split('-'))
    name = fields[5] if len(fields) > 5 else ''
    if fields[1][0] != 'r' or name.startswith(('[vvar', '[vsyscall', '/dev/')):
        continue
    for at in range(start, end, chunk_size):
        chunk = ctypes.string_at(at, min(chunk_size + overlap, end - at)).translate(shift)
        scanned += len(chunk)
        for label, needle in needles.items():
            found[label] += chunk.count(needle)
        del chunk
print('SCAN ' + json.dumps({'scanned': scanned, 'found': found}))
"""


def shifted_hex(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return raw.translate(SHIFT).hex()


def student(name: str) -> dict[str, object]:
    """A student with a unique name, unique given numbers and a unique answer."""
    token = secrets.token_hex(8)
    return {
        "learner": f"learner-{name}-{token}",
        "givens": {
            "x": 7000 + secrets.randbelow(10**6) / 997.0,
            "w": -secrets.randbelow(10**6) / 8191.0,
        },
        "answer": f"answer_{name}_{secrets.token_hex(8)}",
    }


def needles_of(label: str, one: dict[str, object]) -> dict[str, str]:
    givens = one["givens"]
    assert isinstance(givens, dict)
    found = {f"{label} name": shifted_hex(str(one["learner"]))}
    found[f"{label} answer"] = shifted_hex(str(one["answer"]))
    for key, value in givens.items():
        found[f"{label} {key} as text"] = shifted_hex(repr(value))
        found[f"{label} {key} as double"] = shifted_hex(struct.pack("<d", value))
    return found


def cells_of(one: dict[str, object]) -> list[str]:
    return [
        "from autograder import Exercise\nx, w = Exercise('e').given('x', 'w')",
        f"answer = {str(one['answer'])!r}\nprint(answer, x * w)",
    ]


@pytest.mark.processes
def test_a_notebook_finds_nothing_of_the_students_graded_before_it(tmp_path: Path) -> None:
    earlier = [student("ada"), student("ben")]
    scanner = student("eve")
    needles: dict[str, str] = {}
    for index, one in enumerate(earlier):
        needles.update(needles_of(f"earlier {index}", one))
    own = needles_of("own", scanner)
    needles["own name"] = own["own name"]
    needles["own x as double"] = own["own x as double"]
    worker = Worker(
        Sandbox(wall_seconds=stall_guard.STALL_SECONDS, memory_mb=1024), tmp_path / "logs"
    )
    try:
        pids = []
        for one in earlier:
            givens = one["givens"]
            assert isinstance(givens, dict)
            result = worker.execute(
                cells_of(one), givens=givens, learner=str(one["learner"]), with_torch=True
            )  # an assignment that uses torch: the template holds torch as well
            assert result.status == "ok", result.detail
            assert str(one["answer"]) in result.cells[1]["outputs"][0]["text"]
            assert worker.process is not None
            pids.append(worker.process.pid)
        source = f"NEEDLES = {json.dumps(needles)}\n" + SCAN
        givens = scanner["givens"]
        assert isinstance(givens, dict)
        result = worker.execute(
            [*cells_of(scanner), source],
            givens=givens,
            learner=str(scanner["learner"]),
            with_torch=True,
        )
        assert worker.process is not None
        pids.append(worker.process.pid)
    finally:
        worker.stop()
    assert len(set(pids)) == 1, "all three were graded by the same worker"
    assert result.status == "ok", result.detail
    text = "".join(o.get("text", "") for o in result.cells[2]["outputs"])
    report = json.loads(text.split("SCAN ", 1)[1])
    assert report["scanned"] > 50_000_000, report  # the whole process, torch included
    assert report["found"]["own name"] > 0 and report["found"]["own x as double"] > 0, report
    leaked = {label: n for label, n in report["found"].items() if n and "earlier" in label}
    assert leaked == {}, f"earlier students' data in the notebook's memory: {leaked}"


TORCH_LOADED = "import sys\nprint(('to' + 'rch') in sys.modules)"  # never names it whole


def printed_text(result: Any, cell: int) -> str:
    return "".join(o.get("text", "") for o in result.cells[cell]["outputs"]).strip()


@pytest.mark.processes
def test_the_template_imports_torch_only_for_an_assignment_that_uses_it(tmp_path: Path) -> None:
    """A worker starts without torch; a learner's own torch (named or hidden) is imported
    in that learner's child alone and works confined; only an assignment's own use of
    torch (`with_torch`, said from the instructor's cells) puts it in the template."""
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        plain = worker.execute([TORCH_LOADED])
        own = worker.execute(["import torch\nprint(torch.tensor(2.0) * 3)", TORCH_LOADED])
        hidden = worker.execute(["m = __import__('to' + 'rch')\nprint(float(m.ones(3).sum()))"])
        after = worker.execute([TORCH_LOADED])
        assignment = worker.execute([TORCH_LOADED], with_torch=True)
        later = worker.execute([TORCH_LOADED])
    finally:
        worker.stop()
    for result in (plain, own, hidden, after, assignment, later):
        assert result.status == "ok", result.detail
    assert printed_text(plain, 0) == "False"
    assert (printed_text(own, 0), printed_text(own, 1)) == ("tensor(6.)", "True")
    assert printed_text(hidden, 0) == "3.0"
    assert printed_text(after, 0) == "False", "a learner's import must not reach the template"
    assert printed_text(assignment, 0) == "True"
    assert printed_text(later, 0) == "True", "imported once, for every later notebook"


COLLECTOR = "import gc, json\nprint(json.dumps([gc.isenabled(), gc.get_freeze_count()]))"


@pytest.mark.processes
def test_a_notebook_has_a_collector_that_never_scans_what_the_template_loaded(
    tmp_path: Path,
) -> None:
    """The template loads with the collector paused (`core.startup.loading`) and freezes
    what it loaded, torch too when an assignment asks for it; each notebook forked from
    it collects its own garbage as usual."""
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        plain = worker.execute([COLLECTOR])
        with_torch = worker.execute([COLLECTOR], with_torch=True)
    finally:
        worker.stop()
    for result in (plain, with_torch):
        assert result.status == "ok", result.detail
    enabled, frozen = json.loads(printed_text(plain, 0))
    enabled_with_torch, frozen_with_torch = json.loads(printed_text(with_torch, 0))
    assert enabled and enabled_with_torch
    assert frozen > 10_000  # IPython and the shell, at least
    assert frozen_with_torch > frozen + 100_000  # and all of torch


DEEP_FRAME = r"""
import os
body = b'{"event":"cell","index":0,"outputs":' + b'[' * 200000 + b']' * 200000 + b'}'
frame = len(body).to_bytes(4, 'big') + body
for fd in sorted(int(name) for name in os.listdir('/proc/self/fd')):
    try:
        if os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:'):
            os.write(fd, frame)
    except OSError:
        pass
"""


@pytest.mark.processes
def test_a_frame_nested_200000_deep_fails_its_notebook_not_the_worker(tmp_path: Path) -> None:
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        result = worker.execute(["print('before')", DEEP_FRAME, "print('after')"])
        assert worker.process is not None
        pid = worker.process.pid
        assert result.status == "protocol", (result.status, result.detail)
        assert "nested deeper than" in result.detail
        assert result.executed  # graded as that notebook's failure, with its reason
        assert result.cells[0]["outputs"][0]["text"] == "before\n"
        again = worker.execute(["print('next notebook')"])
        assert again.status == "ok", again.detail
        assert worker.process is not None and worker.process.pid == pid, "the worker lived on"
    finally:
        worker.stop()


@pytest.mark.processes
def test_a_deeply_nested_display_is_dropped_with_a_note(tmp_path: Path) -> None:
    """An output deeper than the frames allow is not recorded; the notebook goes on."""
    nested = "value = 1\nfor _ in range(500):\n    value = [value]\n"
    show = (
        "from IPython.display import display\ndisplay({'application/json': {'a': value}}, raw=True)"
    )
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        result = worker.execute([nested + show, "print('after')"])
    finally:
        worker.stop()
    assert result.status == "ok", result.detail
    assert "nested deeper than" in result.cells[0]["outputs"][0]["text"]
    assert result.cells[1]["outputs"][0]["text"] == "after\n"


# ------------------------------------------------------------------ cgroup v2


@pytest.mark.machine_specific
def test_cgroup_v2_is_refused_with_the_fix_where_it_offers_no_controllers() -> None:
    """This machine: memory, pids and cpu are bound to v1, the v2 hierarchy has none."""
    if v2_mount() is None or not v1_mounted():
        pytest.skip("this test describes a hybrid machine (v1 controllers, bare v2)")
    with pytest.raises(SandboxUnavailable) as refused:
        check_cgroups(Sandbox(cgroup_version="2"), Identity())
    message = str(refused.value)
    assert "offered no memory, pids, cpu controller" in message
    assert "cgroup_version = '1'" in message and "Delegate=yes" in message
    assert check_cgroups(Sandbox(), Identity())  # auto: v1 here


MOVE = r"""
import os, sys
notebook = sys.argv[1]
with open(notebook + '/cgroup.procs', 'w') as procs:
    procs.write('0')
print(open('/proc/self/cgroup').read().splitlines()[-1].split('::')[-1])
"""


@pytest.fixture
def v2_base() -> Iterator[Path]:
    """A fresh group on the v2 hierarchy, with hugetlb (the one controller this machine's
    v2 offers) handed down to it; everything restored afterwards."""
    mount = v2_mount()
    if mount is None or os.geteuid() != 0:
        pytest.fail("needs a cgroup v2 hierarchy and root (to delegate a subtree)")
    root_control = mount / "cgroup.subtree_control"
    # One test at a time holds the root's hugetlb: two xdist workers' fixtures overlapping
    # let the first to finish take it away from the other (ENOENT on its subtree_control).
    lock = open(Path(tempfile.gettempdir()) / "autograder-test-v2-hugetlb.lock", "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)
    had_hugetlb = "hugetlb" in root_control.read_text().split()
    base = mount / f"autograder-test-{secrets.token_hex(4)}"
    base.mkdir()
    try:
        if not had_hugetlb:
            root_control.write_text("+hugetlb")
        yield base
    finally:
        for group in sorted(base.rglob("*"), key=lambda p: -len(p.parts)):
            if group.is_dir():
                with_retries(group.rmdir)
        with_retries(base.rmdir)
        if not had_hugetlb:
            root_control.write_text("-hugetlb")
        lock.close()  # releases the lock


def with_retries(action: Callable[[], object]) -> None:
    for _ in range(50):
        try:
            action()
            return
        except OSError:
            time.sleep(0.05)
    action()


@pytest.mark.processes
def test_cgroup_v2_delegated_tree_lets_the_sandbox_user_move_between_its_groups(
    v2_base: Path,
) -> None:
    """On the v2 hierarchy: the worker tree made under a delegated base with a real
    controller handed down, and a process started as the sandbox is (`launch.py` joins
    `worker`, then drops to the sandbox user) moving itself into `notebook`."""
    nobody = 65534
    groups = make_v2_groups(v2_base, ("hugetlb",), {}, Identity(nobody, nobody))
    top, worker, notebook = (g[UNIFIED] for g in (groups.top, groups.worker, groups.notebook))
    assert "hugetlb" in (notebook / "cgroup.controllers").read_text().split()
    assert any(p.name.startswith("hugetlb.") for p in notebook.iterdir())
    python_dirs = sorted({str(Path(p).resolve()) for p in (sys.base_prefix, sys.prefix)})
    launch = Path(__file__).resolve().parents[2] / "autograder" / "sandbox" / "launch.py"
    moved = subprocess.run(
        [
            sys.executable, "-I", str(launch), "--procs", str(worker / "cgroup.procs"),
            "--uid", str(nobody), "--gid", str(nobody), "--reveal", *python_dirs, "--",
            sys.executable, "-I", "-c", MOVE, str(notebook),
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )  # fmt: skip
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.strip().endswith(f"/{top.name}/notebook"), moved.stdout
    groups.remove()
    assert not top.exists()


LEAVE = r"""
import sys
from pathlib import Path
from autograder.sandbox.cgroups import UNIFIED, make_v2_groups
from autograder.sandbox.settings import Identity
groups = make_v2_groups(Path(sys.argv[1]), ("hugetlb",), {}, Identity())
print(open('/proc/self/cgroup').read().splitlines()[-1].split('::')[-1])
groups.remove()
"""


@pytest.mark.processes
def test_a_v2_grader_in_its_delegated_group_moves_itself_into_a_leaf(v2_base: Path) -> None:
    """v2 hands controllers down only from a group without processes: a grader alone in
    its delegated group leaves it for `autograder-grader`, then makes the tree."""
    grader = subprocess.run(
        [sys.executable, "-c", LEAVE, str(v2_base)],
        capture_output=True,
        text=True,
        preexec_fn=lambda: (v2_base / "cgroup.procs").write_text(str(os.getpid())),
    )
    assert grader.returncode == 0, grader.stderr
    assert grader.stdout.strip().endswith(f"/{v2_base.name}/{GRADER_LEAF}"), grader.stdout
    assert "hugetlb" in (v2_base / "cgroup.subtree_control").read_text().split()


STRAGGLER = r"""
import os, subprocess, sys, time
from autograder.sandbox.execution import cgroups_empty
procs = sys.argv[1]
left = subprocess.Popen(
    ["sleep", "600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    preexec_fn=lambda: open(procs, "w").write("0"),
)  # a process of an earlier notebook that outlived it
time.sleep(0.2)
held = open(procs).read().split() == [str(left.pid)]
start = time.monotonic()
empty = cgroups_empty([procs], wait=10.0)  # reaps it too: Popen cannot see its status
print(held, empty, os.path.exists(f"/proc/{left.pid}"), round(time.monotonic() - start, 1))
"""


@pytest.mark.processes
def test_a_straggler_of_the_last_notebook_is_killed_before_the_next_starts(
    v2_base: Path,
) -> None:
    """A notebook's group still holding a process when the next notebook comes (a fork
    bomb's last child on a busy machine): the relay kills it instead of refusing."""
    group = v2_base / "notebook"
    group.mkdir()
    try:
        ran = subprocess.run(
            [sys.executable, "-c", STRAGGLER, str(group / "cgroup.procs")],
            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            os.kill(int(pid), 9)  # whatever the relay's code left, so the group can go
    assert ran.returncode == 0, ran.stderr
    held, empty, alive, seconds = ran.stdout.split()
    assert (held, empty, alive) == ("True", "True", "False"), ran.stdout
    assert float(seconds) < 10
    assert (group / "cgroup.procs").read_text().strip() == ""
