"""nbformat's validators kept compiled: the same verdicts as fastjsonschema's own, never a
file another user could have written, made again when a kept copy is unfit."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import fastjsonschema
import nbformat
import nbformat.v4 as v4
import pytest
from nbformat.validator import _get_schema_json

from autograder.grading.kept_validators import kept_validator

SCHEMA = _get_schema_json(v4, version=4, version_minor=5)
VALID = json.loads(nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell("x = 1")])))
INVALID = {**VALID, "cells": [{"cell_type": "code", "source": 7}]}
TAMPERED = compile("def validate(data, **kwargs):\n    return 'tampered'\n", "<t>", "exec")


def verdict(validate: object, data: object) -> str:
    try:
        return f"valid: {validate(data)!r}"  # type: ignore[operator]
    except fastjsonschema.JsonSchemaException as error:
        return f"invalid: {error}"


def test_a_kept_validator_judges_as_fastjsonschema_does_and_is_loaded_after(
    tmp_path: Path,
) -> None:
    reference = fastjsonschema.compile(SCHEMA)
    first = kept_validator(SCHEMA, tmp_path)
    (kept,) = tmp_path.iterdir()
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    again = kept_validator(SCHEMA, tmp_path)
    for data in (VALID, INVALID):
        assert verdict(first, data) == verdict(again, data) == verdict(reference, data)
    assert verdict(first, INVALID).startswith("invalid: data.cells[0]")

    kept.write_bytes(marshal.dumps(TAMPERED))  # a kept copy is run as it is
    assert verdict(kept_validator(SCHEMA, tmp_path), VALID) == "valid: 'tampered'"


@pytest.mark.parametrize("unfit", ["group-writable", "world-writable folder", "corrupt"])
def test_a_kept_copy_unfit_to_run_is_made_again(tmp_path: Path, unfit: str) -> None:
    """What another user could have written is never run; a damaged copy is no error."""
    kept_validator(SCHEMA, tmp_path)
    (kept,) = tmp_path.iterdir()
    kept.write_bytes(b"\x00 not marshal data" if unfit == "corrupt" else marshal.dumps(TAMPERED))
    if unfit == "group-writable":
        kept.chmod(0o620)
    elif unfit == "world-writable folder":
        tmp_path.chmod(0o777)
    validate = kept_validator(SCHEMA, tmp_path)
    assert verdict(validate, INVALID).startswith("invalid: data.cells[0]")
    assert verdict(validate, VALID) == verdict(fastjsonschema.compile(SCHEMA), VALID)


def test_an_unwritable_cache_folder_still_validates(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    validate = kept_validator(SCHEMA, blocked / "validators")
    assert verdict(validate, INVALID).startswith("invalid: data.cells[0]")


@pytest.mark.processes
def test_nbformat_uses_the_kept_validators_once_asked(tmp_path: Path) -> None:
    """In a process of its own (nbformat keeps its validators for the process): reading
    and writing notebooks keeps one validator per schema, and reads them the next time."""
    program = (
        "import sys, nbformat\n"
        "from autograder.grading.kept_validators import keep_validators\n"
        "keep_validators()\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
        "nbformat.reads(nbformat.writes(nb), as_version=4)\n"
        'bad = nbformat.writes(nb).replace(\'"source"\', \'"bogus": 1, "source"\')\n'
        "try:\n"
        "    nbformat.validate(nbformat.reads(bad, as_version=4))\n"
        "except nbformat.ValidationError as error:\n"
        "    print('refused:', str(error).splitlines()[0])\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert done.stdout.decode().startswith("refused: "), done.stdout
    kept = sorted((tmp_path / "backward-course" / "validators").iterdir())
    assert kept and all(path.suffix == ".marshal" for path in kept)
