"""Every use of nbgrader's internals, in one place, with the versions it was checked against.

nbgrader's public surface (its commands, `NbGraderAPI`, `Gradebook`, preprocessors and
plugins named in the config) is used everywhere; what is not public is used only here:

- `shared_gradebook_work`: within one grading run (or `authoring.release.generate`),
  nbgrader's `api.create_engine`, `api.inspect`, the metadata's `create_all` and the
  metadata format's `jsonschema` are replaced by versions that do once what nbgrader does
  for every Gradebook it opens and every cell it checks (one engine and its connections;
  tables created and listed once; the cell-metadata schema checked once; kept across a
  service's runs in a `GradebookWork`), and `api.get_alembic_version`, which starts an
  `alembic heads` process for every new gradebook (about a CPU-second), by
  `alembic_head`, which reads the same migrations in this process. Results are
  unchanged. A process forked meanwhile (the feedback process's renderer) opens its own
  connections to the same engines (`fresh_connections_in_child`), as SQLAlchemy advises.
- `Recorder.record` (`autograder.grading.recording`) sets an `Autograde` converter's
  `sanitize_preprocessors` and `autograde_preprocessors` to preprocessor *instances* made
  with the grading run: nbgrader 0.9 registers each item of those lists as it is, for
  every notebook.
- Two of nbgrader's preprocessors are subclassed to read a notebook's rows at once,
  relying on how nbgrader 0.9 runs them: `saved_grades.SaveAutoGradesAtOnce` (its
  `_add_score` and `_add_comment` per cell) and `checked_cells.OverwriteCellsAtOnce`
  (`preprocess` opens the notebook's Gradebook as `self.gradebook`, then
  `preprocess_cell` asks it `find_source_cell` and `find_graded_cell`). Each has a test
  that runs it beside nbgrader's own over the sample class.

- `without_server_extensions`: a grading command makes the `nbgrader` package importable
  without running its `__init__`, which loads its four Jupyter server extensions (Jupyter
  Server, Tornado, every exchange and app: 0.3 s of a one-notebook grade) only to offer
  them to a server. The package gets `__version__`, all a grader uses of it; its modules
  import as they always do.

`CHECKED_VERSIONS` are the nbgrader versions these were read against; `check_version`
(called before anything is patched) refuses another, so an upgrade is noticed here, by
`tests/grading/test_nbgrader_internals.py`, not by a wrong grade.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

CHECKED_VERSIONS = ("0.9.6",)


class UncheckedNbgrader(RuntimeError):
    """nbgrader is a version whose internals this module was not checked against."""


def check_version(version: str | None = None) -> None:
    """Raise `UncheckedNbgrader` unless nbgrader (or `version`) is one of CHECKED_VERSIONS."""
    if version is None:
        import nbgrader

        version = str(nbgrader.__version__)
    if version not in CHECKED_VERSIONS:
        raise UncheckedNbgrader(
            f"nbgrader {version} is installed; autograder.grading.nbgrader_internals was "
            f"checked against {', '.join(CHECKED_VERSIONS)} only: read what it patches "
            "against the new version, then add it to CHECKED_VERSIONS"
        )


def without_server_extensions() -> bool:
    """Make `import nbgrader…` skip the package's `__init__` from now on in this process
    (see the module docstring); whether it did. Nothing changes when nbgrader is imported
    already, is not installed, or is a version not checked here (its `__init__` then runs
    as usual, and `check_version` refuses it where the internals are used)."""
    if "nbgrader" in sys.modules:
        return False
    spec = importlib.util.find_spec("nbgrader")
    if spec is None or spec.submodule_search_locations is None:
        return False
    package = importlib.util.module_from_spec(spec)  # the package's module, not yet run
    sys.modules["nbgrader"] = package
    try:
        from nbgrader._version import __version__
    except ImportError:
        __version__ = None
    if __version__ not in CHECKED_VERSIONS:
        for name in [name for name in sys.modules if name.partition(".")[0] == "nbgrader"]:
            del sys.modules[name]
        return False
    setattr(package, "__version__", __version__)  # noqa: B010  (a module made here)
    return True


@functools.cache
def alembic_head() -> str:
    """The revision nbgrader stamps a new gradebook with (`api.get_alembic_version`
    runs `alembic heads` for it), read by alembic here from nbgrader's migrations folder."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    heads = ScriptDirectory(ALEMBIC_DIR).get_heads()
    if len(heads) != 1:
        raise UncheckedNbgrader(f"nbgrader's migrations have {len(heads)} heads, not one")
    return str(heads[0])


class GradebookWork:
    """What `shared_gradebook_work` computes once: the engine of each database (by URL),
    the tables of each engine, the metadata schema's validators. A lasting service keeps
    one from run to run (`shared_gradebook_work(kept)`), so its small runs in a rush do not
    start again with new engines and an empty statement cache."""

    def __init__(self) -> None:
        self.engines: dict[str, Any] = {}
        self.tables: dict[int, list[str]] = {}  # id(engine) -> its tables, created once
        self.validators: dict[str, Any] = {}

    def fresh_connections(self, close: bool = True) -> None:
        """Drop every engine's pooled connections (the next Gradebook opens new ones; what
        each engine compiled and learned about its tables stays): a lasting service's run
        starts so, as a server restarted since the last run leaves them stale. `close`
        False: in a forked child, leave the parent's connections open for the parent."""
        for engine in self.engines.values():
            type(engine).dispose(engine, close=close)

    def close(self) -> None:
        """Close every engine's connections and forget all of it."""
        self.fresh_connections()
        self.engines.clear()
        self.tables.clear()
        self.validators.clear()


ACTIVE: list[GradebookWork] = []
"""The work of the `shared_gradebook_work` open now (at most one)."""


def fresh_connections_in_child() -> None:
    """In a child just forked: each shared engine drops (without closing) the parent's
    pooled connections, so the child never uses a connection the parent also uses, as
    SQLAlchemy advises; what the engine compiled and learned about the tables stays."""
    for work in ACTIVE:
        work.fresh_connections(close=False)


os.register_at_fork(after_in_child=fresh_connections_in_child)


@contextlib.contextmanager
def shared_gradebook_work(kept: GradebookWork | None = None) -> Iterator[GradebookWork]:
    """Meanwhile, every nbgrader Gradebook shares one SQLAlchemy engine per database
    (nbgrader opens a new one, with an empty statement cache, many times per notebook,
    and closing one disposed of every connection), creates and lists its tables once per
    database, stamps a new gradebook with `alembic_head` (no `alembic` process), and the
    cell-metadata check validates its schema once (not once per cell) and raises the same
    best-matching error. What it computed is `kept`'s when given (for the next time; only
    its connections are closed at the end), else forgotten at the end. Nested in another,
    it is the outer one."""
    if ACTIVE:
        yield ACTIVE[-1]
        return
    check_version()
    import jsonschema
    import nbgrader.api
    import nbgrader.nbgraderformat.common as metadata_format

    work = kept if kept is not None else GradebookWork()
    create_engine = nbgrader.api.create_engine
    engines, tables, validators = work.engines, work.tables, work.validators

    def cached_engine(url: Any, *args: Any, **kwargs: Any) -> Any:
        key = str(url)
        if key not in engines:
            engine = create_engine(url, *args, **kwargs)
            engine.dispose = lambda *args, **kwargs: None  # each Gradebook.close disposes
            engines[key] = engine
        return engines[key]

    metadata = nbgrader.api.Base.metadata
    inspect = nbgrader.api.inspect

    def create_all(bind: Any, *args: Any, **kwargs: Any) -> None:
        if id(bind) not in tables:
            type(metadata).create_all(metadata, bind, *args, **kwargs)
            tables[id(bind)] = inspect(bind).get_table_names()

    class CachedInspector:
        """What a Gradebook asks `inspect(engine)`: its tables, once they were created."""

        def __init__(self, engine: Any) -> None:
            self.engine = engine

        def get_table_names(self) -> list[str]:
            known = tables.get(id(self.engine))
            return known if known is not None else inspect(self.engine).get_table_names()

    def validate(instance: Any, schema: dict[str, Any]) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in validators:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validators[key] = cls(schema)
        error = jsonschema.exceptions.best_match(validators[key].iter_errors(instance))
        if error is not None:
            raise error

    class CachedSchemas:
        """`jsonschema` as nbgrader's metadata check sees it, with `validate` cached."""

        def __getattr__(self, name: str) -> Any:
            return validate if name == "validate" else getattr(jsonschema, name)

    get_alembic_version = nbgrader.api.get_alembic_version
    nbgrader.api.create_engine = cached_engine
    nbgrader.api.inspect = CachedInspector
    nbgrader.api.get_alembic_version = alembic_head
    metadata.create_all = create_all
    metadata_format.jsonschema = CachedSchemas()
    ACTIVE.append(work)
    try:
        yield work
    finally:
        ACTIVE.remove(work)
        nbgrader.api.create_engine = create_engine
        nbgrader.api.inspect = inspect
        nbgrader.api.get_alembic_version = get_alembic_version
        vars(metadata).pop("create_all", None)
        metadata_format.jsonschema = jsonschema
        work.fresh_connections()  # none left open between runs
        if kept is None:
            work.close()
