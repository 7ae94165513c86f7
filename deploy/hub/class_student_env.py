"""The students' environment of `make class`: a venv every user runs, apart from the course.

Students' servers, kernels and terminals run this venv (default /opt/<course id>-env),
never the course's `.venv`: the course folder (solutions, gradebook, submissions, grader
state) stays closed to them. It holds the pinned stack (constraints.txt, installed with
the project from a scratch copy of the sources so nothing is written into the course
folder, then the project removed) and the students' answer-free packages
(`checks.learner_package`: `autograd_lessons` and an `autograder` whose checks
ask the course's check service), so no answer, chain or known mistake is in it.
Its `etc/jupyter` holds the students' Jupyter and nbgrader config (course id, exchange,
no formgrader, hand-ins closed to other students by class_private_submit.py, installed as the
top-level module `class_private_submit`), which Jupyter reads for every program run from
the venv: the Assignments tab and `nbgrader submit` in a terminal alike.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from autograder.checks.learner_package import install as install_learner_package

REPO = Path(__file__).resolve().parents[2]
STACK_STAMP = ".course-stack"  # hash of the pins the stack was installed from
STUDENT_HIDDEN_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"]
SUBMIT_MODULE = "class_private_submit"
PROJECT = "backward-course"  # pyproject.toml's name
SOURCES = ["pyproject.toml", "README.md", "autograder", "autograd_lessons", "autograder_shim"]


def stack_hash() -> str:
    """What the installed stack depends on: the pins (pyproject.toml, constraints.txt)."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


def scratch_sources(into: Path) -> Path:
    """A copy of what the project's wheel is built from (no node_modules, no caches)."""
    ignore = shutil.ignore_patterns("node_modules", "__pycache__", "*.egg-info", "build")
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=ignore)
        else:
            shutil.copy2(source, into / name)
    return into


def pip(env: Path, *arguments: str) -> None:
    command = [str(env / "bin" / "python"), "-m", "pip", "install", "--progress-bar", "off"]
    subprocess.run([*command, "--quiet", *arguments], check=True, cwd="/")


def write_student_config(env: Path, course_id: str, exchange: str) -> None:
    """Students' Jupyter config in the venv's own config folder (read by every program
    the venv runs): the course and exchange for nbgrader, formgrader off."""
    config = env / "etc" / "jupyter"
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    (config / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {exchange!r}\n"
        f"c.ExchangeFactory.submit = '{SUBMIT_MODULE}.PrivateSubmit'\n"
    )
    (config / "jupyter_server_config.json").write_text(
        json.dumps(
            {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}}
        )
    )
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in STUDENT_HIDDEN_LAB_PLUGINS}})
    )


def open_to_all(folder: Path) -> None:
    """Everyone reads and runs the venv; only its owner (root) writes it."""
    subprocess.run(["chmod", "-R", "u+rwX,go+rX,go-w", str(folder)], check=True)


def ensure_student_env(env: Path, python: Path, course_id: str, exchange: str) -> None:
    """Create or refresh the students' venv at `env` from `python` (run by root)."""
    if not (env / "bin" / "python").exists():
        print(f"creating the students' environment {env} from {python} ...", flush=True)
        env.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(python), "-m", "venv", str(env)], check=True)
    stamp = env / STACK_STAMP
    with tempfile.TemporaryDirectory(prefix="class-env-") as scratch:
        sources = scratch_sources(Path(scratch))
        if not stamp.exists() or stamp.read_text() != stack_hash():
            print(f"installing the pinned stack into {env} ...", flush=True)
            cpu_torch = REPO / "tools" / "install_cpu_torch.sh"
            subprocess.run(["bash", str(cpu_torch), str(env / "bin" / "python")], check=True)
            pip(env, "-c", str(REPO / "constraints.txt"), str(sources))
            stamp.write_text(stack_hash())
    # the project itself (its answer key, its `autograder` command) leaves the students'
    # environment: only its answer-free packages are theirs
    subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "uninstall", "--yes", "--quiet", PROJECT],
        check=True, cwd="/", capture_output=True,
    )  # fmt: skip
    purelib = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    install_learner_package(Path(purelib))
    shutil.copy(
        Path(__file__).with_name("class_private_submit.py"), Path(purelib) / f"{SUBMIT_MODULE}.py"
    )
    write_student_config(env, course_id, exchange)
    open_to_all(env)
