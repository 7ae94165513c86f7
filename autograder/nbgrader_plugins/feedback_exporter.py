"""nbconvert's HTML exporter for feedback pages, with its templates compiled once a process.

nbgrader makes a new exporter, and with it a new Jinja environment, for every
`generate_feedback`; parsing and compiling nbconvert's and nbgrader's templates again was
about 40% of each learner's feedback page. `FeedbackExporter` (the course config makes it
`GenerateFeedback`'s exporter) gives every environment one in-memory bytecode cache. Jinja
keys it by template and checks each entry against the template's source, so the pages are
the same and a template edited on disk is compiled afresh. The cache holds one entry per
template file (a fixed handful), never learner content.

Its last pass, BeautifulSoup's (alt text, focusable cells), is made without building a tree
where the page allows (`accessible_html`): the same bytes, checked against nbconvert's own
pass. It follows nbconvert's `HTMLExporter.from_notebook_node` of the versions in
CHECKED_NBCONVERT; with another nbconvert, nbconvert's own method runs unchanged.

`warm_up(config)` compiles every template `GenerateFeedback` would use, so a process that
forks a child per learner (`release_feedback`) hands every child the compiled templates.
"""

from __future__ import annotations

from typing import Any

import jinja2
import nbconvert
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from traitlets import default

from autograder.nbgrader_plugins.accessible_html import accessible

CHECKED_NBCONVERT = ("7.17.2",)


class MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in this process's memory (Jinja checks each one's source)."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self.code.clear()


COMPILED = MemoryBytecodeCache()


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter whose Jinja environment shares `COMPILED`."""

    @default("optimistic_validation")
    def _validate_once(self) -> bool:
        """The page's notebook validated once, after the last preprocessor (nbconvert's
        option; by default it validates after each)."""
        return True

    def _create_environment(self) -> Any:
        environment = super()._create_environment()
        environment.bytecode_cache = COMPILED
        return environment

    def from_notebook_node(  # type: ignore[override]
        self, nb: Any, resources: dict[str, Any] | None = None, **kw: Any
    ) -> tuple[str, dict[str, Any]]:
        """nbconvert's `HTMLExporter.from_notebook_node`, its last pass by `accessible`."""
        if nbconvert.__version__ not in CHECKED_NBCONVERT:
            page: tuple[str, dict[str, Any]] = super().from_notebook_node(nb, resources, **kw)
            return page
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
        )
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return accessible(html, self.log), resources


def warm_up(config: Any) -> int:
    """Compile the feedback page's templates into `COMPILED`: the one `GenerateFeedback`
    (with `config`) renders and every template it extends, includes or imports, however
    deep. The number of templates compiled.

    Compiling checks that each filter and test a template names exists; nbconvert adds
    some (`highlight_code`) only when it renders, so this throwaway environment gets a
    stand-in for each missing name (compiled code looks filters up when it runs)."""
    from jinja2 import meta, nodes
    from nbgrader.converters import GenerateFeedback

    converter = GenerateFeedback(config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    environment = exporter.environment
    pending, seen = [exporter.template.name], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        source, _, _ = environment.loader.get_source(environment, name)
        tree = environment.parse(source)
        for kind, names in ((nodes.Filter, environment.filters), (nodes.Test, environment.tests)):
            for node in tree.find_all(kind):
                names.setdefault(node.name, _stand_in)
        environment.get_template(name)  # compiled, and kept in COMPILED
        pending += [n for n in meta.find_referenced_templates(tree) if n]
    return len(seen)


def _stand_in(value: Any, *args: Any, **kwargs: Any) -> Any:
    return value
