"""Start a sandbox worker: join its cgroups, become the sandbox user, exec bubblewrap.

Run by the grader as `python autograder/sandbox/launch.py [options] -- COMMAND...` (by path, so
only the standard library is imported):

- `--procs FILE...`: write this process's pid into each cgroup.procs before anything forks;
- `--uid U --gid G` (grading as root): drop to that unprivileged identity for good
  (supplementary groups cleared, real, effective and saved ids all changed);
- `--reveal DIR...` (with `--uid`): directories the sandbox must read whose parents that
  user cannot enter (a Python under /root, say). In a private mount namespace the
  topmost closed parent is covered by an empty tmpfs and each directory is bound back
  read-only at its own path, so bubblewrap, running as the unprivileged user, finds it.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

CLONE_NEWNS, MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    0x20000,
    0x1,
    0x20,
    0x1000,
    0x4000,
    0x40000,
)
_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), what)


def can_enter(path: str, uid: int, gid: int) -> bool:
    """Whether `uid`/`gid` (no supplementary groups) may traverse directory `path`."""
    info = os.stat(path)
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def closed_parent(path: str, uid: int, gid: int) -> str | None:
    """The topmost ancestor of `path` that `uid` cannot enter, if any."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts)):
        ancestor = "/" + "/".join(parts[:i])
        if not can_enter(ancestor, uid, gid):
            return ancestor
    return None


def reveal(paths: list[str], uid: int, gid: int) -> None:
    """Make each path reachable by uid in this (new, private) mount namespace."""
    closed = [(parent, path) for path in paths if (parent := closed_parent(path, uid, gid))]
    if not closed:
        return
    _call(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _call(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    covers: dict[str, list[tuple[int, str]]] = {}
    for parent, path in closed:  # held in the new namespace, before they are covered
        covers.setdefault(parent, []).append((os.open(path, os.O_PATH), path))
    for parent, held in sorted(covers.items()):
        _call(_libc.mount(b"tmpfs", parent.encode(), b"tmpfs", 0, b"mode=755,size=1m"), parent)
        for fd, path in held:
            os.makedirs(path, mode=0o755, exist_ok=True)
            source = f"/proc/self/fd/{fd}".encode()
            _call(_libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None), path)
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            _call(_libc.mount(None, path.encode(), None, flags, None), path)
            os.close(fd)
        flags = MS_REMOUNT | MS_RDONLY
        _call(_libc.mount(None, parent.encode(), None, flags, b"mode=755,size=1m"), parent)


def parse(options: list[str]) -> dict[str, list[str]]:
    """`--name value...` groups into {name: [values]}."""
    parsed: dict[str, list[str]] = {"--uid": [], "--gid": [], "--procs": [], "--reveal": []}
    current: list[str] | None = None
    for item in options:
        if item in parsed:
            current = parsed[item]
        elif current is None:
            raise SystemExit(f"launch: unexpected argument {item!r}")
        else:
            current.append(item)
    return parsed


def main(argv: list[str]) -> None:
    split = argv.index("--")
    options, command = parse(argv[:split]), argv[split + 1 :]
    for path in options["--procs"]:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
    if options["--uid"]:
        uid, gid = int(options["--uid"][0]), int(options["--gid"][0])
        reveal(options["--reveal"], uid, gid)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if 0 in (os.geteuid(), os.getegid(), *os.getresuid(), *os.getresgid()):
            raise SystemExit("launch: could not drop root")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
