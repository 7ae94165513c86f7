"""What a grading command leaves unloaded of the libraries it imports: what grading never uses.

A one-notebook grade is mostly imports (nbgrader, nbconvert, SQLAlchemy, nbformat: about
0.6 of a resubmission's 1.0 s). Two of them load code a grading command never runs:

- **`requests`**, imported by nbgrader's JupyterHub authenticator (`nbgrader.auth`, which
  `nbgrader.api` imports) to talk to a hub's API, which grading never does. It is loaded
  lazily (`importlib.util.LazyLoader`): `import requests` succeeds at once and the module
  runs on its first use, the same module as ever.
- **jsonschema's optional format checkers `isoduration` (with `arrow`) and
  `rfc3986_validator`**, imported by `jsonschema` (which nbformat imports) to check the
  `duration` and `uri` formats. Formats are checked only by a validator given a format
  checker, and none is in a grading command (nbformat and nbgrader make theirs without
  one). While jsonschema is first imported, they are not found, as if not installed;
  afterwards they import as usual.

Together about 0.05 s of every `autograder grade` (`benchmarks/small_jobs.py --against`).
Nothing changes for a library imported already.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

LAZY = ("requests",)
"""Imported by nbgrader for what grading never does: loaded on first use."""

UNUSED_FORMAT_CHECKERS = ("isoduration", "rfc3986_validator")
"""jsonschema's optional format checkers that a grading command never calls."""


class _Lazily(importlib.abc.MetaPathFinder):
    """Finds the modules of LAZY as the other finders do, with a loader that runs each
    on first use."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in LAZY:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


class _NotFound(importlib.abc.MetaPathFinder):
    """Finds the modules of UNUSED_FORMAT_CHECKERS nowhere (`import` raises ImportError)."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name.partition(".")[0] in UNUSED_FORMAT_CHECKERS:
            raise ModuleNotFoundError(f"not loaded in a grading command: {name}", name=name)
        return None


def lean_imports() -> None:
    """From now on in this process, LAZY loads on first use, and jsonschema is imported
    now without UNUSED_FORMAT_CHECKERS (see the module docstring)."""
    if not any(isinstance(finder, _Lazily) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Lazily())
    if "jsonschema" in sys.modules:
        return
    hidden = _NotFound()
    sys.meta_path.insert(0, hidden)
    try:
        import jsonschema  # noqa: F401  (its format checkers are registered as it loads)
    except ImportError:
        pass  # not installed: nbformat says so itself, where it needs it
    finally:
        sys.meta_path.remove(hidden)
