"""Every graded quantity of an exercise, for one learner's given values, computed by PyTorch.

Nothing here is typed in: the values come from each exercise's spec
(`autograder/specs/`) run by the generic engine (`autograder.core.engine`), which
checks every gradient against finite differences and every taught chain against PyTorch.
The per-exercise tables live in docs/exercises.md, generated from the specs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autograder.core.quantities import Quantity
from autograder.specs import SPECS, exercise_spec

EXERCISES: tuple[str, ...] = tuple(SPECS)


_store: Path | None = None  # see `stored_in`


def _torch_build() -> bytes:
    """The text of the installed PyTorch's `version.py` (b"" when PyTorch is not installed)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return b""
    try:
        return (Path(spec.origin).parent / "version.py").read_bytes()
    except OSError:
        return b""


@functools.cache
def _code_fingerprint() -> str:
    """What reference values depend on: the specs, the engine, and PyTorch's build (its
    `torch/version.py`: version and commit, read without importing PyTorch)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(_torch_build())
    code = [*(package / "core").glob("*.py"), *(package / "specs").glob("*.py")]
    for path in sorted(code, key=lambda p: (p.parent.name, p.name)):
        digest.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _stored_path(exercise: str, givens: tuple[tuple[str, float], ...]) -> Path | None:
    if _store is None:
        return None
    name = hashlib.sha256(json.dumps([exercise, givens]).encode()).hexdigest()[:24]
    return _store / _code_fingerprint() / exercise / f"{name}.json"


@contextmanager
def stored_in(folder: Path) -> Iterator[None]:
    """Meanwhile, keep computed reference values in `folder` as well, and read them from it:
    a later run (a resubmission graded by a new command) then needs no PyTorch in the
    grader. Entries are keyed by the givens and by a fingerprint of the specs, the engine
    and PyTorch's version, so a changed spec is computed afresh; an unreadable entry is
    computed again."""
    global _store
    previous, _store = _store, folder
    try:
        yield
    finally:
        _store = previous


def holds_values(folder: Path) -> bool:
    """Whether `folder` (a `stored_in` folder) holds values computed by this code."""
    return (folder / _code_fingerprint()).is_dir()


def _read_stored(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) else None


def _keep(path: Path | None, row: dict[str, Any]) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
        with os.fdopen(fd, "w") as out:
            json.dump(row, out)
        os.replace(temporary, path)
    except OSError:
        pass  # only a cache: the next run computes it again


@functools.lru_cache(maxsize=1024)
def _values(exercise: str, givens: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    from autograder.core.engine import compute

    path = _stored_path(exercise, givens)
    row = _read_stored(path)
    if row is None:
        (row,) = compute(exercise_spec(exercise), [dict(givens)])
        _keep(path, row)
    return row


def _key(exercise: str, givens: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    spec = exercise_spec(exercise)
    missing = [n for n in (*spec.given_names, *spec.constants) if n not in givens]
    if missing:
        raise KeyError(f"{exercise}: no value for the given(s) {', '.join(missing)}")
    return tuple((n, float(givens[n])) for n in (*spec.given_names, *spec.constants))


def reference_values(exercise: str, givens: Mapping[str, float]) -> dict[str, Any]:
    """Every named value (givens, nodes, parts) of `exercise` for `givens` (cached)."""
    return dict(_values(exercise, _key(exercise, givens)))


def reference_rows(exercise: str, many: list[Mapping[str, float]]) -> list[dict[str, Any] | None]:
    """`reference_values` for each of `many` sets of givens, those not stored computed in
    one batch; None for a set PyTorch's checks refuse (e.g. a point on a kink)."""
    from autograder.core.engine import compute

    spec = exercise_spec(exercise)
    keys = [_key(exercise, {**spec.constants, **givens}) for givens in many]
    rows: list[dict[str, Any] | None] = [_read_stored(_stored_path(exercise, k)) for k in keys]
    missing = [i for i, row in enumerate(rows) if row is None]
    if not missing:
        return rows
    try:
        computed = compute(spec, [dict(keys[i]) for i in missing])
    except Exception:  # noqa: BLE001  (one refused set: compute them one by one)
        computed = []
        for i in missing:
            try:
                computed += compute(spec, [dict(keys[i])])
            except Exception:  # noqa: BLE001
                computed.append({})
    for i, row in zip(missing, computed, strict=True):
        if row:
            _keep(_stored_path(exercise, keys[i]), row)
            rows[i] = row
    return rows


def is_stored(exercise: str, givens: Mapping[str, float]) -> bool:
    """Whether `reference_values` for these givens need no computing (so no PyTorch)."""
    key = _key(exercise, {**exercise_spec(exercise).constants, **givens})
    path = _stored_path(exercise, key)
    return path is not None and path.is_file()


def reference_quantities(exercise: str, givens: Mapping[str, float]) -> dict[str, Quantity]:
    """The graded quantities of `exercise` for `givens`, by notebook variable."""
    spec = exercise_spec(exercise)
    full = {**spec.constants, **givens}
    values = reference_values(exercise, full)
    return {
        p.name: Quantity(
            p.name,
            p.label,
            values[p.name],
            p.kind,
            gate=p.gate,
            hint=p.hint,
            part=p,
            spec=spec,
            values=values,
        )
        for p in spec.parts
        if p.kind not in ("function", "class")
    }
