"""How the suite runs in parallel: `make test` runs `pytest -n <workers> --dist loadgroup`.

pytest-xdist hands tests out one at a time, so a module- or session-scoped fixture would be
built again on every worker that runs one of its tests. The tests sharing an expensive one
are kept together on one worker with an `xdist_group` mark, added here at collection:

- every browser test: one JupyterLab server and one Chromium (tests/browser/conftest.py),
  and Playwright's sync API wants one per process;
- the tests of one expensive module- or session-scoped fixture of a test module (a
  graded course, a running service, `nbgrader validate` of every notebook, ...), one group
  per fixture and, for a parametrized fixture, per parameter (the sandbox corpus graded as
  root and as an ordinary user are two groups, so the two gradings run side by side).

The nbgrader reference run of the sample class (tests/nbgrader_course.py) is shared across
workers through a file lock, not a group. Without xdist (`pytest tests/test_x.py`) the
marks change nothing.

The groups that take longest start first (`LONG_FIRST`, with `--no-loadscope-reorder`);
the rest keep their order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.nodeid import coerce_node_id

TESTS = Path(__file__).resolve().parent

# Module- or session-scoped fixtures that cost little and need no group.
CHEAP = {"chromium_executable", "nbgrader_grades"}

# Work units started first, longest first: a long one started last would leave the
# other workers idle at the end.
LONG_FIRST = [
    "browser",
    "test_nbgrader_e2e.py:graded_course",
    "test_grading_sandbox.py:graded:user",
    "test_grading_sandbox.py:graded:root",
    "tests/test_postgres_gradebook.py",
    "tests/test_grader_parallel.py",
    "test_solutions.py:validations",
    "test_report.py:course",
    "test_grading_service.py:service",
]


def group_of(item: pytest.Item) -> str | None:
    """The xdist group of a test: the expensive shared fixture it uses, if any."""
    path = Path(str(item.path)).resolve()
    if path.is_relative_to(TESTS / "browser"):
        return "browser"
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    callspec = getattr(item, "callspec", None)
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
        group = f"{where.name}:{name}"
        if callspec is not None and name in callspec.params:
            group += f":{callspec.params[name]}"  # xdist reads no group name with "]"
        return group
    return None


def _rank(item: pytest.Item) -> int:
    key = group_of(item)
    nodeid = item.nodeid.split("::")[0]
    for rank, name in enumerate(LONG_FIRST):
        if name in (key, nodeid):
            return rank
    return len(LONG_FIRST)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the group as each test is collected: xdist reads the marks in its own
    pytest_collection_modifyitems."""
    group = group_of(item)
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # not an xdist worker of loadgroup
        return
    items.sort(key=_rank)  # stable: within a rank, collection order
    # xdist 3.8 names the group in the test id (`<id>@<group>`) by setting `item._nodeid`,
    # which pytest 9 no longer reads (the id lives in `item._id`): name it here.
    for item in items:
        group = group_of(item)
        if group is not None and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]
