"""Every exercise's spec, one module each; `SPECS` maps the assignment name to its spec.

The modules `exNN_<name>.py` are found by name, in order: adding an exercise is writing
its module (with a `SPEC`) and the prose of its solution notebook, whose graded cells
`python -m autograder.spec_notebooks --write` generates; then `make exercises`.
"""

from __future__ import annotations

import importlib
import pkgutil

from autograder.spec import ExerciseSpec


def _discover() -> dict[str, ExerciseSpec]:
    found: dict[str, ExerciseSpec] = {}
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ex"))
    for module_name in names:
        spec = importlib.import_module(f"{__name__}.{module_name}").SPEC
        if not isinstance(spec, ExerciseSpec) or module_name != f"ex{spec.name}":
            raise TypeError(f"{__name__}.{module_name}: SPEC must be the ExerciseSpec {module_name[2:]}")
        found[spec.name] = spec
    return found


SPECS: dict[str, ExerciseSpec] = _discover()
