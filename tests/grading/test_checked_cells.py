"""Cells checked at once are the cells nbgrader's OverwriteCells writes back.

`OverwriteCellsAtOnce` (autograder/grading/checked_cells.py) stands in for nbgrader's
OverwriteCells when the grader sanitises a hand-in. For every notebook the sample class
handed in, as handed in and tampered with (a locked cell's source edited, its locked
flag and a grade cell's points and type changed, a cell named that the gradebook does
not know, graded cells deleted), with nbgrader's option to add missing cells back off
and on, each of the two runs on its own copy of the notebook: the notebooks must come
out the same (where nbgrader itself fails, with the same error), with the same warnings
logged, in far fewer SQL statements.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import nbformat
import pytest
from nbgrader_course import shared_autograded_course
from test_saved_grades import Statements, counting, resources_of
from traitlets.config import Config

from autograder.grading.nbgrader_internals import shared_gradebook_work

pytestmark = pytest.mark.processes  # the graded course is made by `autograder grade`


def tampered(notebook: Any) -> Any:
    """`notebook` with its nbgrader cells tampered with in every way OverwriteCells mends."""
    notebook = copy.deepcopy(notebook)
    graded = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id")]
    locked = [c for c in graded if c.metadata.nbgrader.get("locked")]
    grades = [c for c in graded if c.metadata.nbgrader.get("grade")]
    if locked:
        locked[0].source += "\nprint('edited')"
        locked[-1].metadata.nbgrader["locked"] = False
    if grades:
        grades[0].metadata.nbgrader["points"] = 99
        grades[-1].cell_type = "markdown" if grades[-1].cell_type == "code" else "code"
    graded[len(graded) // 2].metadata.nbgrader["grade_id"] = "no_such_cell"
    notebook.cells.remove(graded[-1])
    return notebook


def with_grade_cells_deleted(notebook: Any) -> Any:
    """`notebook` without its first and last grade cells (nbgrader may add them back)."""
    notebook = copy.deepcopy(notebook)
    grades = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell in {id(grades[0]): grades[0], id(grades[-1]): grades[-1]}.values():
        notebook.cells.remove(cell)
    return notebook


def overwritten(
    preprocessor: type, notebook: Any, resources: Any, config: Config
) -> tuple[Any, list[str]]:
    """The notebook `preprocessor` leaves (or the error it raises), and the warnings it logs."""
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    # a logger of its own: the shared one's level is whatever an earlier test left it at
    log = logging.getLogger(f"{__name__}.{preprocessor.__name__}")
    log.setLevel(logging.WARNING)
    log.propagate = False
    log.addHandler(handler)
    made = preprocessor(config=config, log=log)
    disabled = logging.root.manager.disable  # (and logging not switched off meanwhile)
    logging.disable(logging.NOTSET)
    try:
        result, _ = made.preprocess(copy.deepcopy(notebook), copy.deepcopy(resources))
    except Exception as error:  # nbgrader's own, on a cell it cannot add back: the same
        result = f"{type(error).__name__}: {error}"
    finally:
        logging.disable(disabled)
        log.removeHandler(handler)
    return result, logged


@pytest.mark.parametrize("add_missing_cells", [False, True])
def test_checked_at_once_is_what_nbgrader_writes_back(
    tmp_path_factory: pytest.TempPathFactory, add_missing_cells: bool
) -> None:
    from nbgrader.preprocessors import OverwriteCells

    from autograder.grading.checked_cells import OverwriteCellsAtOnce

    course = shared_autograded_course(tmp_path_factory)
    config = Config()
    config.OverwriteCells.add_missing_cells = add_missing_cells
    url = f"sqlite:///{course / 'gradebook.db'}"
    paths = sorted((course / "submitted").glob("*/*/*.ipynb"))
    assert len(paths) >= 20, "the sample class should give many notebooks to compare"
    theirs, ours = Statements(), Statements()
    mended = warned = added = 0
    with shared_gradebook_work():
        for path in paths:
            original = nbformat.read(path, as_version=4)
            resources = resources_of(path, url)
            for notebook in (original, tampered(original), with_grade_cells_deleted(original)):
                with counting(theirs):
                    expected = overwritten(OverwriteCells, notebook, resources, config)
                with counting(ours):
                    got = overwritten(OverwriteCellsAtOnce, notebook, resources, config)
                assert got == expected, path
                mended += got[0] != notebook
                added += not isinstance(got[0], str) and len(got[0].cells) > len(notebook.cells)
                warned += bool(got[1])
    assert mended >= len(paths) and warned >= len(paths), "every tampered copy was mended"
    assert (added >= len(paths)) == add_missing_cells, "deleted cells added back, if asked"
    # (adding cells back, nbgrader reads the notebook's cells again, its own way)
    fewer = 2 if not add_missing_cells else 1.5
    assert ours.statements * fewer < theirs.statements, (ours.statements, theirs.statements)
