"""How the suite runs in parallel: `make test` runs `pytest -n <workers> --dist loadgroup`.

pytest-xdist hands tests out one at a time, so a module- or session-scoped fixture would be
built again on every worker that runs one of its tests. The tests sharing an expensive one
are kept together on one worker with an `xdist_group` mark, added here at collection:

- every browser test: one JupyterLab server and one Chromium (tests/browser/conftest.py),
  and Playwright's sync API wants one per process;
- the tests of one expensive module- or session-scoped fixture of a test module (a
  graded course, a running service, `nbgrader validate` of every notebook, ...), one group
  per fixture and, for a parametrized fixture, per parameter (the sandbox corpus graded as
  root and as an ordinary user are two groups, so the two gradings run side by side);
  tests that share any of several such fixtures are one group (the check service's tests
  use its hub, some also the students' environment: one hub, not one per worker).

The full-class gradings (nbgrader's reference run, `autograder grade`'s:
tests/nbgrader_course.py) are shared across workers through a file lock, not a group.
Without xdist (`pytest tests/test_x.py`) the marks change nothing.

The groups that take longest start first (`LONG_FIRST`, with `--no-loadscope-reorder`);
the rest keep their order.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _pytest.nodeid import coerce_node_id
from hypothesis import settings

# Hypothesis's 200 ms deadline per example measures the machine, not the code: a busy
# machine failed a diagnosis test on it. No property test here has a deadline.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

pytest_plugins = [
    "every_test_runs",  # a skip fails under CI and `make test`
    "tiers",  # a test that starts a process carries a mark `make check` deselects
    "cpu_report",  # `--cpu-report=FILE`: where the suite's CPU goes
]

TESTS = Path(__file__).resolve().parent

# Compiled once, read by every process after: pytest's rewritten test modules and the
# project's own modules (a machine that sets PYTHONDONTWRITEBYTECODE made each pytest
# process rewrite every test module, about 4 CPU-s, and every process of the suite, a kernel
# or a grader, compile the `autograder` it imports). Only this process writes: the
# environment its children get is unchanged, and Python checks a .pyc against its source.
sys.dont_write_bytecode = False

# The tests live in one folder per part of the source (tests/<part>/), each test module's
# name unique in the tree; a few import another's helpers by that name (`from test_report
# import ...`), whichever folders pytest happened to collect first.
for part in sorted(TESTS.iterdir()):
    if part.is_dir() and not part.name.startswith((".", "_")) and str(part) not in sys.path:
        sys.path.append(str(part))

# Module- or session-scoped fixtures that cost little and need no group.
CHEAP = {"chromium_executable"}

# Work units started first, longest first: a long one started last would leave the
# other workers idle at the end.
LONG_FIRST = [
    "browser",
    "test_nbgrader_e2e.py:graded_course",
    "test_grading_sandbox.py:graded:user",
    "test_grading_sandbox.py:graded:root",
    "tests/grading/test_postgres_gradebook.py",
    "tests/grading/test_grader_parallel.py",
    "test_solutions.py:validations",
    "test_report.py:course",
    "test_grading_service.py:service",
    "test_check_service.py:hub",
]


def shared_fixtures(item: pytest.Item) -> list[str]:
    """The expensive module- or session-scoped fixtures of tests/ that a test uses (with
    the fixture's parameter, for a parametrized one), directly or through another."""
    if Path(str(item.path)).resolve().is_relative_to(TESTS / "browser"):
        return ["browser"]
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    callspec = getattr(item, "callspec", None)
    found = []
    for name in item.fixturenames:  # type: ignore[attr-defined]
        definitions = info.name2fixturedefs.get(name)
        if not definitions or name in CHEAP:
            continue
        fixture = definitions[-1]
        if fixture.scope not in ("module", "package", "session"):
            continue
        where = Path(fixture.func.__code__.co_filename).resolve()
        if not where.is_relative_to(TESTS):
            continue  # pytest's and plugins' own (tmp_path_factory, ...)
        key = f"{where.name}:{name}"
        if callspec is not None and name in callspec.params:
            key += f":{callspec.params[name]}"  # xdist reads no group name with "]"
        found.append(key)
    return found


def assign_groups(items: list[pytest.Item]) -> dict[str, str]:
    """nodeid -> xdist group: tests that share an expensive fixture, directly or through
    a chain of tests each sharing one with the next, are one group (else the fixture is
    built once per worker that runs one of them). A group is named after its first
    fixture in sorted order."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    used = {item.nodeid: shared_fixtures(item) for item in items}
    for keys in used.values():
        for key in keys[1:]:
            first, other = root(keys[0]), root(key)
            parent[max(first, other)] = min(first, other)
    return {nodeid: root(keys[0]) for nodeid, keys in used.items() if keys}


def _rank(group: str | None, nodeid: str) -> int:
    for rank, name in enumerate(LONG_FIRST):
        if name in (group, nodeid.split("::")[0]):
            return rank
    return len(LONG_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test's group before xdist reads the marks (in its own
    pytest_collection_modifyitems); under loadgroup, order the work units."""
    groups = assign_groups(items)
    for item in items:
        if item.nodeid in groups:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    if not getattr(config.option, "loadgroup", False):  # not an xdist worker of loadgroup
        return
    items.sort(key=lambda item: _rank(groups.get(item.nodeid), item.nodeid))  # stable
    # xdist 3.8 names the group in the test id (`<id>@<group>`) by setting `item._nodeid`,
    # which pytest 9 no longer reads (the id lives in `item._id`): name it here.
    for item in items:
        group = groups.get(item.nodeid)
        if group is not None and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]
