"""environment.yml (conda, Binder) and the pip install agree on every pinned version; the
system-package step fails `make test` and CI, rather than leaving their tests to skip."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import stall_guard
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import sync_environment  # noqa: E402

PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>[^\s;]+)$")


def environment_pins() -> dict[str, str]:
    spec = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    pins = {}
    for entry in pip_section:
        match = PIN.match(entry)
        if match:
            pins[match["name"].lower()] = match["version"]
    return pins


def test_environment_yml_is_valid_conda_spec() -> None:
    spec = yaml.safe_load((REPO / "environment.yml").read_text())
    assert spec["name"] == "backward-course"
    assert "python=3.11" in spec["dependencies"]
    assert "pip" in spec["dependencies"]
    pip_section = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    assert any(entry.startswith("--editable .") for entry in pip_section), "course packages"


def test_environment_yml_is_generated_from_pyproject() -> None:
    expected = sync_environment.render(REPO / "pyproject.toml")
    assert (REPO / "environment.yml").read_text() == expected, "run `make environment.yml`"


def test_environment_pins_equal_pyproject_pins() -> None:
    pyproject = {}
    for req in sync_environment.pinned_requirements(REPO / "pyproject.toml"):
        match = PIN.match(req)
        assert match, f"pyproject requirement is not pinned with ==: {req}"
        pyproject[match["name"].lower()] = match["version"]
    assert environment_pins() == pyproject


def test_installed_versions_match_the_pins() -> None:
    """The pip install in this environment is exactly the pinned set."""
    wrong = {}
    for name, version in environment_pins().items():
        installed = importlib.metadata.version(name)
        if installed.split("+")[0] != version:
            wrong[name] = (version, installed)
    assert not wrong, f"pinned vs installed: {wrong}"


def test_constraints_agree_with_pins() -> None:
    """constraints.txt (the full tested lock) pins the same versions as pyproject.toml."""
    locked = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            locked[match["name"].lower().replace("_", "-")] = match["version"]
    for name, version in environment_pins().items():
        assert locked.get(name.replace("_", "-")) == version, name


def test_readme_launches_binder_on_the_first_lesson() -> None:
    readme = (REPO / "README.md").read_text()
    match = re.search(r"\(https://mybinder\.org/v2/gh/[^)]*urlpath=lab/tree/([^)]+)\)", readme)
    assert match, "README has no Binder launch badge"
    assert (REPO / match[1]).is_file(), f"the badge opens {match[1]}, which does not exist"


def test_requires_python_is_as_strict_as_every_pinned_package() -> None:
    """pyproject's requires-python (checked by tools/check_python.py before pip runs)
    admits no Python that a locked package refuses: its floor satisfies them all."""
    import tomllib

    from packaging.specifiers import SpecifierSet

    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    floor = next(c.version for c in SpecifierSet(spec) if c.operator == ">=")
    refusing = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if not match:
            continue
        needs = importlib.metadata.metadata(match["name"]).get("Requires-Python")
        if needs and floor not in SpecifierSet(needs):
            refusing[match["name"]] = needs
    assert not refusing, f"requires-python {spec} admits Pythons these refuse: {refusing}"


def without_root(
    folder: Path,
    script: str,
    *args: str | Path,
    as_nobody: bool = True,
    fakes: dict[str, str] | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """A script of tools/ run with no root and no sudo, on a PATH (`folder`/bin) holding
    only `id`, `dirname`, `rm` and the `fakes` (name -> shell script), in an environment of
    `env`. As nobody under root; with `as_nobody=False`, as this user, whom the PATH's
    `id` calls uid 1000 (for a Python in a folder nobody cannot open, as pyenv's)."""
    bare = folder / "bin"
    shutil.rmtree(bare, ignore_errors=True)
    bare.mkdir(parents=True)
    for command in ("dirname", "rm", "id"):
        (bare / command).symlink_to(f"/usr/bin/{command}")
    scripts = {} if as_nobody else {"id": "echo 1000"}
    scripts.update(fakes or {})
    for name, body in scripts.items():
        (bare / name).unlink(missing_ok=True)  # a link to /usr/bin: never written through
        (bare / name).write_text(f"#!/bin/sh\n{body}\n")
        (bare / name).chmod(0o755)
    folder.chmod(0o755)
    environment = ["env", "-i", f"PATH={bare}", *(f"{k}={v}" for k, v in env.items())]
    command = ["/bin/bash", str(REPO / "tools" / script), *map(str, args)]
    user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 and as_nobody else []
    return stall_guard.run(
        [*user, *environment, *command], capture_output=True, text=True, check=False
    )


def install_without_root(tmp_path: Path, **strictness: str) -> subprocess.CompletedProcess[str]:
    """tools/install_system_packages.sh, where none of the packages is found."""
    return without_root(tmp_path, "install_system_packages.sh", **strictness)


@pytest.mark.processes
def test_missing_system_packages_fail_make_test_and_ci_but_not_a_plain_run(
    tmp_path: Path,
) -> None:
    for strict in ({"EVERY_TEST": "1"}, {"CI": "true"}):
        refused = install_without_root(tmp_path, **strict)
        assert refused.returncode == 1, (strict, refused.stderr)
        assert "sudo apt-get install bubblewrap" in refused.stderr
        assert "make test runs every test" in refused.stderr
    plain = install_without_root(tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "the browser tests skip" in plain.stderr


@pytest.mark.processes
def test_missing_system_packages_are_installed_as_root(tmp_path: Path) -> None:
    """As root (the PATH's `id` says uid 0), the missing packages go to apt-get after an
    update, installed without questions (DEBIAN_FRONTEND=noninteractive); apt-get is a
    stand-in that records what it was asked."""
    log = tmp_path / "apt.log"
    fakes = {"id": "echo 0", "apt-get": f'echo "$DEBIAN_FRONTEND apt-get $*" >> {log}'}
    run = without_root(tmp_path, "install_system_packages.sh", as_nobody=False, fakes=fakes)
    assert run.returncode == 0, run.stderr
    update, install = log.read_text().splitlines()
    assert update.split() == ["apt-get", "update", "-qq"]
    # Found by command on PATH (none is on this one): bubblewrap, passwd, npm; by path:
    # Chromium and PostgreSQL, missing only where this machine lacks them.
    chromium = [] if os.access("/usr/bin/chromium", os.X_OK) else ["chromium"]
    postgresql = [] if list(Path("/usr/lib/postgresql").glob("*/bin/initdb")) else ["postgresql"]
    wanted = ["bubblewrap", *chromium, "passwd", *postgresql, "nodejs", "npm"]
    assert install.split() == ["noninteractive", "apt-get", "install", "-y", "-qq", *wanted]


@pytest.mark.processes
def test_a_python_without_venv_support_is_named_with_what_to_install() -> None:
    """Debian's own python3 lacks ensurepip until python3.11-venv is installed: without root
    the setup names that package (dpkg owns the interpreter); another Python without it is
    named as such. Either way no half-made venv is left behind."""
    folder = Path(tempfile.mkdtemp(prefix="no-ensurepip-"))
    try:
        python = folder / "python3"
        python.write_text(
            "#!/bin/sh\n"
            'if [ "$1" = -c ] && [ "$2" = "import ensurepip" ]; then exit 1; fi\n'
            f'exec {sys.executable} "$@"\n'
        )
        python.chmod(0o755)
        venv = folder / "venv"
        debian = {"dpkg": 'echo "python3.11-minimal: $2"'}  # dpkg -S: Debian's interpreter
        for fakes, said in ((debian, "sudo apt-get install python3.11-venv"), ({}, "no ensurepip")):
            run = without_root(folder, "setup_venv.sh", python, venv, as_nobody=False, fakes=fakes)
            assert run.returncode == 1, run.stderr
            assert said in run.stderr, run.stderr
            assert not venv.exists()
    finally:
        shutil.rmtree(folder)


SKIPPING = """
import pytest

def test_needs_a_tool():
    pytest.skip("the tool is missing")

@pytest.mark.machine_specific
def test_describes_another_machine():
    pytest.skip("not this kind of machine")

@pytest.fixture
def tool():
    pytest.skip("the fixture's tool is missing")

def test_uses_a_tool(tool):
    pass

@pytest.mark.xfail(reason="known")
def test_known_to_fail():
    assert False
"""


def run_skipping_tests(tmp_path: Path, **strictness: str) -> subprocess.CompletedProcess[str]:
    """pytest, with tests/every_test_runs.py, on tests that skip, in a clean environment."""
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "EVERY_TEST")}
    env.update(strictness, PYTHONPATH=str(REPO / "tests"))
    command = [sys.executable, "-m", "pytest", "-p", "every_test_runs", "-p", "no:cacheprovider"]
    return stall_guard.run(
        [*command, "-rA", "-p", "no:randomly", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )


@pytest.mark.processes
def test_a_skip_fails_make_test_and_ci_but_not_a_plain_run(tmp_path: Path) -> None:
    plain = run_skipping_tests(tmp_path)
    assert plain.returncode == 0, plain.stdout
    assert "3 skipped, 1 xfailed in" in plain.stdout, plain.stdout
    for strict in ({"EVERY_TEST": "1"}, {"CI": "true"}):
        run = run_skipping_tests(tmp_path, **strict)
        assert run.returncode == 1, (strict, run.stdout)
        assert "1 failed, 1 skipped, 1 xfailed, 1 error in" in run.stdout, run.stdout
        assert "the tool is missing" in run.stdout
        assert "the fixture's tool is missing" in run.stdout
        assert "run every test: a skip would be a check reported as passed" in run.stdout


TIERED = """
import subprocess, sys
import pytest

def test_in_process():
    assert sum(range(4)) == 6

@pytest.mark.processes
def test_marked_starts_one():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_unmarked_starts_one():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_unmarked_hides_the_refusal():
    try:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    except Exception:
        pass

@pytest.fixture
def cleans_up():
    yield
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # a tear-down may

def test_unmarked_whose_fixture_cleans_up(cleans_up):
    pass
"""


@pytest.mark.processes
def test_a_test_that_starts_a_process_without_its_mark_fails_and_the_quick_tier_skips_marked_ones(
    tmp_path: Path,
) -> None:
    """tests/tiers.py: the marks `make check` deselects cannot drift from what tests do."""
    (tmp_path / "test_tiered.py").write_text(TIERED)
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
    command = [sys.executable, "-m", "pytest", "-p", "tiers", "-p", "no:cacheprovider", "-rA"]

    def run(*extra: str) -> str:
        done = subprocess.run(
            [*command, *extra, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
            env=env, check=False,
        )  # fmt: skip
        return done.stdout

    everything = run()
    assert "2 failed, 3 passed in" in everything, everything
    assert "test_unmarked_starts_one tried to start a process (subprocess.Popen(" in everything
    assert "test_unmarked_hides_the_refusal tried to start a process" in everything
    assert "Mark it (usually `processes`)" in everything
    quick = run("-m", "not (processes or nbgrader or sandbox or browser)")
    assert "2 failed, 2 passed, 1 deselected in" in quick, quick
