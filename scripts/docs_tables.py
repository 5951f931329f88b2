"""The documentation's generated tables: scene keys, node parameters, command-line options.

Each table is read from the code that defines the thing it documents, so it cannot drift:

- scene keys: the loader's key sets (:mod:`contact_lcp.sim.scene_file`, the contact
  section's from :class:`contact_lcp.sim.scene.ContactSettings`), defaults read back from
  the loader itself (a minimal scene loaded by :func:`contact_lcp.sim.scene_loader.scene_from_dict`),
  prose from ``docs/scene_keys.yaml``; a key without prose, or prose without a key, is an
  error that names it;
- node parameters: :data:`contact_lcp.ros.config.PARAMETERS`;
- command-line options: the argparse parsers of ``contact-lcp`` and ``contact_lcp_node``.

Used by ``scripts/docs_hooks.py`` (mkdocs) and by ``test/test_docs.py``.
"""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENE_PROSE = ROOT / "docs" / "scene_keys.yaml"


class DocsError(Exception):
    """Something the documentation needs is missing or stale (the message names it)."""


def yaml_value(v):
    """``v`` written as it would be in a scene file."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(yaml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, float) and v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    return str(v)


def _minimal_entries():
    """Each list section's smallest valid entry (its required keys only)."""
    return {
        "robots[]": {"name": "r", "urdf": "r.urdf"},
        "robots[].controller.trajectory": {"type": "csv", "file": "t.csv"},
        "bodies[]": {"name": "b", "shape": "sphere", "size": [0.1], "mass": 1.0,
                     "pose": [0, 0, 0, 0, 0, 0, 1]},
        "loops[]": {"link_a": "a"},
    }


def scene_sections():
    """``[(section, [(key, default or REQUIRED)])]`` in the order of a scene file.

    Defaults are what the loader produces for an absent key; a key is REQUIRED when the
    loader refuses its section's minimal entry without it (checked here).
    """
    from contact_lcp.exceptions import SceneError
    from contact_lcp.sim import scene_file as keys
    from contact_lcp.sim import scene_loader as loader

    scene = loader.scene_from_dict({})
    minimal = _minimal_entries()
    robot = loader.robot_entry(minimal["robots[]"])
    body = loader.body_entry(minimal["bodies[]"])
    loop = loader._loops([minimal["loops[]"]])[0]

    def required(section, key, load):
        entry = dict(minimal[section])
        del entry[key]
        try:
            load(entry)
        except SceneError as e:
            if repr(key) in str(e) or key in str(e):
                return REQUIRED
            raise
        raise DocsError(f"{section}.{key} is in the minimal entry but the loader does not "
                        "require it")

    def from_obj(section, names, obj, attrs=None, load=None):
        rows = []
        for key in sorted(names, key=order(section)):
            if load is not None and key in minimal.get(section, {}):
                rows.append((key, required(section, key, load)))
                continue
            attr = (attrs or {}).get(key, key)
            rows.append((key, getattr(obj, attr) if obj is not None else NO_DEFAULT))
        return rows

    controller = robot.controller
    traj = lambda e: loader._trajectory(e, "t", ROOT)  # noqa: E731
    return [
        ("", from_obj("", keys.TOP_KEYS, scene)),
        ("ground", from_obj("ground", keys.GROUND_KEYS, scene.ground)),
        ("robots[]", from_obj("robots[]", keys.ROBOT_KEYS - {"controller"}, robot.robot,
                              load=loader.robot_entry) + [("controller", NO_DEFAULT)]),
        ("robots[].controller", from_obj("robots[].controller", keys.CONTROLLER_KEYS,
                                         controller, {"type": "kind"})),
        ("robots[].controller.trajectory",
         from_obj("robots[].controller.trajectory", keys.TRAJECTORY_KEYS, None, load=traj)),
        ("robots[].controller.trajectory.joints.<joint>",
         [("amplitude", REQUIRED), ("period", REQUIRED), ("phase", 0.0)]
         if keys.SINUSOID_KEYS == {"amplitude", "period", "phase"} else
         _stale("robots[].controller.trajectory.joints.<joint>", keys.SINUSOID_KEYS)),
        ("bodies[]", from_obj("bodies[]", keys.BODY_KEYS, body, load=loader.body_entry)),
        ("contact", from_obj("contact", keys.contact_keys(), scene.contact)),
        ("solver", from_obj("solver", keys.SOLVER_KEYS, scene.solver)),
        ("output", from_obj("output", keys.OUTPUT_KEYS, scene.output)),
        ("loops[]", from_obj("loops[]", keys.LOOP_KEYS, loop,
                             load=lambda e: loader._loops([e]))),
    ]


def _stale(section, names):
    raise DocsError(f"scripts/docs_tables.py: the keys of {section} changed to "
                    f"{sorted(names)}; update its defaults there")


class _Marker(str):
    pass


REQUIRED = _Marker("required")
NO_DEFAULT = _Marker("—")


def order(section):
    """Sort key: the order in which the prose file lists a section's keys."""
    prose = scene_prose()
    listed = [k.rpartition(".")[2] for k in prose
              if k.rpartition(".")[0] == section or (not section and "." not in k)]
    return lambda key: (listed.index(key) if key in listed else len(listed), key)


_PROSE = {}


def scene_prose():
    """``{dotted key: description}`` of docs/scene_keys.yaml (file order)."""
    if "data" not in _PROSE:
        from contact_lcp.sim.scene_file import parse_yaml

        data = parse_yaml(SCENE_PROSE.read_text(encoding="utf-8"))
        out = {}
        for section, entries in data.items():
            prefix = "" if section == "top" else section + "."
            for key, text in entries.items():
                out[prefix + key] = " ".join(str(text).split())
        _PROSE["data"] = out
    return _PROSE["data"]


def scene_keys():
    """Every dotted scene key the loader accepts (list entries as ``robots[].name``)."""
    return [(sec + "." if sec else "") + key for sec, rows in scene_sections() for key, _ in rows]


def scene_keys_markdown():
    """One table per section: key, default, meaning. Raises :class:`DocsError` when a key
    has no description in docs/scene_keys.yaml or a description names no key."""
    prose = scene_prose()
    sections = scene_sections()
    known = set(scene_keys())
    missing = sorted(known - set(prose))
    extra = sorted(set(prose) - known)
    if missing or extra:
        raise DocsError(f"{SCENE_PROSE.relative_to(ROOT)} is out of date: scene keys without "
                        f"a description {missing}; descriptions of no scene key {extra}")
    out = []
    for section, rows in sections:
        out.append(f"### `{section}`" if section else "### Top level")
        out.append("")
        out.append("| key | default | meaning |")
        out.append("| --- | --- | --- |")
        for key, default in rows:
            dotted = (section + "." if section else "") + key
            shown = default if isinstance(default, _Marker) else f"`{yaml_value(default)}`"
            out.append(f"| `{key}` | {shown} | {_cell(prose[dotted])} |")
        out.append("")
    return "\n".join(out)


def option_tables_markdown():
    """``contact.options`` per contact model and ``solver.options`` per LCP method, with
    the defaults the code declares."""
    from contact_lcp.contact.models import model_class, model_names
    from contact_lcp.lcp import METHODS
    from contact_lcp.sim.scene_fields import solver_option_defaults

    out = ["### `contact.options`, per contact model", "",
           "| model | option: default |", "| --- | --- |"]
    for name in model_names():
        opts = model_class(name).OPTIONS
        cell = ", ".join(f"`{k}: {yaml_value(v)}`" for k, v in opts.items()) or "none"
        out.append(f"| `{name}` | {cell} |")
    out += ["", "### `solver.options`, per LCP method", "",
            "| method | option: default |", "| --- | --- |"]
    for name in sorted(METHODS):
        opts = solver_option_defaults(name)
        out.append(f"| `{name}` | " + ", ".join(
            f"`{k}: {yaml_value(v)}`" for k, v in opts.items()) + " |")
    return "\n".join(out) + "\n"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


TYPE_NAMES = {str: "string", float: "double", bool: "bool", int: "integer", list: "string[]"}


def node_parameters_markdown():
    """The node's parameter table, from :data:`contact_lcp.ros.config.PARAMETERS`."""
    from contact_lcp.ros import config

    out = ["| Parameter | Type | Default | Changes | Meaning |",
           "| --- | --- | --- | --- | --- |"]
    for p in config.PARAMETERS:
        if not p.description.strip():
            raise DocsError(f"node parameter {p.name!r} has no description in "
                            "contact_lcp/ros/config.py")
        default = "unset" if p.default is None else f"`{yaml_value(p.default)}`"
        if p.kind is str and p.default == "":
            default = '`""`'
        when = ("start-up only" if p.name in config.STARTUP_ONLY
                else "rebuilds the simulator" if p.rebuild else "next step")
        out.append(f"| `{p.name}` | {TYPE_NAMES[p.kind]} | {default} | {when} | "
                   f"{_cell(p.description)} |")
    return "\n".join(out) + "\n"


def cli_parsers():
    """``[(command line, parser)]`` of every command: ``contact-lcp <sub>`` and the node."""
    from contact_lcp.cli import build_parser
    from contact_lcp.ros.cli import build_parser as node_parser

    top = build_parser()
    subs = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)][0]
    out = [(f"contact-lcp {name}", parser) for name, parser in subs.choices.items()]
    return out + [("contact_lcp_node", node_parser())]


def cli_options():
    """``[(command, option or positional name, help)]`` of every argument."""
    rows = []
    for command, parser in cli_parsers():
        for a in parser._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            name = ", ".join(a.option_strings) if a.option_strings else a.dest
            rows.append((command, name, a.help or ""))
    return rows


def cli_markdown():
    """Every command with its usage and a table of its arguments."""
    helps = {}
    from contact_lcp.cli import build_parser

    subs = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0]
    for action in subs._choices_actions:
        helps[f"contact-lcp {action.dest}"] = action.help
    out = []
    for command, parser in cli_parsers():
        out += [f"## `{command}`", "", helps.get(command) or parser.description or "", ""]
        usage = " ".join(parser.format_usage().split())
        out += ["```", usage.replace("usage: ", ""), "```", ""]
        out += ["| argument | meaning |", "| --- | --- |"]
        for a in parser._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            if not a.help:
                raise DocsError(f"{command}: argument {a.dest!r} has no help text")
            name = ", ".join(f"`{o}`" for o in a.option_strings) or f"`{a.dest}`"
            if a.metavar and a.option_strings:
                name += f" `{a.metavar}`"
            out.append(f"| {name} | {_cell(a.help)} |")
        if parser.epilog:
            out += ["", parser.epilog]
        out.append("")
    return "\n".join(out)
