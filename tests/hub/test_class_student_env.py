"""The students' environment cloned from the built course venv (class_student_env.py).

What is copied is the runtime closure of the project's dependencies at their pins, never
the dev tools or the project itself; a venv that does not hold the pins is not cloned and
leaves nothing behind; a script's interpreter line names the new venv. The whole clone is
built by benchmarks/class_start.py (against pip's build) and by the class hub's tests.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "hub"))

import class_student_env as student_env  # noqa: E402


def names(dists: list[object]) -> set[str]:
    return {canonicalize_name(d.metadata["Name"]) for d in dists}  # type: ignore[attr-defined]


def test_the_clone_takes_the_runtime_stack_at_its_pins_and_no_dev_tool() -> None:
    dists = student_env.runtime_distributions(Path(sys.prefix))
    found = names(dists)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert runtime <= found
    assert {"pip", "numpy", "jupyter-server", "sqlalchemy"} <= found  # dependencies' own
    tools = {"pytest", "ruff", "mypy", "playwright", "hypothesis", "nbval", "pre-commit"}
    assert not tools & found, tools & found  # the dev extra's tools (PyYAML is runtime's too)
    assert "backward-course" not in found  # the project (its answer key) never
    pins = student_env.pins()
    for dist in dists:
        name = canonicalize_name(dist.metadata["Name"])
        if name in pins:
            assert dist.version.split("+")[0] == pins[name], name


@pytest.mark.processes
def test_a_venv_without_the_pins_is_not_cloned_and_leaves_nothing(tmp_path: Path) -> None:
    source, env = tmp_path / "source", tmp_path / "env"
    python = student_env.base_interpreter(Path(sys.prefix))
    assert python is not None
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(source)], check=True)
    with pytest.raises(student_env.CannotClone, match="is not installed in"):
        student_env.clone_stack(source, env, python)
    assert not env.exists()
    with pytest.raises(student_env.CannotClone, match="is not a venv"):
        student_env.clone_stack(tmp_path, env, python)
    with pytest.raises(student_env.CannotClone, match="was not made from"):
        student_env.clone_stack(Path(sys.prefix), env, Path("/usr/bin/env"))
    assert not env.exists()


def test_a_copied_script_names_the_new_venvs_python(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old / "bin", new / "bin", old / "lib", new / "lib"):
        folder.mkdir(parents=True)
    script = old / "bin" / "jupyter"
    script.write_text(f"#!{old}/bin/python\nimport sys\nprint('{old}/bin/ stays in the body')\n")
    script.chmod(0o755)
    data = old / "lib" / "data.txt"
    data.write_text(f"#!{old}/bin/python, not a script\n")
    student_env.copy_file(
        script, new / "bin" / "jupyter", f"{old}/bin/".encode(), f"{new}/bin/".encode()
    )
    student_env.copy_file(
        data, new / "lib" / "data.txt", f"{old}/bin/".encode(), f"{new}/bin/".encode()
    )
    copied = (new / "bin" / "jupyter").read_text()
    assert copied.startswith(f"#!{new}/bin/python\n")
    assert (new / "bin" / "jupyter").stat().st_mode & 0o777 == 0o755
    assert (new / "lib" / "data.txt").read_text() == data.read_text()  # not a script: as is
