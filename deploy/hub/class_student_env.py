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

The pinned stack is cloned from the course's built `.venv` when that holds exactly the
pins (`clone_stack`): the files of the runtime dependencies' distributions (their RECORDs)
are copied, not installed again (no resolver, no wheel unpacked, no bytecode compiled,
torch not reinstalled), then `pip check`ed. Copies, not hard links: the students' venv
stays root's alone, whoever owns the course's. Otherwise pip installs it
(benchmarks/class_start.py measures both).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


class CannotClone(Exception):
    """Why the course's venv cannot be cloned (one line); pip installs the stack instead."""


def site_packages(venv: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return venv / "lib" / version / "site-packages"


def pins() -> dict[str, str]:
    """constraints.txt: canonical name -> version."""
    found: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            found[canonicalize_name(name)] = version.strip()
    return found


def runtime_distributions(source: Path) -> list[importlib.metadata.Distribution]:
    """The distributions in the venv `source` that the project's runtime dependencies
    need, and pip; CannotClone unless each is installed at its pinned version."""
    installed = {
        canonicalize_name(d.metadata["Name"]): d
        for d in importlib.metadata.distributions(path=[str(site_packages(source))])
    }
    pinned = pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"]] + [Requirement("pip")]
    needed: dict[str, importlib.metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if (name, frozenset(requirement.extras)) in seen:
            continue
        seen.add((name, frozenset(requirement.extras)))
        dist = installed.get(name)
        if dist is None:
            raise CannotClone(f"{name} is not installed in {source}")
        pin = pinned.get(name)  # an unpinned one (pip, setuptools) as pip would take it
        if pin is not None and pin != dist.version.split("+")[0]:
            raise CannotClone(f"{name} {dist.version} in {source}, constraints.txt: {pin}")
        if not requirement.specifier.contains(dist.version, prereleases=True):
            raise CannotClone(f"{name} {dist.version} in {source} is not {requirement}")
        needed[name] = dist
        extras = ["", *sorted(requirement.extras)]
        for text in dist.requires or []:
            nested = Requirement(text)
            if nested.marker is None or any(nested.marker.evaluate({"extra": e}) for e in extras):
                todo.append(nested)
    return list(needed.values())


def base_interpreter(venv: Path) -> Path | None:
    """The Python `venv` was made from (its pyvenv.cfg's executable), None if unsaid."""
    for line in (venv / "pyvenv.cfg").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "executable":
            return Path(os.path.realpath(value.strip()))
    return None


SCRIPT_HEAD = 1024  # bytes of a script that may name its interpreter


def copy_file(source: Path, target: Path, old_bin: bytes, new_bin: bytes) -> None:
    """One file of a distribution; a script's interpreter line names the new venv's."""
    if target.parent.name == "bin":
        data = source.read_bytes()
        if data.startswith(b"#!") and old_bin in data[:SCRIPT_HEAD]:
            head = data[:SCRIPT_HEAD].replace(old_bin, new_bin)
            target.write_bytes(head + data[SCRIPT_HEAD:])
            shutil.copystat(source, target)
            return
    shutil.copy2(source, target)


def clone_stack(source: Path, env: Path, python: Path) -> None:
    """Make `env` a new venv of `python` holding the runtime stack of the built venv
    `source` (copied file by file from the distributions' RECORDs), then `pip check` it;
    CannotClone, with nothing left at `env`, when it cannot be."""
    if not (source / "pyvenv.cfg").is_file():
        raise CannotClone(f"{source} is not a venv")
    if base_interpreter(source) != Path(os.path.realpath(python)):
        raise CannotClone(f"{source} was not made from {python}")
    files: dict[Path, Path] = {}
    for dist in runtime_distributions(source):
        for entry in dist.files or []:
            path = Path(os.path.normpath(str(dist.locate_file(entry))))
            try:
                relative = path.relative_to(source)
            except ValueError:
                raise CannotClone(f"{dist.metadata['Name']} has {path} outside {source}") from None
            if path.is_file():
                files[path] = env / relative
            elif path.suffix != ".pyc":  # bytecode pip did not write may be missing
                raise CannotClone(f"{dist.metadata['Name']}: {path} is missing")
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(env)], check=True)
    try:
        for folder in sorted({target.parent for target in files.values()}):
            folder.mkdir(parents=True, exist_ok=True)
        old, new = f"{source}/bin/".encode(), f"{env}/bin/".encode()
        with ThreadPoolExecutor(max_workers=4) as pool:  # the copies wait on the disk
            list(pool.map(lambda pair: copy_file(pair[0], pair[1], old, new), files.items()))
        check = [str(env / "bin" / "python"), "-m", "pip", "check"]
        checked = subprocess.run(check, cwd="/", capture_output=True, text=True, check=False)
        if checked.returncode != 0:
            raise CannotClone(f"pip check of the copy: {checked.stdout.strip()}")
    except (OSError, CannotClone):
        shutil.rmtree(env, ignore_errors=True)
        raise


def stack_installed(env: Path) -> bool:
    stamp = env / STACK_STAMP
    return stamp.exists() and stamp.read_text() == stack_hash()


def ensure_student_env(
    env: Path, python: Path, course_id: str, exchange: str, source: Path | None = None
) -> None:
    """Create or refresh the students' venv at `env` from `python` (run by root): its
    stack cloned from the built venv `source` where it can be, else installed by pip."""
    stamp = env / STACK_STAMP
    ours = not env.exists() or (env / "pyvenv.cfg").is_file()  # a venv: rebuilt whole
    if source is not None and ours and not stack_installed(env):
        print(f"cloning the pinned stack of {source} into {env} ...", flush=True)
        shutil.rmtree(env, ignore_errors=True)
        env.parent.mkdir(parents=True, exist_ok=True)
        try:
            clone_stack(source, env, python)
            stamp.write_text(stack_hash())
        except CannotClone as reason:
            print(f"not cloned ({reason}): pip installs it", flush=True)
    if not (env / "bin" / "python").exists():
        print(f"creating the students' environment {env} from {python} ...", flush=True)
        env.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(python), "-m", "venv", str(env)], check=True)
    with tempfile.TemporaryDirectory(prefix="class-env-") as scratch:
        sources = scratch_sources(Path(scratch))
        if not stack_installed(env):
            print(f"installing the pinned stack into {env} ...", flush=True)
            # pip as pinned first, as tools/setup_venv.sh does (a new venv's own pip spends
            # about three times the CPU resolving the stack)
            pip(env, "-c", str(REPO / "constraints.txt"), "pip")
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
