"""Per-notebook limits with cgroups, v1 or v2: memory (in-memory files too), processes, CPU.

A notebook's CPU is also counted (v2: `cpu.stat`; v1: the `cpuacct` controller), so that
its budget is CPU time spent, which a busy machine does not use up, not wall time.

Each worker gets a group `autograder-<pid>-<n>` with two children: `worker` (bubblewrap,
the relay and the template) and `notebook` (each notebook's processes together, limited).
The grader makes them; the worker joins `worker` before anything forks, and each
notebook's child joins `notebook` before any of its code runs.

- cgroup v1 (each controller mounted at /sys/fs/cgroup/<controller>): one such tree per
  controller under the grader's own group, or under `c.Sandbox.cgroup_parent`.
- cgroup v2 (one hierarchy at /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid
  machines): one tree under a delegated group, as systemd gives one (`systemd-run
  --scope -p Delegate=yes ...`). v2 lets a group hand controllers to its children only
  when it holds no process itself, so a grader that sits in the delegated group moves
  itself into a leaf `autograder-grader` first; the sandbox user may write the worker's
  group's `cgroup.procs` (v2 moves need write access at the common ancestor).

Where neither can be used, `check_cgroups` raises SandboxUnavailable saying how to fix it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import time
from dataclasses import dataclass
from itertools import count
from pathlib import Path

from autograder.sandbox.settings import Identity, Sandbox, SandboxUnavailable

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
ACCOUNTING = "cpuacct"  # v1: counts a group's CPU time (v2 counts it in every group)
UNIFIED = "unified"  # the one cgroup v2 hierarchy (its key where v1 has controllers)
GRADER_LEAF = "autograder-grader"  # where a v2 grader moves itself out of its own group
WORKER_PIDS = 16  # bubblewrap, the relay, the template and a notebook's first forks
_GROUP_IDS = count()


def own_cgroup(controller: str) -> str:
    """This process's cgroup path in a v1 controller's hierarchy, or in the v2 hierarchy
    for `UNIFIED` ('' when not mounted)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            number, names, path = line.split(":", 2)
            if controller == UNIFIED and number == "0" and not names:
                return path
            if controller in names.split(","):
                return path
    return ""


def v1_hierarchies() -> tuple[str, ...]:
    """The v1 hierarchies a notebook joins: the limits' controllers, and `cpuacct` where it
    is not mounted together with `cpu` (then `cpu` already counts)."""
    if (CGROUP_ROOT / "cpu" / "cpuacct.usage").exists():
        return CONTROLLERS
    return (*CONTROLLERS, ACCOUNTING)


def v1_mounted() -> bool:
    """Whether every controller the limits need has a v1 hierarchy here."""
    return all((CGROUP_ROOT / c / "cgroup.procs").exists() for c in v1_hierarchies())


def v2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, if it is."""
    for mount in (CGROUP_ROOT, CGROUP_ROOT / UNIFIED):
        if (mount / "cgroup.controllers").exists():
            return mount
    return None


def cgroup_version(sandbox: Sandbox) -> str:
    """'1' or '2': as configured, or v1 where its controllers are mounted, else v2."""
    if sandbox.cgroup_version != "auto":
        return str(sandbox.cgroup_version)
    return "2" if not v1_mounted() and v2_mount() is not None else "1"


def under(parent: str, own: str) -> str:
    """`cgroup_parent` resolved: absolute as it is, relative under the grader's own group."""
    return (parent if parent.startswith("/") else f"{own}/{parent}").strip("/")


def cgroup_bases(sandbox: Sandbox) -> dict[str, Path]:
    """Per hierarchy (v1: each controller; v2: `UNIFIED`), where notebook groups are made."""
    if cgroup_version(sandbox) == "2":
        own = own_cgroup(UNIFIED)
        if not sandbox.cgroup_parent and own.rstrip("/").endswith("/" + GRADER_LEAF):
            own = own.rstrip("/").rpartition("/")[0]  # this grader left its group earlier
        mount = v2_mount() or CGROUP_ROOT
        return {UNIFIED: mount / under(sandbox.cgroup_parent, own)}
    return {
        c: CGROUP_ROOT / c / under(sandbox.cgroup_parent, own_cgroup(c)) for c in v1_hierarchies()
    }


def v2_problems(base: Path) -> list[str]:
    """What keeps `base` from holding limited notebook groups under cgroup v2."""
    if v2_mount() is None:
        return [f"no cgroup v2 hierarchy at {CGROUP_ROOT}"]
    try:
        offered = (base / "cgroup.controllers").read_text().split()
    except OSError as error:
        return [f"no cgroup v2 group at {base} ({error.strerror})"]
    missing = [c for c in CONTROLLERS if c not in offered]
    if missing:
        bound = " (on this machine they are bound to cgroup v1: use c.Sandbox.cgroup_version = '1')"
        return [
            f"the cgroup v2 group {base} is offered no {', '.join(missing)} controller by its "
            f"parent{bound if v1_mounted() else ''}"
        ]
    return []


def check_cgroups(sandbox: Sandbox, identity: Identity) -> dict[str, Path]:
    """The cgroup bases, verified usable; SandboxUnavailable saying how to fix it."""
    user = pwd.getpwuid(os.geteuid()).pw_name
    problems = []
    bases = cgroup_bases(sandbox)
    for key, base in bases.items():
        if key == UNIFIED:
            problems += v2_problems(base)
        elif not (CGROUP_ROOT / key / "cgroup.procs").exists():
            problems.append(f"no cgroup v1 '{key}' controller at {CGROUP_ROOT / key}")
        if problems:
            continue
        probe = base / f"autograder-probe-{os.getpid()}-{next(_GROUP_IDS)}"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError as error:
            problems.append(f"cannot create a cgroup under {base} ({error.strerror})")
    if problems:
        delegate = "autograder-" + user
        if UNIFIED in bases:
            fix = (
                "Run the grader in a delegated cgroup v2 group, e.g. `systemd-run --user "
                "--scope -p Delegate=yes autograder grade` (as root: without --user), or "
                f"have an administrator make one: `sudo mkdir /sys/fs/cgroup/{delegate} && "
                f"sudo chown -R {user} /sys/fs/cgroup/{delegate}` with memory, pids and cpu "
                "in its parent's cgroup.subtree_control, and set c.Sandbox.cgroup_parent = "
                f"'/{delegate}'"
            )
        else:
            fix = (
                f"An administrator can delegate a subtree, e.g. `for c in {' '.join(bases)}; "
                f"do sudo mkdir -p /sys/fs/cgroup/$c/{delegate} && sudo chown -R {user} "
                f"/sys/fs/cgroup/$c/{delegate}; done` and set c.Sandbox.cgroup_parent = "
                f"'/{delegate}'"
            )
        raise SandboxUnavailable(
            "per-notebook memory, CPU and process limits need cgroups: "
            + "; ".join(problems)
            + f". {fix}; or opt out with c.Sandbox.require_cgroups = False "
            "(per-process limits only)."
        )
    return bases


@dataclass
class NotebookGroups:
    """One worker's cgroups: the worker in `worker`, each notebook in `notebook` (limited).
    Keyed by hierarchy: the v1 controllers, or `UNIFIED`."""

    top: dict[str, Path]
    worker: dict[str, Path]
    notebook: dict[str, Path]

    def remove(self) -> None:
        for top in self.top.values():
            remove_group(top)

    def cpu_usage_file(self) -> Path:
        """The file that counts the notebook group's CPU time (read by the worker's relay)."""
        if UNIFIED in self.notebook:
            return self.notebook[UNIFIED] / "cpu.stat"
        for group in self.notebook.values():
            if (group / "cpuacct.usage").exists():
                return group / "cpuacct.usage"
        raise SandboxUnavailable("no cgroup v1 'cpuacct' controller counts the notebook's CPU")


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


def leave_group(base: Path) -> None:
    """Move this grader out of `base` into its leaf, if it is the only process there (v2:
    a group that hands controllers to its children may hold no process itself)."""
    procs = (base / "cgroup.procs").read_text().split()
    if not procs:
        return
    if procs != [str(os.getpid())]:
        raise OSError(
            f"{base} holds other processes ({len(procs)}); run the grader alone in a "
            "delegated group (systemd-run --scope -p Delegate=yes ...)"
        )
    leaf = base / GRADER_LEAF
    leaf.mkdir(exist_ok=True)
    (leaf / "cgroup.procs").write_text(str(os.getpid()))


def enable_controllers(group: Path, controllers: tuple[str, ...]) -> None:
    """Hand `controllers` to the children of `group` (v2), unless it already does."""
    enabled = (group / "cgroup.subtree_control").read_text().split()
    wanted = [c for c in controllers if c not in enabled]
    if wanted:
        if group != v2_mount() and (group / "cgroup.procs").read_text().strip():
            leave_group(group)
        (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))


def make_tree(bases: dict[str, Path]) -> NotebookGroups:
    """A worker's group with its `worker` and `notebook` children in every hierarchy."""
    remove_stale_groups(bases)
    name = f"autograder-{os.getpid()}-{next(_GROUP_IDS)}"
    groups = NotebookGroups({}, {}, {})
    try:
        for key, base in bases.items():
            top = base / name
            top.mkdir()
            groups.top[key] = top
            for part, store in (("worker", groups.worker), ("notebook", groups.notebook)):
                (top / part).mkdir()
                store[key] = top / part
    except OSError:
        groups.remove()
        raise
    return groups


def make_v2_groups(
    base: Path, controllers: tuple[str, ...], limits: dict[str, str], identity: Identity
) -> NotebookGroups:
    """A v2 worker tree under `base` with `controllers` handed down and `limits` (file in
    `notebook` or `worker/...` -> value) written; the sandbox user may move between them."""
    enable_controllers(base, controllers)
    groups = make_tree({UNIFIED: base})
    try:
        top = groups.top[UNIFIED]
        enable_controllers(top, controllers)
        for name, value in limits.items():
            target = top / name if "/" in name else groups.notebook[UNIFIED] / name
            if target.exists() or not name.endswith("swap.max"):
                target.write_text(value)
        if identity.uid is not None:
            for group in (top, groups.worker[UNIFIED], groups.notebook[UNIFIED]):
                os.chown(group / "cgroup.procs", identity.uid, identity.gid or -1)
    except OSError:
        groups.remove()
        raise
    return groups


def v2_limits(sandbox: Sandbox) -> dict[str, str]:
    """The notebook's limits as cgroup v2 files (swap counted: none allowed)."""
    return {
        "memory.max": str(int(sandbox.memory_mb * (1 << 20))),
        "memory.swap.max": "0",
        "pids.max": str(sandbox.max_processes),
        "cpu.max": f"{max(1000, int(sandbox.cpus * 100000))} 100000",
        "worker/pids.max": str(WORKER_PIDS),
    }


def make_v1_groups(sandbox: Sandbox, bases: dict[str, Path], identity: Identity) -> NotebookGroups:
    """A v1 worker tree per controller, with the notebook limits written."""
    groups = make_tree(bases)
    try:
        memory = groups.notebook["memory"]
        limit = str(int(sandbox.memory_mb * (1 << 20)))
        (memory / "memory.limit_in_bytes").write_text(limit)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            (memory / "memory.memsw.limit_in_bytes").write_text(limit)
        (groups.notebook["pids"] / "pids.max").write_text(str(sandbox.max_processes))
        (groups.worker["pids"] / "pids.max").write_text(str(WORKER_PIDS))
        cpu = groups.notebook["cpu"]
        (cpu / "cpu.cfs_period_us").write_text("100000")
        (cpu / "cpu.cfs_quota_us").write_text(str(max(1000, int(sandbox.cpus * 100000))))
        if identity.uid is not None:
            for group in [*groups.worker.values(), *groups.notebook.values()]:
                for entry in ("cgroup.procs", "tasks"):
                    os.chown(group / entry, identity.uid, identity.gid or -1)
    except OSError:
        groups.remove()
        raise
    return groups


def make_groups(sandbox: Sandbox, bases: dict[str, Path], identity: Identity) -> NotebookGroups:
    """Create a worker's cgroups with the notebook limits; the sandbox user may join them."""
    try:
        if UNIFIED in bases:
            return make_v2_groups(bases[UNIFIED], CONTROLLERS, v2_limits(sandbox), identity)
        return make_v1_groups(sandbox, bases, identity)
    except OSError as error:
        raise SandboxUnavailable(f"cannot set up the notebook's cgroups: {error}") from None
