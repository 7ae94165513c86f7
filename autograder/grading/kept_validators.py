"""nbformat's notebook validators, compiled once per machine, not in every command.

nbformat checks each notebook it reads or writes against its JSON schema, with a
validator that fastjsonschema generates from the schema: 170 kB of Python source,
generated and compiled at first use in every process (about 45 ms a schema; a grading
command uses two). `keep_validators()` makes nbformat's validators come from a compiled
copy kept in the user's cache folder (`folder()`), named by a hash of everything the
code depends on (the schema, fastjsonschema's and Python's versions): the same `validate`
function that `fastjsonschema.compile_to_code` writes, loaded in a fraction of a
millisecond. The copy is executed as the grader, so a file that is not the user's own,
or that others may write, is never loaded (it is made again); one that cannot be read
or written is made in memory, as nbformat would.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

Validate = Callable[..., Any]


def folder() -> Path:
    """Where the compiled validators are kept: $XDG_CACHE_HOME (else ~/.cache), in
    `backward-course/validators`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "backward-course" / "validators"


def _name(schema: Any, version: str) -> str:
    text = json.dumps([schema, version, sys.version, marshal.version], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32] + ".marshal"


def _own(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether `path` is of `kind` (`stat.S_ISREG`...), this user's, and no one else may
    write it."""
    info = path.lstat()
    writable_by_others = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return kind(info.st_mode) and info.st_uid == os.geteuid() and not writable_by_others


def _load(path: Path) -> Any:
    """The code kept at `path`, or None when there is none fit to run."""
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        if _own(path.parent, stat.S_ISDIR) and _own(path, stat.S_ISREG):
            return marshal.loads(path.read_bytes())
    return None


def _keep(path: Path, code: Any) -> None:
    """Write `code` to `path` atomically; nothing when the folder cannot be written."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".writing-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps(code))
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def kept_validator(schema: Any, where: Path | None = None) -> Validate:
    """fastjsonschema's validator of `schema`, from the copy kept in `where` (default
    `folder()`), made and kept first when there is none fit to run."""
    import fastjsonschema

    path = (where or folder()) / _name(schema, fastjsonschema.VERSION)
    code = _load(path)
    if code is None:
        source = fastjsonschema.compile_to_code(schema)
        code = compile(source, f"<fastjsonschema validator {path.name}>", "exec")
        _keep(path, code)
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    validate: Validate = namespace["validate"]
    return validate


class _KeptCompile:
    """The `fastjsonschema` module as nbformat sees it, with `compile` kept."""

    def __init__(self, module: Any) -> None:
        self.module = module

    def compile(self, schema: Any, *args: Any, **kwargs: Any) -> Validate:
        if args or kwargs:  # nbformat passes the schema alone: another use, as it was
            compiled: Validate = self.module.compile(schema, *args, **kwargs)
            return compiled
        return kept_validator(schema)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)


def keep_validators() -> None:
    """From now on in this process, nbformat's validators come from the kept copies.
    nbformat 5 makes each with `fastjsonschema.compile(schema)`, the module it imported;
    that name is what changes (tests/grading/test_kept_validators.py sees the copies made
    when nbformat reads and writes, so a version that no longer calls it is noticed)."""
    import nbformat.json_compat

    json_compat: Any = nbformat.json_compat
    module = json_compat.fastjsonschema
    if module is not None and not isinstance(module, _KeptCompile):
        json_compat.fastjsonschema = _KeptCompile(module)
