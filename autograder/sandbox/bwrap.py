"""The bubblewrap sandbox a worker runs in, and the check that it can run here.

Each grading slot is one worker (`autograder.sandbox.execution`) started under bubblewrap:
no network, its own PID, IPC, UTS and (cgroup v1) cgroup namespaces, a cleared
environment, and a read-only root holding only the system libraries, the Python
installation and the virtual environment, plus the answer-free `autograder_shim` package
mounted as `autograder` with the worker's own modules (`WORKER_FILES`). The course
directory, the real `autograder` package (references, diagnoses, functions), solutions/,
the gradebook, other submissions and the instructor's home are not there.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.sandbox.cgroups import UNIFIED, NotebookGroups, check_cgroups
from autograder.sandbox.settings import Sandbox, SandboxUnavailable, sandbox_identity

SHIM_DIR = Path(__file__).resolve().parents[2] / "autograder_shim"
WORKER_FILES = (  # answer-free: mounted in the sandbox at the same place in the package
    "sandbox/__init__.py",
    "sandbox/execution.py",
    "sandbox/template.py",
    "sandbox/notebook.py",
    "sandbox/capture.py",
    "sandbox/isolation.py",
    "sandbox/framing.py",
    "sandbox/confine.py",
    "core/__init__.py",
    "core/startup.py",
    "core/value_build.py",
)
INSIDE_PACKAGES = "/opt/autograder"  # on PYTHONPATH in the sandbox
INSIDE_CGROUP = "/run/cgroup"  # where the notebook group's cgroup.procs files appear
INSIDE_CPU_USAGE = f"{INSIDE_CGROUP}-cpu"  # its CPU counter, read-only (see `cgroups`)
WORKER_TMP_MB = 32


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


def unshare_flags(groups: NotebookGroups | None) -> list[str]:
    """Every namespace bubblewrap can make; under cgroup v2 not the cgroup namespace, whose
    root would be the worker's group: with `nsdelegate` (systemd's default) a notebook
    could then not move into its sibling group `notebook`."""
    if groups is not None and UNIFIED in groups.notebook:
        return [f"--unshare-{kind}" for kind in ("user", "ipc", "pid", "net", "uts")]
    return ["--unshare-all", "--unshare-user"]


def bwrap_command(sandbox: Sandbox, python: str, groups: NotebookGroups | None) -> list[str]:
    """The bubblewrap command line that starts one execution worker."""
    command = [sandbox.bwrap, *unshare_flags(groups), "--die-with-parent", "--new-session"]
    command += ["--uid", "65534", "--gid", "65534"]
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
        for key, group in groups.notebook.items():
            command += ["--bind", str(group / "cgroup.procs"), f"{INSIDE_CGROUP}/{key}"]
        command += ["--ro-bind", str(groups.cpu_usage_file()), INSIDE_CPU_USAGE]
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
