"""A kept copy of the course's freshly installed venv, for the next clone on this machine.

`tools/setup_venv.sh` installs the pinned stack with pip: about 70 CPU-s (resolving, unpacking
torch, compiling every module). Where it made a venv from nothing and the install passed, it
keeps a copy (`save`); a later clone whose venv would be installed from the same inputs gets
that copy instead (`restore`: its files hard-linked, about 1 CPU-s, then pip installs only
the project, in editable mode, into it: about 5 CPU-s in all).

The same inputs means the same key: the pins (constraints.txt, pyproject.toml), the scripts
that install them, the interpreter (its real path and version) and the machine. Any change to
one of them makes a new key, so pip installs again. A copy is made whole in a folder of its
own and renamed into place, so a half-made one is never taken; the two newest are kept.
Only a venv's `bin/` scripts and `pyvenv.cfg` name its own path: a restored copy has them
rewritten; the bytecode files name their source path too, but Python sets that on import
from where the source is. pip and Python replace files rather than write into them, so the
links stay safe; a file of the venv edited in place (by hand) changes the kept copy too:
remove the kept copies then.

    python tools/venv_cache.py restore VENV   exit 0 made VENV from a kept copy; 1 none kept
    python tools/venv_cache.py save VENV      keep a copy of VENV (never fails the set-up)

`rm -rf ~/.cache/backward-course/venv-*` drops them ($XDG_CACHE_HOME if set).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# What the installed venv depends on, besides the interpreter and the machine.
INPUTS = (
    "constraints.txt",
    "pyproject.toml",
    "tools/setup_venv.sh",
    "tools/install_cpu_torch.sh",
    "tools/venv_cache.py",
)
KEEP = 2
ORIGIN = "origin"  # in a kept copy's folder: the path of the venv it was copied from
COPY = "venv"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "backward-course"


def key(repo: Path = REPO) -> str:
    """The hash of everything the installed venv depends on."""
    digest = hashlib.sha256()
    for name in INPUTS:
        digest.update(name.encode() + b"\0" + (repo / name).read_bytes() + b"\0")
    interpreter = f"{os.path.realpath(sys.executable)} {sys.version} {platform.machine()}"
    digest.update(interpreter.encode())
    return digest.hexdigest()[:20]


def kept(root: Path, name: str) -> Path:
    return root / f"venv-{name}"


def copy_tree(source: Path, target: Path) -> None:
    """`cp -al`: the files hard-linked, as uv links its cache into venvs (copying 2 GB cost
    this machine 4 to 46 CPU-s of system time); `cp -a` where links cannot be made (another
    file system). Symlinks, modes and times kept: the times keep the bytecode valid."""
    linked = subprocess.run(["cp", "-al", "--", str(source), str(target)], capture_output=True)
    if linked.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["cp", "-a", "--", str(source), str(target)], check=True)


def rewrite_paths(venv: Path, old: str) -> None:
    """Where the venv names its old path (`bin/` scripts, `pyvenv.cfg`), the new one. Each
    such file is written anew and renamed over the old (a hard link to the kept copy is
    broken, never written through)."""
    before, after = old.encode(), str(venv.resolve()).encode()
    for path in [venv / "pyvenv.cfg", *sorted((venv / "bin").iterdir())]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if before in data:
            fresh = path.with_name(f".{path.name}.rewritten")
            fresh.write_bytes(data.replace(before, after))
            shutil.copymode(path, fresh)
            os.replace(fresh, path)


def restore(venv: Path, root: Path, name: str) -> bool:
    """Make `venv` (absent) from the kept copy of key `name`; False when none is kept.
    A copy that fails part way is removed, and the error raised."""
    source = kept(root, name)
    if not (source / COPY / "bin" / "python").exists() or venv.exists():
        return False
    old = (source / ORIGIN).read_text(encoding="utf-8")
    try:
        copy_tree(source / COPY, venv)
        rewrite_paths(venv, old)
    except BaseException:
        shutil.rmtree(venv, ignore_errors=True)
        raise
    os.utime(source)  # the newest used: kept longest
    return True


def save(venv: Path, root: Path, name: str) -> Path | None:
    """Keep a copy of `venv` under key `name` (none when one is kept already); older keys
    beyond the newest KEEP are removed."""
    target = kept(root, name)
    if target.exists():
        return None
    root.mkdir(parents=True, exist_ok=True)
    making = root / f".making-{name}-{os.getpid()}"
    shutil.rmtree(making, ignore_errors=True)
    try:
        making.mkdir()
        copy_tree(venv, making / COPY)
        (making / ORIGIN).write_text(str(venv.resolve()), encoding="utf-8")
        making.rename(target)
    except BaseException:
        shutil.rmtree(making, ignore_errors=True)
        raise
    prune(root)
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # PermissionError: alive, someone else's
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def prune(root: Path, keep: int = KEEP) -> list[Path]:
    """Remove all but the `keep` most recently made or used copies, and copies left half
    made by a process that is gone; what was removed."""
    removed = []
    copies = sorted(root.glob("venv-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in copies[keep:]:
        shutil.rmtree(stale, ignore_errors=True)
        removed.append(stale)
    for making in root.glob(".making-*"):
        pid = making.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(making, ignore_errors=True)
            removed.append(making)
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Keep a copy of the course's freshly installed venv, and make a new "
        "clone's venv from it when the pins, the install scripts and the interpreter are "
        "the same.",
    )
    parser.add_argument("action", choices=["restore", "save"])
    parser.add_argument("venv", type=Path, help="the venv to make (restore) or keep (save)")
    args = parser.parse_args(argv)
    root, name = cache_root(), key()
    venv = args.venv.absolute()
    if args.action == "restore":
        try:
            made = restore(venv, root, name)
        except (OSError, subprocess.CalledProcessError) as error:
            print(f"warning: could not copy the kept venv ({error}); installing", file=sys.stderr)
            return 1
        if made:
            print(f"Made {args.venv} from the kept copy of this stack ({kept(root, name)})")
        return 0 if made else 1
    try:
        saved = save(venv, root, name)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"warning: could not keep a copy of {args.venv}: {error}", file=sys.stderr)
        return 0
    if saved:
        print(f"Kept a copy of {args.venv} for the next clone: {saved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
