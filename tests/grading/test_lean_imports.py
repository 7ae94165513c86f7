"""A grading command's imports without what grading never uses (grading/lean_imports.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LEAN = """
import json, sys
from autograder.grading.lean_imports import lean_imports
from autograder.grading.nbgrader_internals import without_server_extensions
without_server_extensions()
{lean}
import autograder.grading.runner, nbgrader.api, nbformat, jsonschema
seen = {{
    "loaded before use": sorted(
        name for name in ("isoduration", "arrow", "rfc3986_validator", "requests.sessions")
        if name in sys.modules
    ),
}}
import requests
used = requests.Session.__name__ == "Session"
seen["requests works"] = used and "requests.sessions" in sys.modules
nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]))
seen["duration checked"] = not jsonschema.FormatChecker().conforms("not a duration", "duration")
import isoduration
seen["importable after"] = isoduration.parse_duration("P1D").date.days == 1
print(json.dumps(seen))
"""


def lean_run(lean: bool) -> dict[str, object]:
    program = LEAN.format(lean="lean_imports()" if lean else "")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.processes
def test_a_grading_command_loads_requests_on_use_and_no_unused_format_checker() -> None:
    """With lean_imports, nbgrader's and nbformat's imports leave `requests` unrun and
    jsonschema's duration and uri checkers unloaded; notebooks still validate, requests
    works on first use, and the checkers import afterwards. Without it, all are loaded
    (so the test sees a difference lean_imports makes)."""
    lean = lean_run(True)
    assert lean == {
        "loaded before use": [],
        "requests works": True,
        "duration checked": False,  # no validator of a grading command checks formats
        "importable after": True,
    }
    usual = lean_run(False)
    assert usual["loaded before use"] == [
        "arrow",
        "isoduration",
        "requests.sessions",
        "rfc3986_validator",
    ]
    assert usual["duration checked"] is True
