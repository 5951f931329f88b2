"""Anitescu & Hart's disks example in 3-D with planar motion: URDFs and the scene file.

Each disk is a robot with a fixed base at its initial centre and three joints (x, z, spin
about y; see :func:`disk_urdf`), so the disk moves in the world x-z plane only (the paper
is 2-D). The tabletop is the ground; a fixed robot ``walls`` holds the two slanted walls.
Units as in the paper (radius 3, density 10 per unit area, so a disk of unit thickness
has mass 90 pi).

The paper gives neither the table's width nor the walls' slope. Ours: the walls meet the
table 100 from the middle (room for all 21 disks on it, 126 side by side) and rise at 60
degrees, the slope at which every disk is back on the table at t = 20 s as in the paper
(all 21 in each of ten pile seeds; at 45 degrees one disk was rolling on each wall at
t = 20 s in each of them: ``benchmarks/bench_disks_21.py --slope``).

``disks_21`` collides its disks as spheres through their rim (:func:`disk_urdf` with
``collision="sphere"``): with every centre at y = 0 and every other surface's normal in
the x-z plane, a sphere meets the table, the walls and the other disks exactly where the
2-D disk does, and coal computes sphere contacts in closed form. A cylinder on its side
touches a wall along a line, a degenerate case for coal's GJK/EPA: coal 3.0.3 reports a
disk rolling on a wall (gap 0) at some places as 8 deep with the normal reversed or as
1.8e308 deep, so the step pushed it into the wall (at the capped correction speed;
uncapped, as in the paper, it launched the disk at 78-167 m/s).
"""

import math

import numpy as np

RADIUS, DENSITY, THICKNESS = 3.0, 10.0, 1.0

#: the walls' inner faces meet the table at x = +-HALF_WIDTH [m], leaning out at SLOPE_DEG
HALF_WIDTH, SLOPE_DEG = 100.0, 60.0

#: the pile of ``disks_21``: clearance between neighbours [m], bound of the seeded
#: horizontal jitter of each centre [m] (below half the clearance: no overlap), seed.
#: Every supporting gap stays within the default activation distance (1 mm), so the
#: first LCP holds the whole pile (with 2 mm, the upper rows fell for a step and sank
#: 15 mm into each other: the step's re-solves reach two rows of a falling pile)
PILE_GAP, PILE_JITTER, PILE_SEED = 0.6e-3, 0.25e-3, 0

#: collision shapes :func:`disk_urdf` can give a disk
COLLISION_SHAPES = ("cylinder", "sphere")


def disk_urdf(radius=RADIUS, density=DENSITY, thickness=THICKNESS, name="disk",
              collision="cylinder"):
    """URDF of one disk moving in the world x-z plane (when the base is level): prismatic
    joints along x and z, then a continuous joint about y (the disk's axis).

    ``collision``: ``"cylinder"`` (the disk's own shape, axis along y) or ``"sphere"`` of
    the same radius (the same contacts in the plane of motion, in closed form; see the
    module docstring). The inertia is the disk's either way; the visual is the cylinder.

    Not Pinocchio's ``planar`` joint: it integrates a step as one SE(2) screw motion, so a
    spinning disk's centre would move on an arc instead of a straight line (a disk at
    10 m/s spinning 10 rad/s strays 0.5 from the path its contact rows assumed in a
    0.1 s step: grains sank 0.4 into each other). Separate translations integrate the
    centre exactly like a free body's.
    """
    if collision not in COLLISION_SHAPES:
        raise ValueError(f"collision: expected one of {COLLISION_SHAPES}, got {collision!r}")
    m = density * math.pi * radius ** 2 * thickness
    iyy = 0.5 * m * radius ** 2
    ixx = m * (3 * radius ** 2 + thickness ** 2) / 12.0
    lim = '<limit lower="-1e4" upper="1e4" effort="0" velocity="1e4"/>'
    # the cylinder's axis (URDF: its z) along y: roll by pi/2
    geo = (f'<origin xyz="0 0 0" rpy="{math.pi / 2:.12g} 0 0"/>'
           f'<geometry><cylinder radius="{radius}" length="{thickness}"/></geometry>')
    col = geo if collision == "cylinder" else (
        f'<origin xyz="0 0 0"/><geometry><sphere radius="{radius}"/></geometry>')
    return "\n".join([
        '<?xml version="1.0"?>', f'<robot name="{name}">', '  <link name="base"/>',
        f'  <joint name="x" type="prismatic"><parent link="base"/><child link="slide_x"/>'
        f'<axis xyz="1 0 0"/>{lim}</joint>', '  <link name="slide_x"/>',
        f'  <joint name="z" type="prismatic"><parent link="slide_x"/><child link="slide_z"/>'
        f'<axis xyz="0 0 1"/>{lim}</joint>', '  <link name="slide_z"/>',
        '  <joint name="spin" type="continuous"><parent link="slide_z"/><child link="disk"/>'
        '<axis xyz="0 1 0"/></joint>',
        '  <link name="disk">',
        f'    <inertial><mass value="{m:.12g}"/><inertia ixx="{ixx:.12g}" ixy="0" ixz="0" '
        f'iyy="{iyy:.12g}" iyz="0" izz="{ixx:.12g}"/></inertial>',
        f'    <visual>{geo}</visual>', f'    <collision name="disk">{col}</collision>',
        '  </link>', '</robot>', ''])


def walls_urdf(half_width=HALF_WIDTH, slope_deg=SLOPE_DEG, length=40.0, thickness=2.0,
               depth=10.0, name="walls"):
    """URDF of two slanted walls (boxes) rising from the tabletop at ``x = +-half_width``,
    leaning outwards by ``90 - slope_deg`` from vertical."""
    a = math.radians(slope_deg)
    out = ['<?xml version="1.0"?>', f'<robot name="{name}">', '  <link name="walls">',
           '    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
           'izz="1"/></inertial>']
    for side in (-1, 1):
        # the wall's inner face passes through (side * half_width, 0); box centre behind it
        cx = side * (half_width + 0.5 * length * math.cos(a) + 0.5 * thickness * math.sin(a))
        cz = 0.5 * length * math.sin(a) - 0.5 * thickness * math.cos(a)
        pitch = side * (math.pi / 2 - a)  # long axis (side cos a, 0, sin a)
        geo = (f'<origin xyz="{cx:.9g} 0 {cz:.9g}" rpy="0 {pitch:.9g} 0"/>'
               f'<geometry><box size="{thickness} {depth} {length}"/></geometry>')
        out += [f'    <visual>{geo}</visual>', f'    <collision name="wall">{geo}</collision>']
    out += ['  </link>', '</robot>', '']
    return "\n".join(out)


def cannonball(rows=6, radius=RADIUS, gap=0.0, jitter=0.0, seed=0):
    """(n, 2) disk centres (x, z) [m] of a cannonball pile on the table z = 0: ``rows``
    disks at the bottom, one fewer on each row above (21 disks for 6 rows).

    Neighbours (in a row and diagonally) are ``gap`` [m] apart; each centre then moves by
    a uniform draw in [-jitter, jitter] along x (seeded by ``seed``), which must stay below
    ``gap / 2`` so that no two disks overlap. The jitter breaks the pile's mirror symmetry:
    a perfectly symmetric pile keeps, in exact arithmetic, a column of disks balanced on
    the disk below them (measured: three stacked at the middle after 20 s), a balance
    that any real pile's imperfection (or a pivoting solver's tie-breaking) upsets.
    """
    if jitter < 0.0 or (jitter > 0.0 and jitter >= 0.5 * gap):
        raise ValueError(f"jitter: expected 0 <= jitter < gap / 2 = {0.5 * gap:g}, got {jitter!r}")
    pitch = 2 * radius + gap
    centres = []
    for j in range(rows):
        for i in range(rows - j):
            centres.append(((-(rows - 1 - j) / 2.0 + i) * pitch,
                            radius + j * pitch * math.sqrt(3.0) / 2))
    centres = np.array(centres)
    if jitter:
        centres[:, 0] += np.random.default_rng(seed).uniform(-jitter, jitter, len(centres))
    return centres


def gaps(P, radius=RADIUS, half_width=HALF_WIDTH, slope_deg=SLOPE_DEG):
    """Gaps [m] of disks centred at ``P`` (n, 2) (x, z), from the geometry (negative:
    overlap): ``(support, pairs)`` with ``support`` (3, n) to the table, the left wall
    and the right wall of :func:`walls_urdf` (its faces extended beyond their ends) and
    ``pairs`` (n (n - 1) / 2,) between disks, in ``np.triu_indices(n, 1)`` order."""
    P = np.asarray(P, dtype=float)
    a = math.radians(slope_deg)
    walls = [(-side * math.sin(a)) * (P[:, 0] - side * half_width) + math.cos(a) * P[:, 1]
             for side in (-1, 1)]
    support = np.array([P[:, 1], *walls]) - radius
    d = np.linalg.norm(P[:, None] - P[None], axis=2)[np.triu_indices(len(P), 1)]
    return support, d - 2 * radius


#: the URDF of a ``disks_21`` disk (sphere collision), in the package's urdf/ folder
DISK_URDF = "disks_21_disk.urdf"


def scene_yaml(rows=6, seed=PILE_SEED):
    """The ``config/disks_21.yaml`` text (``seed``: of the pile's jitter)."""
    lines = [
        "# Anitescu & Hart's disks (S3, section 4): 21 disks of radius 3 and density 10 per",
        "# unit area start at rest as a cannonball pile (6 at the bottom) on a tabletop bounded",
        "# by two slanted walls; mu = 0.2, h = 0.05 s, 20 s. 3-D with planar joints (motion in",
        "# the x-z plane); each disk collides as the sphere through its rim (the same contacts",
        "# in the plane, exact). The pile's neighbours are "
        f"{PILE_GAP * 1e3:g} mm apart and each centre is",
        f"# jittered by up to {PILE_JITTER * 1e3:g} mm (seeded) to break its mirror symmetry. "
        "Generated by",
        "# `python -m contact_lcp.sim.disks` (URDFs in urdf/).",
        "time_step: 0.05", "duration: 20.0", "gravity: [0.0, 0.0, -9.81]",
        "ground: {height: 0.0, friction: 0.2}", "robots:",
        "  - {name: walls, urdf: ../urdf/disks_walls.urdf, floating_base: false,",
        "     controller: {type: effort}}"]
    for k, (x, z) in enumerate(cannonball(rows, RADIUS, PILE_GAP, PILE_JITTER, seed)):
        lines.append(f"  - {{name: disk_{k + 1}, urdf: ../urdf/{DISK_URDF}, floating_base: false, "
                     f"base_pose: [{x:.9g}, 0, {z:.9g}, 0, 0, 0, 1], "
                     "controller: {type: effort}}")
    lines += ["# The default activation distance: the step searches as far as the free motion",
              "# goes and re-solves with the gaps its impulses close (an impulse passes along",
              "# a row of disks within the step). One point per pair.",
              "contact: {friction: 0.2, max_points_per_pair: 1}",
              "solver: {method: robust}", ""]
    return "\n".join(lines)


def write_files(root):
    """Write ``urdf/`` :data:`DISK_URDF` and ``disks_walls.urdf`` and
    ``config/disks_21.yaml`` under ``root`` (a path)."""
    from pathlib import Path

    root = Path(root)
    (root / "urdf" / DISK_URDF).write_text(disk_urdf(collision="sphere"))
    (root / "urdf" / "disks_walls.urdf").write_text(walls_urdf())
    (root / "config" / "disks_21.yaml").write_text(scene_yaml())


if __name__ == "__main__":
    import sys

    write_files(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(f"wrote urdf/{DISK_URDF}, urdf/disks_walls.urdf, config/disks_21.yaml")
