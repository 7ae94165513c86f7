"""How a notebook's child shuts itself in: cgroups, namespaces, private mounts, rlimits.

Each notebook's child first joins the notebook's cgroups (the grader made them and mounted
their `cgroup.procs` files under /run/cgroup), then takes new user, PID, mount, IPC,
network and UTS namespaces, covers every writable place with a private size-capped tmpfs
that dies with it, and sets rlimits (`autograder.sandbox.notebook` calls these in order;
`confine` then gives up privilege for good).
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NOTEBOOK_NAMESPACES = (
    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
)
PRIVATE_DIRS = ("/tmp", "/scratch", "/dev/shm", "/run/worker")
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36

DEFAULT_LIMITS: dict[str, float] = {
    "wall_seconds": 300.0,
    "cpu_seconds": 120.0,
    "memory_mb": 2048.0,
    "max_processes": 64.0,
    "max_output_bytes": 4_000_000.0,
    "max_file_mb": 64.0,
    "scratch_mb": 256.0,
}

libc = ctypes.CDLL(None, use_errno=True)


def set_limits(limits: dict[str, float]) -> None:
    """Apply rlimits to this process (inherited by anything it starts)."""
    vm_kb = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                vm_kb = int(line.split()[1])
    memory = vm_kb * 1024 + int(limits["memory_mb"] * 1024 * 1024)
    cpu = int(limits["cpu_seconds"])
    file_size = int(limits["max_file_mb"] * 1024 * 1024)
    nproc = int(limits["max_processes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # A second past the budget: where a cgroup counts the notebook's CPU, the relay stops
    # it first and says why; this holds each process where nothing counts.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu + 1, cpu + 3))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def needed_paths() -> list[str]:
    """What the notebook must keep reading: Python, the venv, the packages it imports."""
    import importlib.util

    paths = {sys.prefix, sys.base_prefix}
    spec = importlib.util.find_spec("autograder")
    if spec is not None and spec.origin:
        paths.add(os.path.dirname(os.path.dirname(spec.origin)))
    return sorted(os.path.realpath(p) for p in paths)


NEEDED_PATHS: list[str] = []  # filled once by the worker, before it forks


def private_mounts(scratch_mb: int) -> None:
    """In a fresh mount namespace: a private tmpfs on every writable place (OSError if not).

    Anything Python needs that lives under one of them (a venv in /tmp, say) is carried
    over onto the fresh tmpfs, read-only.
    """
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "cannot make the mounts private")
    options = f"size={scratch_mb}m,mode=1777".encode()
    needed = NEEDED_PATHS or needed_paths()
    for target in PRIVATE_DIRS:
        if not os.path.isdir(target):
            continue
        # Hold each needed directory by a file descriptor, cover the target with a fresh
        # tmpfs, then bind the held directories back (read-only) through /proc/self/fd.
        held = [
            (os.open(p, os.O_PATH | os.O_DIRECTORY), p)
            for p in needed
            if p.startswith(target + "/")
        ]
        flags = MS_NOSUID | MS_NODEV
        if libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, options) != 0:
            raise OSError(ctypes.get_errno(), f"cannot mount a private tmpfs on {target}")
        for fd, path in held:
            os.makedirs(path, exist_ok=True)
            source = f"/proc/self/fd/{fd}".encode()
            libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None)
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_REC
            libc.mount(None, path.encode(), None, flags, None)
            os.close(fd)


def join_cgroups(procs_files: list[str]) -> None:
    """Move this process into the notebook's cgroups (before it starts anything)."""
    for path in procs_files:
        with open(path, "w") as procs:
            procs.write("0")


def map_identity(uid: int, gid: int) -> None:
    """Keep the same uid/gid inside the new user namespace (files stay usable).

    The worker is not dumpable (so notebooks cannot read its memory), which would leave
    /proc/self owned by root and these files unwritable to an unprivileged grader: the
    child is dumpable just while it writes them.
    """
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    with open("/proc/self/setgroups", "w") as setgroups:
        setgroups.write("deny")
    with open("/proc/self/uid_map", "w") as uid_map:
        uid_map.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as gid_map:
        gid_map.write(f"{gid} {gid} 1")
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def redirect_standard_fds() -> None:
    """Raw writes to fd 1/2 go nowhere; only captured Python-level output is recorded."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
