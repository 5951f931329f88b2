"""The values of a URDF, checked in its XML before Pinocchio (urdfdom) reads it.

urdfdom drops what it cannot parse in two different ways: an unparsable joint makes the
whole model fail with "not a valid URDF model", but an unparsable ``<collision>`` or
``<inertial>`` (a ``nan``, an ``inf``, a word) is dropped with a line on stderr and the
robot loads without it (a link without its collision shape falls through the floor).
Values urdfdom accepts can still be nonsense for a simulation: a box of size 0, a mesh
scale of 0 (which flattens the mesh, and coal's convex hull of a flat point set crashes
the process), ``lower > upper``, an axis of length 0. So every value a simulation uses
is read here first, and a :class:`~contact_lcp.exceptions.SceneError` names the link or
joint, the element, the value and what is allowed.

:func:`check_urdf_xml` also counts each link's ``<collision>`` elements, so that
:func:`check_collision_counts` can compare them with what Pinocchio's GeometryModel got
and report any other element urdfdom dropped, by link name.
"""

import xml.etree.ElementTree as ET

import numpy as np

from contact_lcp.exceptions import SceneError

#: Joint types whose axis is used (a fixed or floating joint ignores it).
AXIS_JOINTS = ("revolute", "continuous", "prismatic", "planar")


def _floats(raw, n):
    """``raw`` as ``n`` floats, or None when it is not ``n`` finite numbers."""
    try:
        x = np.array([float(s) for s in str(raw).split()], dtype=float)
    except ValueError:
        return None
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        return None
    return x


def _values(el, key, n, default, where, expected):
    """Attribute ``key`` of element ``el`` as ``n`` finite floats (``default`` if absent)."""
    raw = el.get(key)
    if raw is None:
        return np.array(default, dtype=float)
    x = _floats(raw, n)
    if x is None:
        raise SceneError(f"{where} has {key}={raw!r}; expected {expected}")
    return x


def _origin(parent, where):
    """Check the ``<origin>`` of ``parent`` (xyz, rpy finite)."""
    for origin in parent.findall("origin"):
        _values(origin, "xyz", 3, (0, 0, 0), f"{where} <origin>", "3 finite numbers [m]")
        _values(origin, "rpy", 3, (0, 0, 0), f"{where} <origin>", "3 finite numbers [rad]")


def parse(xml, source):
    """The root element of the URDF text ``xml``; SceneError when it is not XML."""
    try:
        return ET.fromstring(xml)
    except ET.ParseError as e:
        raise SceneError(f"{source}: Pinocchio cannot build a model from it: "
                         f"not well-formed XML: {e}") from e


def check_urdf_xml(xml, source):
    """Check every link and joint of the URDF text ``xml``; ``source`` opens the messages.

    Returns
    -------
    dict
        link name -> number of its ``<collision>`` elements.
    """
    root = parse(xml, source)
    counts = {}
    for link in root.findall("link"):  # urdfdom reads only the top-level elements
        name = link.get("name")
        for inertial in link.findall("inertial"):
            _check_inertial(inertial, f"{source}: link {name!r}")
        collisions = link.findall("collision")
        for i, collision in enumerate(collisions):
            _check_collision(collision, f"{source}: link {name!r} <collision> #{i + 1}")
        counts[name] = len(collisions)
    for joint in root.findall("joint"):
        if joint.find("parent") is None:  # a transmission's <joint> or an SRDF-like tag
            continue
        _check_joint(joint, f"{source}: joint {joint.get('name')!r}")
    return counts


def _check_inertial(inertial, where):
    """Finite mass >= 0, finite inertia entries, finite origin.

    urdfdom drops an inertial it cannot parse and Pinocchio then builds a massless link,
    so the values are read here first.
    """
    for el in inertial.findall("mass"):
        raw = el.get("value", "0")
        x = _floats(raw, 1)
        if x is None or x[0] < 0:
            raise SceneError(f"{where} has mass {raw!r}; expected a finite mass >= 0 [kg]")
    for el in inertial.findall("inertia"):
        for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            raw = el.get(key, "0")
            if _floats(raw, 1) is None:
                raise SceneError(f"{where} has inertia {key} {raw!r}; expected a finite "
                                 "value [kg.m^2]")
    _origin(inertial, f"{where} <inertial>")


def _positive(el, key, n, where, unit="m"):
    raw = el.get(key)
    x = _floats(raw, n) if raw is not None else None
    if x is None or np.any(x <= 0):
        expected = "a finite number" if n == 1 else f"{n} finite numbers"
        raise SceneError(f"{where} has {key}={raw!r}; expected {expected} > 0 [{unit}]")
    return x


def _check_collision(collision, where):
    """Finite origin; one geometry with positive sizes or a finite, non-zero mesh scale."""
    _origin(collision, where)
    geometry = collision.find("geometry")
    shapes = list(geometry) if geometry is not None else []
    if len(shapes) != 1:
        found = [s.tag for s in shapes]
        raise SceneError(f"{where} has <geometry> with {found or 'nothing'}; expected one of "
                         "<box>, <sphere>, <cylinder>, <mesh>")
    shape = shapes[0]
    what = f"{where} <{shape.tag}>"
    if shape.tag == "box":
        _positive(shape, "size", 3, what)
    elif shape.tag == "sphere":
        _positive(shape, "radius", 1, what)
    elif shape.tag == "cylinder":
        _positive(shape, "radius", 1, what)
        _positive(shape, "length", 1, what)
    elif shape.tag == "mesh":
        if not shape.get("filename"):
            raise SceneError(f"{what} has no filename; expected a mesh file path or URI")
        raw = shape.get("scale")
        if raw is not None:
            x = _floats(raw, 3)
            if x is None or np.any(x == 0):
                why = "" if x is None else (" (a zero factor flattens the mesh to nothing a "
                                            "collision can use)")
                raise SceneError(f"{what} {shape.get('filename')!r} has scale={raw!r}; "
                                 f"expected 3 finite, non-zero factors{why}")


def _check_joint(joint, where):
    """Finite origin; for moving joints a finite non-zero axis; finite limits with
    lower <= upper, effort and velocity >= 0; finite damping and friction >= 0."""
    kind = joint.get("type")
    _origin(joint, where)
    if kind in AXIS_JOINTS:
        for axis in joint.findall("axis"):
            raw = axis.get("xyz", "1 0 0")
            x = _floats(raw, 3)
            if x is None or np.linalg.norm(x) < 1e-9:
                raise SceneError(f"{where} ({kind}) has <axis xyz={raw!r}>; expected 3 finite "
                                 "numbers, not all zero (the direction it moves along or "
                                 "about)")
    for dynamics in joint.findall("dynamics"):
        for key in ("damping", "friction"):
            raw = dynamics.get(key)
            x = _floats(raw, 1) if raw is not None else np.zeros(1)
            if x is None or x[0] < 0:
                raise SceneError(f"{where} has <dynamics {key}={raw!r}>; expected a finite "
                                 "number >= 0")
    for limit in joint.findall("limit"):
        got = {}
        for key in ("lower", "upper", "effort", "velocity"):
            raw = limit.get(key)
            if raw is None:
                continue
            x = _floats(raw, 1)
            if x is None:
                raise SceneError(f"{where} has <limit {key}={raw!r}>; expected a finite number")
            got[key] = x[0]
        for key in ("effort", "velocity"):
            if got.get(key, 0.0) < 0:
                raise SceneError(f"{where} has <limit {key}={limit.get(key)!r}>; expected a "
                                 "finite number >= 0 (0: no limit)")
        if kind in ("revolute", "prismatic") and got.get("lower", 0.0) > got.get("upper", 0.0):
            raise SceneError(f"{where} has <limit lower={limit.get('lower')!r} upper="
                             f"{limit.get('upper')!r}>; expected lower <= upper")


def check_collision_counts(counts, model, geom, source):
    """Every ``<collision>`` counted in the XML (``counts``: link -> n) made a geometry
    object of ``geom`` (on that link's frame of ``model``); SceneError naming the links
    whose elements urdfdom dropped otherwise."""
    loaded = {}
    for obj in geom.geometryObjects:
        link = model.frames[obj.parentFrame].name
        loaded[link] = loaded.get(link, 0) + 1
    missing = {link: (n, loaded.get(link, 0)) for link, n in counts.items()
               if n != loaded.get(link, 0)}
    if missing:
        said = "; ".join(f"link {link!r}: {n} <collision> element(s) in the URDF, {got} loaded"
                         for link, (n, got) in sorted(missing.items()))
        raise SceneError(f"{source}: the URDF parser dropped collision geometry ({said}); "
                         "check those elements' values (its messages are on stderr)")
