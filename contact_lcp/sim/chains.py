"""Chains of rods as URDF strings: strings, wires and linkages for the loop-closure scenes.

A chain hangs from a fixed ``base`` link; link ``i`` (1-based) is a uniform rod along its
own x axis, from its joint ``joint_<i>`` to the next joint at ``(length_i, 0, 0)``. Joints
are revolute about y (planar chains in the x-z plane: a positive angle turns the rod from
+x towards -z) or, with ``joint="universal"``, a y revolute followed by a z revolute
through a massless intermediate link (a wire that moves in 3-D). Collision geometry: a
cylinder around each rod.
"""

import math

import numpy as np


def _rod_inertia(mass, length, radius):
    ixx = 0.5 * mass * radius ** 2
    iyy = mass * (3 * radius ** 2 + length ** 2) / 12.0
    return ixx, iyy


def chain_urdf(lengths, *, mass_per_length=1.0, radius=0.01, joint="revolute",
               name="chain", damping=0.0, free=False):
    """URDF of a chain of uniform rods hanging from a fixed ``base`` link.

    Parameters
    ----------
    lengths : sequence of float
        Rod lengths [m] (n rods), n >= 1.
    mass_per_length : float
        [kg/m].
    radius : float
        Rod (collision cylinder) radius [m].
    joint : {'revolute', 'universal'}
        Planar revolute joints about y, or y then z revolutes (a universal joint).
    name : str
        Robot name.
    damping : float
        URDF joint damping (informative; the simulator's damping comes from the controller).
    free : bool
        No ``base`` link: ``link_1`` is the root (for a chain on a floating base, whose
        first joint would repeat the base's rotation and make the mass matrix singular).

    Returns
    -------
    str
        URDF XML with links ``base`` (unless ``free``), ``link_1`` ... ``link_n``.
    """
    lengths = [float(x) for x in lengths]
    if not lengths or min(lengths) <= 0:
        raise ValueError(f"a chain needs positive rod lengths; received {lengths!r}")
    if joint not in ("revolute", "universal"):
        raise ValueError(f"joint must be 'revolute' or 'universal'; received {joint!r}")
    out = ['<?xml version="1.0"?>', f'<robot name="{name}">']
    if not free:
        out.append('  <link name="base"/>')
    parent, offset = "base", 0.0
    for i, ell in enumerate(lengths, start=1):
        m = mass_per_length * ell
        ixx, iyy = _rod_inertia(m, ell, radius)
        axes = [("y", "0 1 0")] if joint == "revolute" else [("y", "0 1 0"), ("z", "0 0 1")]
        for a, (tag, axis) in enumerate([] if free and i == 1 else axes):
            child = f"link_{i}" if a == len(axes) - 1 else f"link_{i}_{tag}"
            jname = f"joint_{i}" if len(axes) == 1 else f"joint_{i}_{tag}"
            out.append(f'  <joint name="{jname}" type="continuous"><parent link="{parent}"/>'
                       f'<child link="{child}"/><origin xyz="{offset:.9g} 0 0"/>'
                       f'<axis xyz="{axis}"/><dynamics damping="{damping}"/></joint>')
            if child != f"link_{i}":
                out.append(f'  <link name="{child}"><inertial><mass value="1e-6"/>'
                           '<inertia ixx="1e-9" ixy="0" ixz="0" iyy="1e-9" iyz="0" izz="1e-9"/>'
                           '</inertial></link>')
            parent, offset = child, 0.0
        cyl = (f'<origin xyz="{ell / 2:.9g} 0 0" rpy="0 {math.pi / 2:.9g} 0"/>'
               f'<geometry><cylinder radius="{radius}" length="{ell:.9g}"/></geometry>')
        out += [f'  <link name="link_{i}">',
                f'    <inertial><origin xyz="{ell / 2:.9g} 0 0"/><mass value="{m:.9g}"/>'
                f'<inertia ixx="{ixx:.9g}" ixy="0" ixz="0" iyy="{iyy:.9g}" iyz="0" '
                f'izz="{iyy:.9g}"/></inertial>',
                f'    <visual>{cyl}</visual>',
                f'    <collision name="link_{i}">{cyl}</collision>',
                '  </link>']
        parent, offset = f"link_{i}", ell
    out += ["</robot>", ""]
    return "\n".join(out)


def planar_angles(points_xz):
    """Relative joint angles [rad] of a planar chain through ``points_xz`` (n + 1, 2).

    The first angle is measured from the base's +x axis; a positive angle turns +x
    towards -z (rotation about +y).
    """
    p = np.asarray(points_xz, dtype=float)
    d = np.diff(p, axis=0)
    absolute = np.arctan2(-d[:, 1], d[:, 0])
    return np.diff(np.concatenate([[0.0], absolute]))


def fourbar_angles(crank, coupler, rocker, ground, crank_angle=math.pi / 3):
    """Joint angles (3,) [rad] of a four-bar in the x-z plane: the ground link from the
    origin to ``(ground, 0)``, the crank at ``crank_angle`` from it, the coupler-rocker
    joint where the circles about the crank's tip (radius ``coupler``) and about the
    ground's end (radius ``rocker``) meet (the upper intersection); lengths [m]."""
    A, D = np.zeros(2), np.array([ground, 0.0])
    B = crank * np.array([math.cos(crank_angle), math.sin(crank_angle)])
    d = np.linalg.norm(D - B)
    x = (coupler ** 2 - rocker ** 2 + d ** 2) / (2 * d)
    u = (D - B) / d
    C = B + x * u + math.sqrt(coupler ** 2 - x ** 2) * np.array([-u[1], u[0]])
    return planar_angles([A, B, C, D])


def fourbar_scene(urdf, h, angles, rocker, closed=True):
    """Scene dict of the rods of ``urdf`` (a :func:`chain_urdf` of three rods) released at
    rest at ``angles`` (3,) [rad] without ground or actuation, at time step ``h`` [s];
    with ``closed`` the tip of ``link_3`` (``rocker`` [m] along it) is held by a point
    closure where it starts (the four-bar), else an open triple pendulum."""
    scene = {"time_step": h, "ground": False,
             "robots": [{"name": "fourbar", "urdf": urdf, "floating_base": False,
                         "initial_joints": {f"joint_{i + 1}": float(a)
                                            for i, a in enumerate(angles)},
                         "controller": {"type": "effort"}}]}
    if closed:
        scene["loops"] = [{"name": "rocker", "type": "point", "link_a": "link_3",
                           "point_a": [rocker, 0, 0]}]
    return scene


def v_shape(n, length, span):
    """Joint angles of ``n`` (even) rods of ``length`` [m] hanging in a symmetric V between
    two points ``span`` [m] apart at the same height."""
    if n % 2 or span >= n * length:
        raise ValueError(f"need an even n and span < n * length; received n={n}, span={span}")
    theta = math.acos(span / (n * length))
    angles = np.zeros(n)
    angles[0], angles[n // 2] = theta, -2.0 * theta
    return angles


def discrete_catenary_sag(n, length, span, tol=1e-13):
    """Sag [m] of ``n`` (even) uniform rods of ``length`` [m] hanging between two points
    ``span`` [m] apart at equal height, at static equilibrium.

    With ``H`` the horizontal tension and ``w`` a rod's weight, moment balance on rod ``i``
    (0-based from the left) gives ``tan(theta_i) = w (n/2 - i - 1/2) / H``; ``H`` is found
    by bisection on ``sum(length cos theta_i) = span``.
    """
    k = n / 2.0 - np.arange(n) - 0.5  # w / H factors
    lo, hi = 1e-12, 1e12  # x = w / H
    while hi - lo > tol * hi:
        x = math.sqrt(lo * hi) if hi / lo > 10 else 0.5 * (lo + hi)
        width = np.sum(length * np.cos(np.arctan(x * k)))
        lo, hi = (x, hi) if width > span else (lo, x)
    theta = np.arctan(lo * k)
    return float(np.sum(length * np.sin(theta[: n // 2])))


def rod_urdf(length, radius, *, name="rod"):
    """URDF of a fixed horizontal rod along y (one link ``rod``, collision cylinder).

    Put it on a fixed base (``floating_base: false``); its mass only matters for display.
    """
    cyl = (f'<origin xyz="0 0 0" rpy="{math.pi / 2:.9g} 0 0"/>'
           f'<geometry><cylinder radius="{radius}" length="{length}"/></geometry>')
    return "\n".join([
        '<?xml version="1.0"?>', f'<robot name="{name}">', '  <link name="rod">',
        '    <inertial><mass value="1.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" '
        'iyz="0" izz="0.01"/></inertial>',
        f'    <visual>{cyl}</visual>', f'    <collision name="rod">{cyl}</collision>',
        '  </link>', '</robot>', ''])


def _ring_geometry(center_x, normal, radius, tube, segments):
    """Collision and visual cylinders of a polygonal ring (a non-convex union) centred at
    ``(center_x, 0, 0)`` in the plane normal to ``normal`` ('y' or 'z')."""
    out = []
    side = 2.0 * radius * math.sin(math.pi / segments)
    for s in range(segments):
        a = 2.0 * math.pi * (s + 0.5) / segments
        c, sn = math.cos(a), math.sin(a)
        if normal == "y":  # ring in the x-z plane; segment tangent (-sin, 0, cos)
            xyz = (center_x + radius * math.cos(math.pi / segments) * c, 0.0,
                   radius * math.cos(math.pi / segments) * sn)
            rpy = (0.0, -a, 0.0)  # cylinder z axis turned to the tangent
        else:  # ring in the x-y plane; tangent (-sin, cos, 0)
            xyz = (center_x + radius * math.cos(math.pi / segments) * c,
                   radius * math.cos(math.pi / segments) * sn, 0.0)
            rpy = (-math.pi / 2, 0.0, a)
        geo = (f'<origin xyz="{xyz[0]:.9g} {xyz[1]:.9g} {xyz[2]:.9g}" '
               f'rpy="{rpy[0]:.9g} {rpy[1]:.9g} {rpy[2]:.9g}"/>'
               f'<geometry><cylinder radius="{tube}" length="{side:.9g}"/></geometry>')
        out += [f'    <visual>{geo}</visual>', f'    <collision name="seg_{s}">{geo}</collision>']
    return out


def wire_urdf(*, rods=4, rod_length=0.05, ring_radius=0.03, tube=0.004, segments=8,
              mass_per_length=0.5, name="wire"):
    """URDF of Yamane & Nakamura's ring wire: ``rods + 1`` spherical joints (three
    revolutes z, y, x through massless links) joining a ring-shaped link ``ring_a`` (the
    root, in its x-z plane, centred at ``(-ring_radius, 0, 0)``), ``rods`` rods, and a
    ring ``ring_b`` (x-y plane, centred ``ring_radius`` past the last joint). Two wires
    interlock like chain links when the next one's root is ``3 ring_radius`` past the
    last joint of the previous one.
    """
    ring_mass = mass_per_length * 2.0 * math.pi * ring_radius
    ir = ring_mass * ring_radius ** 2

    def inertial(x):
        return (f'<inertial><origin xyz="{x:.9g} 0 0"/><mass value="{ring_mass:.9g}"/>'
                f'<inertia ixx="{ir / 2:.9g}" ixy="0" ixz="0" iyy="{ir / 2:.9g}" iyz="0" '
                f'izz="{ir:.9g}"/></inertial>')

    out = ['<?xml version="1.0"?>', f'<robot name="{name}">', '  <link name="ring_a">',
           "    " + inertial(-ring_radius)]
    out += _ring_geometry(-ring_radius, "y", ring_radius, tube, segments) + ["  </link>"]
    parent, offset = "ring_a", 0.0
    m = mass_per_length * rod_length
    ixx, iyy = _rod_inertia(m, rod_length, tube)
    for i in range(1, rods + 2):
        child = f"link_{i}" if i <= rods else "ring_b"
        for a, (tag, axis) in enumerate((("z", "0 0 1"), ("y", "0 1 0"), ("x", "1 0 0"))):
            link = child if a == 2 else f"{child}_{tag}"
            out.append(f'  <joint name="joint_{i}_{tag}" type="continuous"><parent link="{parent}"/>'
                       f'<child link="{link}"/><origin xyz="{offset:.9g} 0 0"/>'
                       f'<axis xyz="{axis}"/></joint>')
            if a < 2:
                out.append(f'  <link name="{link}"><inertial><mass value="1e-6"/><inertia '
                           'ixx="1e-9" ixy="0" ixz="0" iyy="1e-9" iyz="0" izz="1e-9"/>'
                           '</inertial></link>')
            parent, offset = link, 0.0
        if i <= rods:
            cyl = (f'<origin xyz="{rod_length / 2:.9g} 0 0" rpy="0 {math.pi / 2:.9g} 0"/>'
                   f'<geometry><cylinder radius="{tube}" length="{rod_length:.9g}"/></geometry>')
            out += [f'  <link name="{child}">',
                    f'    <inertial><origin xyz="{rod_length / 2:.9g} 0 0"/><mass value="{m:.9g}"/>'
                    f'<inertia ixx="{ixx:.9g}" ixy="0" ixz="0" iyy="{iyy:.9g}" iyz="0" '
                    f'izz="{iyy:.9g}"/></inertial>',
                    f'    <visual>{cyl}</visual>', f'    <collision name="rod">{cyl}</collision>',
                    '  </link>']
            offset = rod_length
        else:
            out += ['  <link name="ring_b">', "    " + inertial(ring_radius)]
            out += _ring_geometry(ring_radius, "z", ring_radius, tube, segments) + ["  </link>"]
    out += ["</robot>", ""]
    return "\n".join(out)


#: the URDF files of the bundled chain scenes: file name -> URDF text
BUNDLED = {
    "hoist_chain.urdf": lambda: chain_urdf([0.04] * 25, mass_per_length=0.5, radius=0.008,
                                           name="hoist_chain"),
    "hoist_rod.urdf": lambda: rod_urdf(0.4, 0.03, name="hoist_rod"),
    "net_string.urdf": lambda: chain_urdf([0.0625] * 16, mass_per_length=0.5, radius=0.008,
                                          joint="universal", name="net_string"),
    "ring_wire.urdf": lambda: wire_urdf(name="ring_wire"),
}


def write_bundled(folder):
    """Write the :data:`BUNDLED` URDF files into ``folder``; returns their paths."""
    from pathlib import Path

    paths = []
    for file_name, make in BUNDLED.items():
        path = Path(folder) / file_name
        path.write_text(make())
        paths.append(str(path))
    return paths


if __name__ == "__main__":
    import sys

    print("\n".join(write_bundled(sys.argv[1] if len(sys.argv) > 1 else "urdf")))
