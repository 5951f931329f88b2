"""The package's import graph, read statically from the sources (``ast``; nothing is imported).

The layers run ``ros/`` -> ``sim/`` -> ``contact/``, ``collision/`` -> ``lcp/``, ``dynamics/``:
a module imports only from its own layer or below, and no chain of imports comes back to
where it started. Imports inside functions count as much as module-level ones: a circle
that is closed at call time still ties the modules together.
"""

import ast
import os
import textwrap

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "contact_lcp")

#: subpackage -> the parts of the package its modules must never import
#: (the command line, the sweeps on Ray and the progress bars sit above the core)
_TOP = {"cli", "cli_simulate", "cli_sweep", "sweep", "progress"}
FORBIDDEN = {
    "lcp": {"dynamics", "collision", "contact", "sim", "ros"} | _TOP,
    "dynamics": {"collision", "contact", "sim", "ros"} | _TOP,
    "collision": {"sim", "ros"} | _TOP,
    "contact": {"sim", "ros"} | _TOP,
    "sim": {"ros"} | _TOP,
    "ros": _TOP,
    "sweep": {"ros", "cli", "cli_simulate", "cli_sweep"},
}


def modules(package_dir):
    """Dotted module name -> (path, is a package) for every ``.py`` file under ``package_dir``."""
    top = os.path.basename(package_dir)
    found = {}
    for folder, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, package_dir)
        parts = [top] + ([] if rel == "." else rel.split(os.sep))
        for name in sorted(files):
            if name.endswith(".py"):
                stem = name[:-3]
                dotted = ".".join(parts if stem == "__init__" else parts + [stem])
                found[dotted] = (os.path.join(folder, name), stem == "__init__")
    return found


def import_graph(package_dir):
    """Module -> {imported module of the same package: {line numbers}}, from every
    ``import`` and ``from ... import`` statement at any depth of each file.

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``;
    the parent packages a dotted import initialises on the way are not edges.
    """
    mods = modules(package_dir)
    graph = {}
    for name, (path, is_package) in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
        here = name if is_package else name.rpartition(".")[0]
        edges = graph.setdefault(name, {})
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    targets.append(sub if sub in mods else source)
            for target in targets:
                if target in mods and target != name:
                    edges.setdefault(target, set()).add(node.lineno)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def part(name):
    """The subpackage (or top-level module) of the package that ``name`` belongs to."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward_imports(graph):
    """``'importer:line -> imported'`` for every import that breaks :data:`FORBIDDEN`."""
    bad = []
    for src, edges in sorted(graph.items()):
        forbidden = FORBIDDEN.get(part(src), set())
        for dst, lines in sorted(edges.items()):
            if part(dst) in forbidden:
                bad += [f"{src}:{line} -> {dst}" for line in sorted(lines)]
    return bad


def describe(graph, component):
    """The import lines that tie a cycle's modules together."""
    members = set(component)
    return [f"{src}:{line} -> {dst}" for src in component
            for dst, lines in sorted(graph[src].items()) if dst in members
            for line in sorted(lines)]


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n\n".join(
        "\n".join(describe(graph, c)) for c in found)


def test_no_module_imports_from_a_layer_above_its_own():
    bad = upward_imports(import_graph(PACKAGE))
    assert not bad, "imports against the layers ros -> sim -> contact, collision -> " \
                    "lcp, dynamics:\n" + "\n".join(bad)


def test_the_graph_reads_the_package():
    # The checks above would pass on an empty graph: the package's public entry points
    # (``contact_lcp.solve`` from ``contact_lcp.lcp.solve``) are edges of it.
    graph = import_graph(PACKAGE)
    assert len(graph) > 50
    assert "contact_lcp.lcp" in graph["contact_lcp"]
    assert "contact_lcp.lcp.solve" in graph["contact_lcp.lcp"]


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def planted(tmp_path):
    """A package ``contact_lcp`` with a circle closed inside a function, a relative
    import and an upward import."""
    _write(tmp_path, {
        "contact_lcp/__init__.py": "",
        "contact_lcp/lcp/__init__.py": "",
        "contact_lcp/lcp/a.py": "from contact_lcp.lcp import b\n",
        "contact_lcp/lcp/b.py": "def f():\n    from .c import g\n",
        "contact_lcp/lcp/c.py": "def g():\n    from contact_lcp.lcp.a import x\n",
        "contact_lcp/dynamics/__init__.py": "",
        "contact_lcp/dynamics/world.py": "def f():\n    import contact_lcp.collision.points\n",
        "contact_lcp/collision/__init__.py": "",
        "contact_lcp/collision/points.py": "from contact_lcp.dynamics import world\n",
    })
    return str(tmp_path / "contact_lcp")


def test_a_planted_cycle_and_upward_import_are_found(planted):
    graph = import_graph(planted)
    assert cycles(graph) == [
        ["contact_lcp.collision.points", "contact_lcp.dynamics.world"],
        ["contact_lcp.lcp.a", "contact_lcp.lcp.b", "contact_lcp.lcp.c"]]
    assert upward_imports(graph) == [
        "contact_lcp.dynamics.world:2 -> contact_lcp.collision.points"]
