"""The sandbox submissions run in, and the worker processes that live inside it.

Each grading slot is one worker (`autograder.sandbox.execution`) started under bubblewrap:
no network, its own PID, IPC, UTS and cgroup namespaces, a cleared environment, and a
read-only root holding only the Python installation and the virtual environment,
read-only, plus the answer-free `autograder_shim` package mounted as `autograder`
(with the worker's own `execution.py` and `framing.py`). The course directory, the real
`autograder` package (references, diagnoses, functions), solutions/, the gradebook,
other submissions and the instructor's home are not there.

Identity: graded as root, the worker runs as an unprivileged user (`Sandbox.user`,
default `nobody`); graded as an ordinary user, as that user. Either way its user
namespace maps to that unprivileged uid, never to root.

Limits: every notebook's processes together live in their own cgroups (memory including
in-memory files, process count, CPU share), created by the grader and joined by the
notebook before any of its code runs. Where that cannot be done the grader refuses to
grade (`SandboxUnavailable`) unless the instructor opts out with
`c.Sandbox.require_cgroups = False`. See `autograder.sandbox.execution` for what each notebook's
child adds (its own namespaces, private size-capped tmpfs, no capabilities, seccomp).

Limits are set in `nbgrader_config.py`, e.g. `c.Sandbox.memory_mb = 1024`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from traitlets import Bool, Float, Int, Unicode
from traitlets.config import Config, Configurable
from traitlets.config.loader import PyFileConfigLoader

from autograder.sandbox.framing import FrameError, read_frame, write_frame

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
SHIM_DIR = Path(__file__).resolve().parents[2] / "autograder_shim"
WORKER_FILES = (  # answer-free: mounted in the sandbox at the same place in the package
    "sandbox/__init__.py",
    "sandbox/execution.py",
    "sandbox/framing.py",
    "sandbox/confine.py",
    "core/__init__.py",
    "core/value_build.py",
)
INSIDE_PACKAGES = "/opt/autograder"  # on PYTHONPATH in the sandbox
INSIDE_CGROUP = "/run/cgroup"  # where the notebook group's cgroup.procs files appear
WORKER_TMP_MB = 32
STATE_DIR = ".autograder"  # the grader's own state in the course folder (markers, logs)
_GROUP_IDS = count()


def load_config(course_dir: Path) -> Config:
    """The course's nbgrader configuration, rooted at `course_dir` (the sandbox's limits
    are in it, so a worker can be started before nbgrader itself is imported)."""
    config = Config()
    if (course_dir / "nbgrader_config.py").exists():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    config.CourseDirectory.root = str(course_dir)
    if "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = f"sqlite:///{course_dir / 'gradebook.db'}"
    return config


def worker_log_dir(course_dir: Path) -> Path:
    """Where the execution workers of a course write their stderr."""
    return course_dir / STATE_DIR / "logs"


class SandboxUnavailable(RuntimeError):
    """Grading would have to run learner code unconfined or unlimited; refuse."""


class Sandbox(Configurable):  # type: ignore[misc]
    """Limits for each notebook's execution (configure as c.Sandbox.<name>)."""

    enabled = Bool(True, help="Run submissions in bubblewrap. False is unsafe.").tag(config=True)
    wall_seconds = Float(120.0, help="Wall time for a whole notebook, seconds.").tag(config=True)
    cpu_seconds = Float(120.0, help="CPU time of each process of a notebook, seconds.").tag(
        config=True
    )
    cpus = Float(1.0, help="CPU share of a notebook's processes together, in cores.").tag(
        config=True
    )
    memory_mb = Float(
        2048.0, help="Memory a notebook's processes together may add (in-memory files too), MiB."
    ).tag(config=True)
    max_processes = Int(64, help="Processes and threads of a notebook together.").tag(config=True)
    max_output_bytes = Int(4_000_000, help="Output recorded per notebook, bytes.").tag(config=True)
    max_file_mb = Float(64.0, help="Largest file a notebook may write, MiB.").tag(config=True)
    scratch_mb = Float(256.0, help="Size of each private writable filesystem, MiB.").tag(
        config=True
    )
    bwrap = Unicode("bwrap", help="The bubblewrap executable.").tag(config=True)
    user = Unicode(
        "nobody",
        help="Graded as root: the unprivileged user the sandbox runs as (a dedicated account "
        "is best). Ignored when grading as an ordinary user.",
    ).tag(config=True)
    cgroup_parent = Unicode(
        "",
        help="cgroup (v1) under which per-notebook groups are made: '/autograder-grader' is "
        "that path under each controller's mount (e.g. delegated to the grading user); a "
        "relative path is under the grader's own cgroup of each controller. Default: the "
        "grader's own cgroup.",
    ).tag(config=True)
    require_cgroups = Bool(
        True,
        help="Refuse to grade when per-notebook memory/CPU/process limits cannot be enforced "
        "with cgroups. False keeps only per-process rlimits (weaker).",
    ).tag(config=True)

    def limits(self) -> dict[str, float]:
        """The limits as sent to the execution worker."""
        names = (
            "wall_seconds",
            "cpu_seconds",
            "memory_mb",
            "max_processes",
            "max_output_bytes",
            "max_file_mb",
            "scratch_mb",
        )
        return {name: float(getattr(self, name)) for name in names}


# ---------------------------------------------------------------- identity


@dataclass(frozen=True)
class Identity:
    """Who the sandbox runs as on the host (None: the grader's own, unprivileged, user)."""

    uid: int | None = None
    gid: int | None = None

    @property
    def host_uid(self) -> int:
        return os.geteuid() if self.uid is None else self.uid


def sandbox_identity(sandbox: Sandbox) -> Identity:
    """The unprivileged identity outside the sandbox; SandboxUnavailable if there is none."""
    if os.geteuid() != 0:
        return Identity()
    try:
        entry = pwd.getpwnam(sandbox.user)
    except KeyError:
        raise SandboxUnavailable(
            f"grading as root needs an unprivileged user for the sandbox; {sandbox.user!r} "
            "does not exist (set c.Sandbox.user, e.g. `useradd --system autograder-sandbox`)"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxUnavailable(f"c.Sandbox.user {sandbox.user!r} is root; choose another user")
    return Identity(entry.pw_uid, entry.pw_gid)


# ---------------------------------------------------------------- filesystem


def real_package_dirs() -> list[Path]:
    """Where the real (answer-holding) `autograder` package is installed."""
    spec = importlib.util.find_spec("autograder")
    dirs = [Path(p).resolve() for p in (spec.submodule_search_locations or [])] if spec else []
    return dirs


def readable_paths() -> list[Path]:
    """What the sandbox may read: system libraries, Python and the venv (read-only)."""
    paths = [Path(p) for p in ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/ld.so.cache")]
    paths += [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    return [p for p in dict.fromkeys(paths) if p.exists()]


def shim_files() -> dict[str, Path]:
    """Inside name -> host file of the package mounted as `autograder` in the sandbox."""
    package = Path(__file__).resolve().parents[1]
    files = {"__init__.py": SHIM_DIR / "__init__.py"}
    files.update({name: package / name for name in WORKER_FILES})
    return files


def hidden_dirs(readable: list[Path]) -> list[Path]:
    """Real autograder packages that lie inside a mounted path: covered in the sandbox."""
    return [
        d
        for d in real_package_dirs()
        if any(d == p or p in d.parents for p in readable) and d != SHIM_DIR
    ]


def bwrap_command(sandbox: Sandbox, python: str, groups: NotebookGroups | None) -> list[str]:
    """The bubblewrap command line that starts one execution worker."""
    command = [sandbox.bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    command += ["--uid", "65534", "--gid", "65534", "--unshare-user"]
    command += ["--proc", "/proc", "--dev", "/dev", "--dir", "/tmp", "--dir", "/scratch"]
    command += ["--size", str(WORKER_TMP_MB << 20), "--tmpfs", "/run/worker"]
    readable = readable_paths()
    for path in readable:
        command += ["--ro-bind", str(path), str(path)]
    for path in hidden_dirs(readable):
        command += ["--tmpfs", str(path), "--remount-ro", str(path)]
    package = f"{INSIDE_PACKAGES}/autograder"
    command += ["--dir", package]
    for folder in sorted({name.rpartition("/")[0] for name in WORKER_FILES} - {""}):
        command += ["--dir", f"{package}/{folder}"]
    for name, source in shim_files().items():
        command += ["--ro-bind", str(source), f"{package}/{name}"]
    if groups is not None:
        command += ["--dir", INSIDE_CGROUP]
        for controller, group in groups.notebook.items():
            command += ["--bind", str(group / "cgroup.procs"), f"{INSIDE_CGROUP}/{controller}"]
    command += ["--remount-ro", "/dev", "--remount-ro", "/"]
    command += ["--chdir", "/scratch", "--clearenv"]
    env = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": "/run/worker",
        "TMPDIR": "/run/worker",
        "IPYTHONDIR": "/run/worker/ipython",
        "PYTHONPATH": INSIDE_PACKAGES,
        "PYTHONNOUSERSITE": "1",
        "MPLCONFIGDIR": "/run/worker/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
    }
    for name, value in env.items():
        command += ["--setenv", name, value]
    return [*command, python, "-m", "autograder.sandbox.execution"]


# ---------------------------------------------------------------- cgroups


def own_cgroup(controller: str) -> str:
    """This process's cgroup path in a v1 controller's hierarchy ('' when not mounted)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                return path
    return ""


def cgroup_bases(sandbox: Sandbox) -> dict[str, Path]:
    """Per controller, the v1 cgroup directory under which notebook groups are made."""
    bases = {}
    for controller in CONTROLLERS:
        mount = CGROUP_ROOT / controller
        parent = sandbox.cgroup_parent
        if not parent.startswith("/"):
            parent = f"{own_cgroup(controller)}/{parent}"
        bases[controller] = mount / parent.strip("/")
    return bases


def check_cgroups(sandbox: Sandbox, identity: Identity) -> dict[str, Path]:
    """The cgroup bases, verified usable; SandboxUnavailable saying how to fix it."""
    user = pwd.getpwuid(os.geteuid()).pw_name
    problems = []
    bases = cgroup_bases(sandbox)
    for controller, base in bases.items():
        mount = CGROUP_ROOT / controller
        if not (mount / "cgroup.procs").exists():
            problems.append(f"no cgroup v1 '{controller}' controller at {mount}")
            continue
        probe = base / f"autograder-probe-{os.getpid()}-{next(_GROUP_IDS)}"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError as error:
            problems.append(f"cannot create a cgroup under {base} ({error.strerror})")
    if problems:
        delegate = "autograder-" + user
        raise SandboxUnavailable(
            "per-notebook memory, CPU and process limits need cgroups: "
            + "; ".join(problems)
            + ". An administrator can delegate a subtree, e.g. `for c in memory pids cpu; "
            f"do sudo mkdir -p /sys/fs/cgroup/$c/{delegate} && sudo chown -R {user} "
            f"/sys/fs/cgroup/$c/{delegate}; done` and set c.Sandbox.cgroup_parent = "
            f"'/{delegate}'; or opt out with c.Sandbox.require_cgroups = False "
            "(per-process limits only)."
        )
    return bases


@dataclass
class NotebookGroups:
    """One worker's cgroups: the worker in `worker`, each notebook in `notebook` (limited)."""

    top: dict[str, Path]
    worker: dict[str, Path]
    notebook: dict[str, Path]

    def remove(self) -> None:
        for top in self.top.values():
            remove_group(top)


def remove_group(top: Path, tries: int = 50) -> None:
    """Remove a worker's group and its two children (they empty a moment after exit)."""
    for _ in range(tries):
        for group in (top / "notebook", top / "worker", top):
            with contextlib.suppress(FileNotFoundError, OSError):
                group.rmdir()
        if not top.exists():
            return
        time.sleep(0.02)


def remove_stale_groups(bases: dict[str, Path]) -> None:
    """Groups left by a grader that was killed (its pid is gone): removed when empty."""
    for base in bases.values():
        with contextlib.suppress(OSError):
            for top in base.glob("autograder-*-*"):
                pid = top.name.split("-")[1]
                if (
                    pid.isdigit()
                    and not Path(f"/proc/{pid}").exists()
                    and (top / "worker").is_dir()
                ):
                    remove_group(top, tries=1)


def make_groups(sandbox: Sandbox, bases: dict[str, Path], identity: Identity) -> NotebookGroups:
    """Create a worker's cgroups with the notebook limits; the sandbox user may join them."""
    remove_stale_groups(bases)
    name = f"autograder-{os.getpid()}-{next(_GROUP_IDS)}"
    groups = NotebookGroups({}, {}, {})
    try:
        for controller, base in bases.items():
            top = base / name
            top.mkdir()
            groups.top[controller] = top
            for part, store in (("worker", groups.worker), ("notebook", groups.notebook)):
                (top / part).mkdir()
                store[controller] = top / part
        memory = groups.notebook["memory"]
        limit = str(int(sandbox.memory_mb * (1 << 20)))
        (memory / "memory.limit_in_bytes").write_text(limit)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            (memory / "memory.memsw.limit_in_bytes").write_text(limit)
        (groups.notebook["pids"] / "pids.max").write_text(str(sandbox.max_processes))
        # The worker itself: bubblewrap, its shell, the worker and a notebook's first fork.
        (groups.worker["pids"] / "pids.max").write_text("16")
        cpu = groups.notebook["cpu"]
        (cpu / "cpu.cfs_period_us").write_text("100000")
        (cpu / "cpu.cfs_quota_us").write_text(str(max(1000, int(sandbox.cpus * 100000))))
        if identity.uid is not None:
            for group in [*groups.worker.values(), *groups.notebook.values()]:
                for entry in ("cgroup.procs", "tasks"):
                    os.chown(group / entry, identity.uid, identity.gid or -1)
    except OSError as error:
        groups.remove()
        raise SandboxUnavailable(f"cannot set up the notebook's cgroups: {error}") from None
    return groups


# ---------------------------------------------------------------- checks


def check_sandbox(sandbox: Sandbox) -> None:
    """Raise SandboxUnavailable with a clear message if the sandbox cannot run here."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the grading sandbox needs Linux (this is {sys.platform}). "
            "Grade on Linux, or pass --no-sandbox to run submissions unconfined (unsafe)."
        )
    if shutil.which(sandbox.bwrap) is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed: `sudo apt-get install bubblewrap` (or `make system`). "
            "Pass --no-sandbox to run submissions unconfined (unsafe)."
        )
    identity = sandbox_identity(sandbox)
    probe = subprocess.run(
        [sandbox.bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
        user=identity.uid,
        group=identity.gid,
        extra_groups=[] if identity.uid is not None else None,
        cwd="/",
    )
    if probe.returncode != 0:
        raise SandboxUnavailable(
            "bubblewrap cannot create namespaces here "
            f"({probe.stderr.strip() or 'exit ' + str(probe.returncode)}). Enable unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1), or pass --no-sandbox "
            "to run submissions unconfined (unsafe)."
        )
    if sandbox.require_cgroups:
        check_cgroups(sandbox, identity)


# ---------------------------------------------------------------- workers


def default_jobs() -> int:
    """Workers by default: one per core but one, which the grader's own thread needs (it
    prepares, judges and records every notebook, about 0.15 s each; on 2 cores a second
    worker made a class slower: `benchmarks/class_scale.py`)."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass
class ExecutionResult:
    """What one notebook's execution produced."""

    # ok | timeout | died | output_limit | error | worker_died | protocol | unavailable
    status: str
    detail: str = ""
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    started: bool = False  # did any of the notebook's own code start to run?

    @property
    def executed(self) -> bool:
        """Whether the notebook really ran: False means a failure of the grader, not of it."""
        return self.started and self.status not in ("worker_died", "unavailable")


class Worker:
    """One execution worker process (inside the sandbox when enabled)."""

    def __init__(self, sandbox: Sandbox, log_dir: Path) -> None:
        self.sandbox = sandbox
        self.log_dir = log_dir
        self.process: subprocess.Popen[bytes] | None = None
        self.groups: NotebookGroups | None = None
        self.log_path = log_dir / f"worker-{os.getpid()}-{id(self)}.log"
        self._starting = False  # spawned, its "ready" not read yet

    def start_soon(self) -> None:
        """Spawn the worker without waiting; the next `execute` waits for it to be ready.

        The grader calls this before discovering and preparing submissions, so the
        worker's fixed start-up (bubblewrap, Python, `import torch`) overlaps that work.
        It spawns in the calling thread: the sandbox dies with the thread that started it
        (PR_SET_PDEATHSIG), so that thread must outlive the worker (the main thread does).
        """
        if self.process is None and not self._starting:
            try:
                self.spawn()
            except SandboxUnavailable:
                self.stop()
                return  # `execute` starts afresh and reports why
            self._starting = True

    def start(self) -> None:
        """Start the worker and wait until it has imported torch and is ready."""
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the worker process (SandboxUnavailable if that cannot be done)."""
        self._starting = False
        python = str(Path(sys.prefix) / "bin" / "python")
        identity = Identity()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self.sandbox.enabled:
                identity = sandbox_identity(self.sandbox)
                if self.sandbox.require_cgroups:
                    bases = check_cgroups(self.sandbox, identity)
                    self.groups = make_groups(self.sandbox, bases, identity)
                command = bwrap_command(self.sandbox, python, self.groups)
                env: dict[str, str] | None = None
                launcher = [sys.executable, "-I", str(Path(__file__).with_name("launch.py"))]
                if self.groups is not None:
                    # Join the worker's groups before anything forks.
                    launcher += [
                        "--procs",
                        *(str(g / "cgroup.procs") for g in self.groups.worker.values()),
                    ]
                if identity.uid is not None:
                    launcher += ["--uid", str(identity.uid), "--gid", str(identity.gid)]
                    shown = {*readable_paths(), *(f.parent for f in shim_files().values())}
                    launcher += ["--reveal", *map(str, sorted(shown))]
                command = [*launcher, "--", *command]
            else:
                command = [python, "-m", "autograder.sandbox.execution"]
                env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
            with open(self.log_path, "ab") as stderr:
                self.process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=env,
                    cwd="/",
                    start_new_session=True,  # Ctrl-C reaches the grader, which stops them
                )
        except OSError as error:
            raise SandboxUnavailable(f"cannot start the execution worker: {error}") from None

    def wait_ready(self) -> None:
        """Wait until the spawned worker has imported torch (SandboxUnavailable if not)."""
        self._starting = False
        ready = self._read(deadline=time.monotonic() + 120)
        if ready is None or ready.get("event") != "ready":
            self.stop()
            tail = ""
            with contextlib.suppress(OSError):
                tail = self.log_path.read_text(errors="replace").strip()[-600:]
            raise SandboxUnavailable(f"the execution worker did not start: {tail or 'no output'}")

    def _read(self, deadline: float) -> dict[str, Any] | None:
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return None
        try:
            return read_frame(fd)
        except FrameError:
            return None

    def execute(
        self,
        cells: list[str],
        calls: list[dict[str, Any]] | None = None,
        givens: dict[str, float] | None = None,
        learner: str = "",
    ) -> ExecutionResult:
        """Run the code cells of one notebook; never raises for anything the notebook does."""
        if self._starting:
            try:
                self.wait_ready()
            except SandboxUnavailable as error:
                return ExecutionResult("unavailable", str(error))
        if self.process is None or self.process.poll() is not None:
            try:
                self.start()
            except (SandboxUnavailable, OSError) as error:
                return ExecutionResult("unavailable", str(error))
        assert self.process is not None and self.process.stdin is not None
        limits = self.sandbox.limits()
        request = {
            "cells": cells,
            "limits": limits,
            "calls": calls or [],
            "givens": givens or {},
            "learner": learner,
            "isolate": True,
            "require_isolation": self.sandbox.enabled,
            "cgroups": (
                [f"{INSIDE_CGROUP}/{c}" for c in self.groups.notebook] if self.groups else []
            ),
        }
        try:
            write_frame(self.process.stdin.fileno(), request)
        except OSError:
            self.stop()
            return ExecutionResult("worker_died", "the execution worker stopped responding")
        result = ExecutionResult("worker_died")
        deadline = time.monotonic() + limits["wall_seconds"] + 30
        while True:
            frame = self._read(deadline)
            if frame is None:
                self.stop()
                result.status = "worker_died"
                result.detail = "the execution worker stopped responding"
                return result
            if frame.get("event") == "done":
                for cell in frame.get("cells", []):
                    result.cells[int(cell["index"])] = cell
                result.calls = list(frame.get("calls", []))
                result.status = str(frame.get("status", "error"))
                result.detail = str(frame.get("detail", ""))
                result.elapsed = float(frame.get("elapsed", 0.0))
                result.started = bool(frame.get("started", False))
                if not result.started:
                    self.stop()  # set-up failed: start afresh for the next notebook
                return result

    def stop(self, now: bool = False) -> None:
        """Stop the worker (it is restarted by the next execute); `now`: kill it at once."""
        self._starting = False
        if self.process is not None:
            try:
                if now:
                    self.process.kill()
                if self.process.stdin:
                    self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
            if self.process.stdout:
                self.process.stdout.close()
            self.process = None
        if self.groups is not None:
            self.groups.remove()
            self.groups = None
