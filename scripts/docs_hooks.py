"""mkdocs hooks (mkdocs.yml ``hooks:``): the generated parts of the documentation.

A page asks for a generated part with a marker line ``<!-- gen: NAME -->``; the hook
replaces it with the table that :mod:`docs_tables` or :mod:`docs_bench` reads from the
code or from ``benchmarks/results/``. Generating at build time (rather than committing
generated Markdown and testing that it is current) means there is no copy that can go
stale: ``mkdocs build`` is the only step, and the test suite runs it with ``--strict``.
An unknown marker, or a code table without its prose, stops the build naming it.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docs_bench  # noqa: E402
import docs_tables  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

MARKER = re.compile(r"^<!-- gen: ([a-z_]+) -->$", re.M)
_bench = {}


def _benchmarks():
    if "page" not in _bench:
        _bench["page"] = docs_bench.page_markdown()
    return _bench["page"]


GENERATORS = {
    "scene_keys": docs_tables.scene_keys_markdown,
    "scene_options": docs_tables.option_tables_markdown,
    "node_parameters": docs_tables.node_parameters_markdown,
    "cli": docs_tables.cli_markdown,
    "benchmarks": lambda: _benchmarks()[0],
}


def on_files(files, config):
    """Add the result files the benchmark page links to and the figures drawn from them."""
    try:
        _, linked = _benchmarks()
        figures = docs_bench.figures()
    except (ValueError, OSError, KeyError) as e:
        raise PluginError(f"benchmark pages: {e}") from e
    for path in linked:
        files.append(File.generated(config, f"benchmarks/results/{path.name}",
                                    abs_src_path=str(path)))
    for name, data in figures.items():
        files.append(File.generated(config, f"figures/{name}", content=data))
    return files


def on_page_markdown(markdown, page, config, files):
    def replace(match):
        name = match.group(1)
        if name not in GENERATORS:
            raise PluginError(f"{page.file.src_uri}: unknown generated part {name!r}; "
                              f"known: {sorted(GENERATORS)}")
        try:
            return GENERATORS[name]()
        except docs_tables.DocsError as e:
            raise PluginError(str(e)) from e

    return MARKER.sub(replace, markdown)
