"""Hostile and broken submissions, graded in one batch with honest ones (issue: safe grading).

The batch is graded twice: by root, and by an ordinary user the test creates (with a
cgroup subtree delegated to it, as an administrator would). Every attack answers every
question wrongly (or not at all), so it has earned nothing: whatever it does to the
kernel, the notebook, the grader or the machine, it must score 0; the honest students
must get exactly their scores; every refused or failed submission must say why; files
outside the sandbox must be byte-identical; nobody may connect to a listener on
loopback; no secret may reach an output; a writer and a later reader graded by the same
worker must share nothing; and no sandbox process may run as root on the host.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import process_tree
import pytest
import stall_guard
from accounts import as_account

from autograder.authoring.sample_class import (
    expected_scores,
    gradebook_scores,
    make_course,
    submit_sample_class,
)
from autograder.core.givens import COURSE_ID, Site
from autograder.sandbox.workers import (
    CGROUP_ROOT,
    Sandbox,
    SandboxUnavailable,
    own_cgroup,
    v1_hierarchies,
)
from autograder.specs import SPECS, learner_problem, problem_words

HAND = "03_a_neuron_by_hand"
CODE = "05_three_mechanics"
ASSIGNMENTS = [HAND, CODE]
HONEST = ["ada", "ben", "dee"]
VARIED = next(name for name, spec in SPECS.items() if spec.variants)
SECRET = "instructor-secret-7f3a"
# A CPU budget, not a wall clock, stops the infinite loop, the fork bomb and the output
# flood: each costs at most CPU_SECONDS of CPU (twice: by root and by the user), and a busy
# machine (the rest of the suite runs alongside, on 2 cores) only makes the honest
# notebooks and the probes that walk the whole file system slower, never out of time. The
# costliest of those spends 1.3-1.8 CPU-s on this machine. The wall time only stops a
# notebook that waits; none here does.
CPU_SECONDS = 5
LIMITS = f"""
c.Sandbox.cpu_seconds = {CPU_SECONDS}
c.Sandbox.wall_seconds = 600
c.Sandbox.memory_mb = 400
c.Sandbox.max_output_bytes = 200_000
c.Budgets.max_cells = 300
c.Budgets.max_source_chars = 600_000
c.Budgets.max_parse_attempts = 5000
c.Budgets.max_outputs = 500
c.Budgets.max_submission_files = 50
c.Budgets.max_submission_mb = 25
"""
PAYLOAD = "document.title='PWNED'"

# ------------------------------------------------------------------ building notebooks


def answer_ids(nb: Any) -> list[str]:
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]


def fill(nb: Any, first: str = "", value: str = "-999.0") -> Any:
    """Every answer wrong; `first` is code placed in the first answer cell."""
    nb = copy.deepcopy(nb)
    ids = answer_ids(nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ids:
            cell.source = f"{grade_id} = {value}"
            if grade_id == ids[0] and first:
                cell.source = first + "\n" + cell.source
    return nb


def is_written_answer(cell: Any) -> bool:
    """A markdown answer cell the teacher grades (nbgrader grade + solution)."""
    meta = cell.metadata.get("nbgrader", {})
    return bool(meta.get("grade") and meta.get("solution"))


def cell_with(nb: Any, grade_id: str) -> Any:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


PRIVILEGE_PROBE = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
status = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
probe = {k: status.get(k, '').strip() for k in ('CapEff', 'CapPrm', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp')}
def attempt(name, fn):
    try:
        result = fn()
        probe[name] = 'ALLOWED' if result in (None, 0) or isinstance(result, int) and result > 0 else f'refused {result} {ctypes.get_errno()}'
    except Exception as e:
        probe[name] = f'refused {type(e).__name__}'
attempt('write_proc_sys', lambda: open('/proc/sys/kernel/hostname', 'w').write('x'))
attempt('write_proc_sysrq', lambda: open('/proc/sysrq-trigger', 'w').write('h'))
attempt('write_root', lambda: open('/owned', 'w').write('x'))
attempt('write_dev', lambda: open('/dev/owned', 'w').write('x'))
attempt('write_usr', lambda: open('/usr/owned', 'w').write('x'))
attempt('mount', lambda: libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))
attempt('umount', lambda: libc.umount2(b'/usr', 2))
attempt('unshare_user', lambda: libc.unshare(0x10000000))
attempt('mknod_device', lambda: os.mknod('/tmp/zero', 0o600 | 0o020000, os.makedev(1, 5)))
attempt('setuid_root', lambda: os.setuid(0))
attempt('ptrace_attach', lambda: libc.ptrace(16, 1, 0, 0))
probe['sys_entries'] = len(os.listdir('/sys')) if os.path.isdir('/sys') else 0
probe['block_devices'] = [d for d in os.listdir('/dev') if d.startswith(('sd', 'vd', 'nvme', 'mem', 'kmem', 'port'))]
print('PROBE ' + json.dumps(probe))
"""

# Every file the sandbox can see (all of /, but /proc, /sys and /dev), searched for the
# answers by name. Apart from the privilege probe: the walk is most of its time budget.
ANSWER_PROBE = r"""
import json, os
probe = {'files_seen': 0}
answers = []
for root, dirs, files in os.walk('/'):
    if root == '/':
        dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev')]
    probe['files_seen'] += len(files)
    for name in files:
        if name in ('references.py', 'quantities.py', 'functions.py', 'diagnose.py', 'judge.py', 'check.py', 'spec.py', 'engine.py', 'byhand.py') and 'autograder' in root:
            answers.append(os.path.join(root, name))
        if 'a_neuron_by_hand' in name or 'three_mechanics' in name:
            answers.append(os.path.join(root, name))
probe['answer_files'] = answers
try:
    import autograder.diagnosis.references
    probe['import_references'] = 'ALLOWED'
except ImportError:
    probe['import_references'] = 'refused'
print('ANSWERS ' + json.dumps(probe))
"""

WORKER_ID = r"""
def worker_id():
    import os
    for pid in sorted(int(p) for p in os.listdir('/proc') if p.isdigit()):
        try:
            if b'autograder.sandbox.execution' in open(f'/proc/{pid}/cmdline', 'rb').read():
                return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[19]
        except OSError:
            pass
    return None
"""

WRITER = (
    WORKER_ID
    + r"""
import ctypes, json, os, socket, time
for d in ('/tmp', '/scratch', '/dev/shm', '/run/worker', os.path.expanduser('~'), os.getcwd()):
    try:
        open(os.path.join(d, 'left-behind'), 'w').write('from the writer')
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget(0x5EC12E7, 4096, 0o1666)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        s = socket.socket(socket.AF_UNIX)
        s.bind('\0left-behind-socket')
        s.listen(1)
        time.sleep(120)
    os._exit(0)
time.sleep(0.2)
print('WRITER ' + json.dumps({'worker': worker_id(), 'time': time.time()}))
"""
)

READER = (
    WORKER_ID
    + r"""
import ctypes, json, os, socket, time
found = []
for d in ('/tmp', '/scratch', '/dev/shm', '/run/worker', os.path.expanduser('~'), os.getcwd()):
    if os.path.exists(os.path.join(d, 'left-behind')):
        found.append(d)
libc = ctypes.CDLL(None, use_errno=True)
if libc.shmget(0x5EC12E7, 4096, 0o666) >= 0:
    found.append('sysv shm')
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('\0left-behind-socket')
    found.append('socket')
except OSError:
    pass
print('READER ' + json.dumps({'worker': worker_id(), 'time': time.time(), 'found': found}))
time.sleep(1)  # hold this worker, so the writer's worker takes the next reader
"""
)


def attacks(hand: Any, code: Any, paths: dict[str, str]) -> dict[tuple[str, str], Any]:
    """(student, assignment) -> notebook (or bytes for a corrupt file). All earn 0 points."""
    a: dict[str, Any] = {}
    always_equal = (
        "class Yes(float):\n    def __eq__(self, other): return True\n    __hash__ = float.__hash__"
    )
    a["eq_always_true"] = fill(hand, always_equal, "Yes(1.0)")
    a["object_eq_true"] = fill(
        hand, "class Yes:\n    def __eq__(self, other): return True", "Yes()"
    )
    a["tensor_subclass"] = fill(
        hand, "import torch\nclass T(torch.Tensor):\n    def __eq__(s, o): return True", "T([1.0])"
    )
    a["patch_checker"] = fill(
        hand,
        "import autograder\nautograder.Exercise.check = lambda *a, **k: print('✓ all good')\n"
        "exercise.check = lambda *a, **k: None",
    )
    a["patch_builtins"] = fill(
        hand, "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.abs = lambda x: 0"
    )
    a["patch_torch"] = fill(
        hand,
        "import torch\ntorch.Tensor.backward = lambda *a, **k: None\n"
        "torch.allclose = lambda *a, **k: True",
    )
    a["hide_errors"] = fill(
        hand,
        "get_ipython()._showtraceback = lambda *a, **k: None\n"
        "get_ipython().showtraceback = lambda *a, **k: None",
    )
    a["fake_pass_text"] = fill(hand, "print('✓ h = 5.0 matches PyTorch\\nAll tests passed')")
    a["autograd_for_hand"] = fill(
        hand,
        "import torch\nW = torch.tensor(3.0, requires_grad=True)\n"
        "((torch.relu(W * 2 - 1) - 2) ** 2).backward()",
        "W.grad.item()",
    )
    a["sys_exit"] = fill(hand, "import sys\nsys.exit(0)")
    a["os_exit"] = fill(hand, "import os\nos._exit(0)")
    a["kill_kernel"] = fill(hand, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    a["infinite_loop"] = fill(hand, "while True:\n    pass")
    a["memory_bomb"] = fill(
        hand, "hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))"
    )
    a["memory_children"] = fill(
        hand,
        "import os, time\npids = []\nfor i in range(5):\n    pid = os.fork()\n"
        "    if pid == 0:\n        b = bytearray(300 << 20)\n"
        "        for j in range(0, len(b), 4096): b[j] = 1\n        time.sleep(2)\n"
        "        os._exit(0)\n    pids.append(pid)\n"
        "codes = [os.waitpid(p, 0)[1] for p in pids]\n"
        "print('SURVIVORS {\"alive\": %d}' % codes.count(0))",
    )
    a["tmpfs_fill"] = fill(
        hand,
        "for d in ('/tmp', '/scratch', '/dev/shm'):\n    for i in range(4):\n        try:\n"
        "            open(f'{d}/fill{i}', 'wb').write(b'x' * (60 << 20))\n"
        "        except OSError as e:\n            print(d, e)",
    )
    a["fork_bomb"] = fill(
        hand,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    )
    a["output_flood"] = fill(hand, "while True:\n    print('x' * 100000)")
    a["empty_outputs"] = fill(
        hand,
        # 1,000 small displays: twice the count budget, a fifth of the byte budget, and
        # quick enough to finish well inside the wall budget on a loaded machine.
        "from IPython.display import display\nfor i in range(1_000):\n    display(i)",
    )
    a["steal_files"] = fill(
        hand,
        "import glob\nfor p in " + json.dumps([paths[k] for k in ("gradebook", "solution",
        "sentinel_file", "home")]) + ":\n"
        "    try:\n        print(open(p, errors='replace').read())\n"
        "    except Exception as e:\n        print('blocked', type(e).__name__)\n"
        "print(glob.glob('/root/*'), glob.glob('/work/*/*'))",
    )  # fmt: skip
    a["write_outside"] = fill(
        hand,
        "for p in " + json.dumps([paths["sentinel_file"], paths["gradebook"]]) + ":\n"
        "    try:\n        open(p, 'w').write('owned')\n"
        "    except Exception as e:\n        print(e)",
    )
    a["tamper_gradebook"] = fill(
        hand,
        "import sqlite3\ntry:\n    db = sqlite3.connect(" + json.dumps(paths["gradebook"]) + ")\n"
        "    db.execute('update grade set auto_score = 1000')\n    db.commit()\n"
        "except Exception as e:\n    print(e)",
    )
    a["network"] = fill(
        hand,
        "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n"
        f"    s.connect(('127.0.0.1', {paths['port']}))\n    s.send(b'leak')\n"
        "except Exception as e:\n    print('no network', e)",
    )
    a["read_environment"] = fill(hand, "import os\nprint(dict(os.environ))")
    a["probe_privilege"] = fill(hand, PRIVILEGE_PROBE)
    a["probe_answers"] = fill(hand, ANSWER_PROBE)
    a["forge_frames"] = fill(
        hand,
        "import json, os, struct\n"
        "def frame(m):\n    b = json.dumps(m).encode()\n    return struct.pack('>I', len(b)) + b\n"
        "fake = [{'event': 'call', 'function': 'train', 'results': [{'value': 1.0}] * 50},\n"
        "        {'event': 'done', 'error': 'forged'}]\n"
        "for fd in range(3, 64):\n    for m in fake:\n        try:\n"
        "            os.write(fd, frame(m))\n        except OSError:\n            pass",
    )
    # The setup cell (locked, not graded) deleted, and an `exercise` that passes everything.
    open_plan = fill(
        hand, "class Pass:\n    def check(self, *a): print('✓ passed')\nexercise = Pass()"
    )
    open_plan.cells = [
        c
        for c in open_plan.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") not in ("setup", "given")
    ]
    a["fail_open_plan"] = open_plan
    deleted = fill(hand)
    deleted.cells = [c for c in deleted.cells if not c.metadata.get("nbgrader", {}).get("grade")]
    a["delete_tests"] = deleted
    duplicated = fill(hand)
    duplicated.cells.append(copy.deepcopy(cell_with(duplicated, "correct_h")))
    a["duplicate_test"] = duplicated
    edited = fill(hand)
    for cell in edited.cells:
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code":
            cell.source = "pass"
    a["edit_locked_tests"] = edited
    points = fill(hand)
    cell_with(points, "correct_h").metadata["nbgrader"]["points"] = 1000
    a["change_points"] = points
    unlock = fill(hand)
    for cell in unlock.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            meta["grade"] = False
            meta["locked"] = False
    a["strip_grade_metadata"] = unlock
    kernel = fill(hand)
    kernel.metadata["kernelspec"] = {"name": "bash", "display_name": "Bash", "language": "bash"}
    a["change_kernelspec"] = kernel
    a["html_payloads"] = html_payloads(hand)
    a["zz_0writer"] = fill(hand, WRITER)
    for i in range(4):
        a[f"zz_1reader{i}"] = fill(hand, READER)
    notebooks = {(name, HAND): nb for name, nb in a.items()}
    # Code exercises calling the grader's own reference implementation.
    reference = fill(code)
    cell_with(reference, "train").source = (
        "def train(x0, lr, steps):\n    from autograder.answers.functions import train_reference\n"
        "    return train_reference(x0, lr, steps)"
    )
    cell_with(reference, "grad_of_intermediate").source = (
        "def grad_of_intermediate(x0):\n"
        "    from autograder.answers.functions import grad_of_intermediate_reference\n"
        "    return grad_of_intermediate_reference(x0)"
    )
    notebooks[("call_reference", CODE)] = reference
    return notebooks


def html_payloads(hand: Any) -> Any:
    """Outputs, a written answer and notebook metadata that would run script if rendered."""
    html = f'<img src=x onerror="{PAYLOAD}">'
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{PAYLOAD}"/>'
    script = f"<script>{PAYLOAD}</script>"
    nb = fill(
        hand,
        "from IPython.display import display, HTML, Javascript\n"
        f"display(HTML({html!r}))\n"
        f"display(Javascript({PAYLOAD!r}))\n"
        f"display({{'image/svg+xml': {svg!r}, 'text/html': {script!r}}}, raw=True)",
    )
    written = next(c for c in nb.cells if c.cell_type == "markdown" and is_written_answer(c))
    written.source = (
        f'<img src=x onerror="{PAYLOAD}"> and <script>{PAYLOAD}</script> '
        f"[click](javascript:{PAYLOAD})"
    )
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}
    }
    return nb


CORRUPT = {
    "invalid_json": b'{"cells": [',
    "empty_file": b"",
    "binary_garbage": bytes(range(256)) * 64,
    "nbformat_3": json.dumps(
        {"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}
    ).encode(),
}


def add_folder_attacks(course: Path, hand: Any, paths: dict[str, str]) -> None:
    """Submission folders the grader must refuse without reading what they point to."""
    submitted = course / "submitted"
    name = f"{HAND}.ipynb"
    link = submitted / "link_to_solution" / HAND
    link.mkdir(parents=True)
    (link / name).symlink_to(paths["solution"])
    zero = submitted / "link_to_dev_zero" / HAND
    zero.mkdir(parents=True)
    nbformat.write(fill(hand), zero / name)
    (zero / "data.bin").symlink_to("/dev/zero")
    fifo = submitted / "fifo_in_folder" / HAND
    fifo.mkdir(parents=True)
    nbformat.write(fill(hand), fifo / name)
    os.mkfifo(fifo / "pipe")
    many = submitted / "too_many_files" / HAND
    many.mkdir(parents=True)
    nbformat.write(fill(hand), many / name)
    for i in range(60):
        (many / f"f{i}.txt").write_text("x")
    big = submitted / "oversized_tree" / HAND
    big.mkdir(parents=True)
    nbformat.write(fill(hand), big / name)
    (big / "blob.bin").write_bytes(b"\0" * (30 << 20))
    linked_dir = submitted / "linked_assignment"
    linked_dir.mkdir()
    (linked_dir / HAND).symlink_to(submitted / "ada" / HAND)
    for bad in ("[ab]*", "a?b"):
        glob = submitted / bad / HAND
        glob.mkdir(parents=True)
        nbformat.write(fill(hand), glob / name)
    (submitted / "student_link").symlink_to(submitted / "ada")
    # Budgets of what the grader reads.
    cells = fill(hand)
    cells.cells += [nbformat.v4.new_code_cell("pass") for _ in range(400)]
    write_to(submitted / "too_many_cells" / HAND, cells)
    malformed = fill(hand)
    broken = "\n".join(f"x{i} = (1 +" for i in range(40))
    malformed.cells += [nbformat.v4.new_code_cell(broken) for _ in range(20)]
    write_to(submitted / "malformed_cells" / HAND, malformed)
    chars = fill(hand)
    chars.cells.append(nbformat.v4.new_markdown_cell("y" * 700_000))
    write_to(submitted / "too_many_chars" / HAND, chars)


def write_to(folder: Path, nb: Any) -> None:
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{HAND}.ipynb")


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


# ------------------------------------------------------------------ users and processes


class SandboxUser:
    """An ordinary user made for the test, with a delegated cgroup subtree; removed after."""

    def __init__(self) -> None:
        self.name = "agtest" + secrets.token_hex(3)
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", self.name],
            check=True,
        )
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        self.delegated = f"autograder-{self.name}"
        self.groups: list[Path] = []
        for controller in v1_hierarchies():
            base = CGROUP_ROOT / controller / own_cgroup(controller).strip("/")
            group = base / self.delegated
            group.mkdir()
            self.groups.append(group)
            for path in [group, *group.iterdir()]:
                os.chown(path, self.uid, self.gid)

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run as this user (Python's install made reachable if it sits under /root)."""
        return as_account(self.uid, self.gid, argv)

    def remove(self) -> None:
        for group in self.groups:
            for child in sorted(group.rglob("*"), key=lambda p: -len(p.parts)):
                if child.is_dir():
                    with_retries(child.rmdir)
            with_retries(group.rmdir)
        subprocess.run(["userdel", self.name], check=False)


def with_retries(action: Any) -> None:
    for _ in range(50):
        try:
            action()
            return
        except OSError:
            time.sleep(0.1)


def descendants(root: int) -> dict[int, tuple[str, str]]:
    """pid -> (cmdline, Uid line) of every descendant of `root` right now."""
    found = {}
    for pid in process_tree.walked_descendants(root)[1:]:  # the first is `root` itself
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
            uid = next(line for line in status if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # it ended meanwhile
        found[pid] = (cmdline.decode(errors="replace"), uid)
    return found


class Watcher(threading.Thread):
    """Records, while grading runs, every sandbox process and its uid on the host."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.seen: dict[int, tuple[str, str]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for pid, (cmdline, uid) in descendants(self.pid).items():
                if (
                    cmdline.startswith(("bwrap", "/usr/bin/bwrap"))
                    or "autograder.sandbox.execution" in cmdline
                ):
                    self.seen[pid] = (cmdline, uid)
            time.sleep(0.05)


GRADE = """
import json, sys
from pathlib import Path
from autograder.grading.runner import Grader
outcomes = [
    {"student": o.submission.student, "assignment": o.submission.assignment,
     "status": o.status, "reasons": o.reasons}
    for o in Grader(Path("."), jobs=2, seed=0).run()
]
Path("outcomes.json").write_text(json.dumps(outcomes))
"""


# ------------------------------------------------------------------ the graded batch


def build(base: Path) -> dict[str, Any]:
    course = make_course(base / "course", ASSIGNMENTS, LIMITS)
    sentinel = base / "sentinel"
    (sentinel / "deep").mkdir(parents=True)
    (sentinel / "secret.txt").write_text("sentinel-content-91c2")
    (sentinel / "deep" / "data.bin").write_bytes(os.urandom(4096))
    paths = {
        "gradebook": str(course / "gradebook.db"),
        "solution": str(course / "solutions" / HAND / f"{HAND}.ipynb"),
        "sentinel_file": str(sentinel / "secret.txt"),
        "home": str(Path.home() / ".bashrc"),
    }
    return {"course": course, "sentinel": sentinel, "paths": paths}


def release(course: Path, name: str) -> Any:
    return nbformat.read(course / "exercises" / name / f"{name}.ipynb", 4)


def submit(course: Path, paths: dict[str, str]) -> dict[tuple[str, str], Any]:
    submit_sample_class(course, ASSIGNMENTS, HONEST)
    hand, code = release(course, HAND), release(course, CODE)
    notebooks = attacks(hand, code, paths)
    for (student, assignment), nb in notebooks.items():
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{assignment}.ipynb")
    for name, data in CORRUPT.items():
        folder = course / "submitted" / name / HAND
        folder.mkdir(parents=True)
        (folder / f"{HAND}.ipynb").write_bytes(data)
    huge = course / "submitted" / "huge_notebook" / HAND
    huge.mkdir(parents=True)
    big = fill(hand)
    big.cells[0].source = "x" * (22 * 1024 * 1024)
    nbformat.write(big, huge / f"{HAND}.ipynb")
    wrong_name = course / "submitted" / "wrong_name" / HAND
    wrong_name.mkdir(parents=True)
    nbformat.write(fill(hand), wrong_name / "my_homework.ipynb")
    extra = course / "submitted" / "extra_notebooks" / HAND
    extra.mkdir(parents=True)
    nbformat.write(fill(hand), extra / f"{HAND}.ipynb")
    nbformat.write(fill(hand), extra / "scratch.ipynb")
    add_folder_attacks(course, hand, paths)
    return notebooks


@pytest.fixture(scope="module", params=["root", "user"])
def graded(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    if os.geteuid() != 0:
        pytest.fail("the sandbox corpus runs as root (it creates a user to grade as, too)")
    base = Path(tempfile.mkdtemp(prefix="hostile-"))
    user = SandboxUser() if request.param == "user" else None
    try:
        yield grade_batch(base, user)
    finally:
        if user is not None:
            user.remove()
        shutil.rmtree(base, ignore_errors=True)


def grade_batch(base: Path, user: SandboxUser | None) -> dict[str, Any]:
    built = build(base)
    course, paths = built["course"], built["paths"]
    if user is not None:
        with open(course / "nbgrader_config.py", "a") as config:
            # Relative: under the grader's own cgroup of each controller.
            config.write(f"\nc.Sandbox.cgroup_parent = {user.delegated!r}\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    paths["port"] = str(listener.getsockname()[1])
    notebooks = submit(course, paths)
    before = tree_hash(built["sentinel"])
    command = [sys.executable, "-c", GRADE]
    if user is not None:
        for path in [base, *base.rglob("*")]:
            os.lchown(path, user.uid, user.gid)
        command = user.command(command)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(base),
        "AUTOGRADER_TEST_SECRET": SECRET,
        "LANG": "C.UTF-8",
    }
    process = subprocess.Popen(
        command, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    watcher = Watcher(process.pid)
    watcher.start()
    output, _ = stall_guard.communicate(process, "the sandbox corpus' grading")
    watcher.done.set()
    watcher.join()
    assert process.returncode == 0, output.decode(errors="replace")[-5000:]
    try:
        connection, _ = listener.accept()
        connection.close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    outcomes = json.loads((course / "outcomes.json").read_text())
    return {
        "user": user.name if user else "root",
        "course": course,
        "notebooks": notebooks,
        "outcomes": {(o["student"], o["assignment"]): o for o in outcomes},
        "scores": gradebook_scores(course),
        "sentinel_unchanged": tree_hash(built["sentinel"]) == before,
        "connected": connected,
        "processes": watcher.seen,
        "paths": paths,
    }


def autograded_text(graded: dict[str, Any], student: str, assignment: str = HAND) -> str:
    path = graded["course"] / "autograded" / student / assignment / f"{assignment}.ipynb"
    return path.read_text()


def printed(graded: dict[str, Any], student: str, tag: str) -> list[dict[str, Any]]:
    nb = nbformat.reads(autograded_text(graded, student), 4)
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(tag + " "):
                    found.append(json.loads(line[len(tag) + 1 :]))
    return found


def reasons(graded: dict[str, Any], student: str, assignment: str = HAND) -> str:
    return " ".join(graded["outcomes"][(student, assignment)]["reasons"])


def printed_once(graded: dict[str, Any], student: str, tag: str) -> dict[str, Any]:
    """The one report a probe printed; if it printed none, why the notebook stopped."""
    found = printed(graded, student, tag)
    assert len(found) == 1, (
        f"{student} printed {len(found)} {tag} reports",
        reasons(graded, student),
        autograded_text(graded, student)[-3000:],
    )
    return found[0]


# ------------------------------------------------------------------ what must hold


@pytest.mark.processes
def test_honest_students_get_exactly_their_scores(graded: dict[str, Any]) -> None:
    expected = expected_scores()
    for student in HONEST:
        for assignment in ASSIGNMENTS:
            key = (student, assignment)
            assert graded["outcomes"][key]["status"] == "graded", graded["outcomes"][key]
            assert graded["scores"][key] == expected[key], key


@pytest.mark.processes
def test_no_attack_earns_a_point(graded: dict[str, Any]) -> None:
    assert len(graded["notebooks"]) >= 40
    earned = {
        key: graded["scores"][key]
        for key in graded["notebooks"]
        if graded["scores"].get(key)  # absent: refused or failed, so nothing recorded
    }
    assert earned == {}


@pytest.mark.processes
def test_every_attack_is_graded_or_refused_with_a_reason(graded: dict[str, Any]) -> None:
    outcomes = graded["outcomes"]
    for key in graded["notebooks"]:
        assert outcomes[key]["status"] == "graded", (key, outcomes[key]["reasons"])
    for name in [*CORRUPT, "huge_notebook", "wrong_name", "too_many_cells"]:
        assert outcomes[(name, HAND)]["status"] == "failed", name
        assert outcomes[(name, HAND)]["reasons"], name


@pytest.mark.processes
def test_corrupt_inputs_get_clear_reasons(graded: dict[str, Any]) -> None:
    assert "not valid JSON" in reasons(graded, "invalid_json")
    assert "empty file" in reasons(graded, "empty_file")
    assert "binary" in reasons(graded, "binary_garbage")
    assert "format 3" in reasons(graded, "nbformat_3")
    assert "MB" in reasons(graded, "huge_notebook")
    wrong = reasons(graded, "wrong_name")
    assert f"expected {HAND}.ipynb, found my_homework.ipynb" in wrong
    assert "my_homework.ipynb is not part of" in wrong
    assert "scratch.ipynb is not part of" in reasons(graded, "extra_notebooks")


@pytest.mark.processes
def test_submission_folders_with_links_special_files_or_bad_ids_are_refused(
    graded: dict[str, Any],
) -> None:
    expectations = {
        "link_to_solution": "symbolic link",
        "link_to_dev_zero": "symbolic link",
        "fifo_in_folder": "special file",
        "too_many_files": "max_submission_files",
        "oversized_tree": "max_submission_mb",
        "linked_assignment": "not a folder",
        "[ab]*": "glob or path syntax",
        "a?b": "glob or path syntax",
        "student_link": "not a folder",
    }
    for student, words in expectations.items():
        outcome = graded["outcomes"][(student, HAND)]
        assert outcome["status"] == "failed", student
        assert words in reasons(graded, student), (student, outcome["reasons"])
        assert not (graded["course"] / "autograded" / student).exists(), student
    # Nothing of the solution was copied anywhere; the other students' results stand.
    autograded = graded["course"] / "autograded"
    solution = Path(graded["paths"]["solution"]).read_text()
    assert all(p.read_text() != solution for p in autograded.rglob("*.ipynb"))
    assert (autograded / "ada" / HAND / f"{HAND}.ipynb").is_file()
    assert (autograded / "ben" / HAND / f"{HAND}.ipynb").is_file()


@pytest.mark.processes
def test_budgets_of_the_grader_are_enforced(graded: dict[str, Any]) -> None:
    assert "c.Budgets.max_cells" in reasons(graded, "too_many_cells")
    assert "c.Budgets.max_parse_attempts" in reasons(graded, "malformed_cells")
    assert "c.Budgets.max_source_chars" in reasons(graded, "too_many_chars")
    nb = nbformat.reads(autograded_text(graded, "empty_outputs"), 4)
    outputs = sum(len(c.get("outputs", [])) for c in nb.cells)
    assert outputs <= 500 + 50  # the budget, plus the test cells' verdicts
    assert "c.Budgets.max_outputs" in autograded_text(graded, "empty_outputs")


@pytest.mark.processes
def test_reasons_are_recorded_for_faults_and_tampering(graded: dict[str, Any]) -> None:
    assert "timeout" in reasons(graded, "infinite_loop")
    assert f"more than {CPU_SECONDS} s of CPU time" in reasons(graded, "infinite_loop")
    assert "died" in reasons(graded, "os_exit")
    # The kernel is PID 1 of its own namespace: SIGKILL from inside is ignored, so
    # kill_kernel simply runs on (and scores 0); os._exit does end it.
    assert "deleted cell" in reasons(graded, "delete_tests")
    assert "deleted cell 'setup'" in reasons(graded, "fail_open_plan")
    assert "appears 2 times" in reasons(graded, "duplicate_test")
    assert "edited locked cell" in reasons(graded, "edit_locked_tests")
    assert "changed nbgrader metadata" in reasons(graded, "change_points")
    assert "kernelspec" in reasons(graded, "change_kernelspec")


@pytest.mark.processes
def test_the_plan_comes_from_the_gradebook(graded: dict[str, Any]) -> None:
    """Without its setup cell, the notebook is still judged by the grader, cell by cell."""
    nb = nbformat.reads(autograded_text(graded, "fail_open_plan"), 4)
    tests = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "")[:8] == "correct_"
    ]
    assert len(tests) == 10
    for cell in tests:
        assert [o.get("ename") for o in cell.outputs] == ["AnswerMismatch"], cell.outputs


@pytest.mark.processes
def test_no_answer_is_reachable_from_the_sandbox(graded: dict[str, Any]) -> None:
    probe = printed_once(graded, "probe_answers", "ANSWERS")
    assert probe["files_seen"] > 10_000, probe  # the walk saw Python and the venv
    assert probe["import_references"] == "refused"
    assert probe["answer_files"] == []
    text = autograded_text(graded, "call_reference", CODE)
    assert "No module named 'autograder.answers" in text


@pytest.mark.processes
def test_the_sandbox_holds_no_privilege(graded: dict[str, Any]) -> None:
    probe = printed_once(graded, "probe_privilege", "PROBE")
    for caps in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
        assert probe[caps] == "0000000000000000", (caps, probe)
    assert probe["NoNewPrivs"] == "1"
    assert probe["Seccomp"] == "2"
    for action in (
        "write_proc_sys",
        "write_proc_sysrq",
        "write_root",
        "write_dev",
        "write_usr",
        "mount",
        "umount",
        "unshare_user",
        "mknod_device",
        "setuid_root",
        "ptrace_attach",
    ):
        assert probe[action].startswith("refused"), (action, probe[action])
    assert probe["sys_entries"] == 0
    assert probe["block_devices"] == []
    # On the host, every sandbox process ran as an unprivileged user.
    assert graded["processes"], "no sandbox process was observed"
    for cmdline, uid in graded["processes"].values():
        assert set(uid.split()[1:]) & {"0"} == set(), (cmdline[:80], uid)


@pytest.mark.processes
def test_limits_hold_for_all_processes_of_a_notebook(graded: dict[str, Any]) -> None:
    survivors = printed_once(graded, "memory_children", "SURVIVORS")
    # 5 children x 300 MiB against 400 MiB for the notebook: at most one can live.
    assert survivors["alive"] <= 1, survivors


@pytest.mark.processes
def test_writer_and_later_reader_in_one_worker_share_nothing(graded: dict[str, Any]) -> None:
    (writer,) = printed(graded, "zz_0writer", "WRITER")
    readers = [r for i in range(4) for r in printed(graded, f"zz_1reader{i}", "READER")]
    assert len(readers) == 4
    assert all(r["found"] == [] for r in readers), readers
    same = [r for r in readers if r["worker"] == writer["worker"] and r["time"] > writer["time"]]
    assert same, f"no reader ran after the writer in its worker: {writer} {readers}"


@pytest.mark.processes
def test_learner_content_is_inert(graded: dict[str, Any]) -> None:
    nb = nbformat.reads(autograded_text(graded, "html_payloads"), 4)
    mimes = {
        mime
        for cell in nb.cells
        for output in cell.get("outputs", [])
        for mime in output.get("data", {})
    }
    assert mimes <= {"text/plain", "image/png", "image/jpeg"}, mimes
    shown = json.dumps(first_answer_outputs(nb))
    assert "IPython.core.display.HTML object" in shown  # the payloads did run, as text
    assert "image/svg+xml, text/html not kept by the grader" in shown
    answer = next(c for c in nb.cells if c.cell_type == "markdown" and is_written_answer(c)).source
    assert "<img" not in answer and "<script" not in answer and "javascript:" not in answer
    assert "widgets" not in nb.metadata


def first_answer_outputs(nb: Any) -> list[Any]:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    return list(cell.outputs)


@pytest.mark.processes
def test_files_outside_the_sandbox_are_untouched(graded: dict[str, Any]) -> None:
    assert graded["sentinel_unchanged"]


@pytest.mark.processes
def test_no_network_connection_was_made(graded: dict[str, Any]) -> None:
    assert not graded["connected"]


@pytest.mark.processes
def test_nothing_secret_reaches_the_outputs(graded: dict[str, Any]) -> None:
    autograded = graded["course"] / "autograded"
    text = "".join(p.read_text() for p in autograded.rglob("*.ipynb"))
    assert SECRET not in text
    assert "sentinel-content-91c2" not in text
    assert "blocked" in autograded_text(graded, "steal_files")


@pytest.mark.processes
def test_without_delegated_cgroups_an_ordinary_user_is_refused(tmp_path: Path) -> None:
    """Fail closed: where per-notebook limits cannot be enforced, grading refuses."""
    user = SandboxUser()
    try:
        code = (
            "from autograder.sandbox.workers import Sandbox, check_sandbox\n"
            "check_sandbox(Sandbox(cgroup_parent='not-delegated'))\n"
        )
        result = subprocess.run(
            user.command([sys.executable, "-c", code]),
            capture_output=True,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "HOME": "/"},
        )
        assert result.returncode != 0
        assert "SandboxUnavailable" in result.stderr
        assert "delegate" in result.stderr and "require_cgroups = False" in result.stderr
    finally:
        user.remove()


@pytest.mark.processes
def test_a_notebook_that_could_not_start_is_a_failure_not_a_grade(tmp_path: Path) -> None:
    """A sandbox that cannot start fails every submission with its reason; reruns retry."""
    course = make_course(
        tmp_path / "course", [HAND], "c.Sandbox.bwrap = '/bin/false'\nc.Sandbox.wall_seconds = 5\n"
    )
    submit_sample_class(course, [HAND], ["ada"])
    from autograder.grading.runner import Grader

    outcomes = list(Grader(course, jobs=1, seed=0).run())
    assert [o.status for o in outcomes] == ["failed"]
    assert "could not be executed" in " ".join(outcomes[0].reasons)
    assert gradebook_scores(course).get(("ada", HAND)) is None
    again = list(Grader(course, jobs=1, seed=0).run())
    assert [o.status for o in again] == ["failed"]  # retried, not skipped as graded
    from autograder.cli import main

    assert main(["grade", "--quiet", "--course-dir", str(course)]) != 0


@pytest.mark.processes
def test_a_one_off_run_stops_each_worker_once_nothing_is_left_for_it(tmp_path: Path) -> None:
    """The worker's processes and cgroups end while the last hand-in is recorded, not
    after it; a lasting grader (a service) keeps its worker for the next run."""
    course = make_course(tmp_path / "course", [HAND])
    submit_sample_class(course, [HAND], ["ada", "ben"])
    from autograder.grading.runner import Grader

    grader = Grader(course, jobs=1, seed=0)
    run = grader.run()
    statuses = [next(run).status, next(run).status]
    # the last hand-in is recorded once it ran, and its worker was told to stop as it ended
    stopping = grader._stopping[:]
    assert grader._workers == [] and len(stopping) == 1, "not stopped before the last record"
    assert next(run, None) is None
    assert statuses == ["graded", "graded"] and not stopping[0].is_alive()

    (course / "submitted" / "ben" / HAND / f"{HAND}.ipynb").write_text(
        (course / "submitted" / "ben" / HAND / f"{HAND}.ipynb").read_text() + " "
    )
    lasting = Grader(course, jobs=1, seed=0, persistent=True)
    try:
        assert sorted(o.status for o in lasting.run()) == ["graded", "skipped"]
        assert len(lasting._workers) == 1 and lasting._stopping == []
        assert lasting._workers[0].process is not None
    finally:
        lasting.close()
    assert lasting._workers == []


@pytest.mark.processes
def test_the_shim_gives_the_values_the_grader_injected(tmp_path: Path) -> None:
    """In the sandbox `autograder` is the answer-free shim; `given` returns injected values
    and, where the exercise varies, prints the student's problem as the real package does
    (the next notebook on the same worker, of one structure, prints none)."""
    from autograder.sandbox.workers import Worker

    problem = problem_words(learner_problem(VARIED, "ada", Site(COURSE_ID, "a secret")))
    assert problem.startswith("Your problem: ")
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        varied = worker.execute(
            [f"from autograder import Exercise\nexercise = Exercise({VARIED!r})",
             "x = exercise.given('x')"],
            givens={"x": 2.5},
            learner="ada",
            problem=problem,
        )  # fmt: skip
        result = worker.execute(
            [
                "from autograder import Exercise\nexercise = Exercise('03_a_neuron_by_hand')",
                "x, w = exercise.given('x', 'w')\nprint(x * w)",
                "exercise.check('h')",
                "import autograder\nprint(sorted(n for n in dir(autograder) if not n.startswith('_')))",
            ],
            givens={"x": 1.5, "w": -2.0},
            learner="ada",
        )
    finally:
        worker.stop()
    assert varied.status == "ok", varied.detail
    [printed] = [o["text"] for o in varied.cells[1]["outputs"]]
    assert printed == f"Numbers of ada (the folder autograder is grading): x = 2.5\n{problem}\n"
    assert result.status == "ok", result.detail
    text = [o["text"] for i in range(4) for o in result.cells[i]["outputs"]]
    assert text[0] == "Numbers of ada (the folder autograder is grading): x = 1.5, w = -2.0\n-3.0\n"
    assert "checked by the grader" in text[1]
    exported = json.loads(text[2].replace("'", '"'))
    assert "references" not in exported and "EXERCISES" not in exported


@pytest.mark.processes
def test_a_plot_in_a_notebook_comes_back_as_an_image(tmp_path: Path) -> None:
    """The worker does not preload matplotlib; a notebook that plots still gets its figure."""
    from autograder.sandbox.workers import Worker

    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        result = worker.execute(
            ["import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])", "print('after')"]
        )
    finally:
        worker.stop()
    assert result.status == "ok", result.detail
    mimes = [set(o.get("data", {})) for o in result.cells[0]["outputs"]]
    assert {"image/png", "text/plain"} in mimes, result.cells[0]["outputs"]
    assert result.cells[1]["outputs"][0]["text"] == "after\n"


@pytest.mark.processes
def test_the_templates_warm_up_cell_leaves_no_trace_in_a_notebook(tmp_path: Path) -> None:
    """The template runs one silent cell before it forks (IPython then compiles and imports
    once, not in every notebook). Each notebook sees the counts, history and names it saw
    before that cell was added (the values below, the same without it), the second as the
    first."""
    from autograder.sandbox.workers import Worker

    probe = (
        "shell = get_ipython()\n"
        "print(shell.execution_count, len(In), repr(_i), len(Out), repr(_),"
        " sorted(n for n in dir() if not n.startswith('_')))"
    )
    worker = Worker(Sandbox(wall_seconds=stall_guard.STALL_SECONDS), tmp_path / "logs")
    try:
        first, second = (worker.execute([probe, "1 + 1"]) for _ in range(2))
    finally:
        worker.stop()
    for result in (first, second):
        assert result.status == "ok", result.detail
        printed = result.cells[0]["outputs"][0]["text"]
        assert (
            printed == "2 2 '' 0 '' ['In', 'Out', 'exit', 'get_ipython', 'open', 'quit', 'shell']\n"
        )
        assert result.cells[1]["outputs"][0]["execution_count"] == 3


def test_check_sandbox_refuses_a_root_sandbox_user() -> None:
    if os.geteuid() != 0:
        pytest.fail("run as root")
    with pytest.raises(SandboxUnavailable, match="is root"):
        from autograder.sandbox.workers import sandbox_identity

        sandbox_identity(Sandbox(user="root"))


SPINNERS = """
import os
for _ in range(3):
    if os.fork() == 0:
        while True:
            pass
while True:
    pass
"""


@pytest.mark.processes
def test_the_cpu_budget_counts_a_notebooks_processes_together(tmp_path: Path) -> None:
    """Four spinning processes, each far under the budget alone, are stopped together once
    they spent it: counted by the notebook's cgroup, not by each process or the clock."""
    from autograder.sandbox.workers import Worker

    budget = 3.0
    worker = Worker(
        Sandbox(cpu_seconds=budget, wall_seconds=stall_guard.STALL_SECONDS, cpus=2),
        tmp_path / "logs",
    )
    try:
        result = worker.execute(["print('before')", SPINNERS, "print('never')"])
        after = worker.execute(["print('next notebook')"])
    finally:
        worker.stop()
    assert result.status == "timeout", (result.status, result.detail)
    assert f"more than {budget:g} s of CPU time together" in result.detail
    assert result.cpu_seconds is not None and result.cpu_seconds > budget
    assert result.cells[0]["outputs"][0]["text"] == "before\n"
    assert after.status == "ok", after.detail  # the spinners are gone with their notebook


@pytest.mark.processes
def test_the_wall_clock_stops_a_notebook_that_only_waits(tmp_path: Path) -> None:
    from autograder.sandbox.workers import Worker

    worker = Worker(Sandbox(cpu_seconds=60, wall_seconds=3), tmp_path / "logs")
    try:
        result = worker.execute(["import time\ntime.sleep(3600)"])
    finally:
        worker.stop()
    assert result.status == "timeout", (result.status, result.detail)
    assert "ran longer than 3 s" in result.detail
