"""Anitescu & Hart's Brazil-nut shaker in 3-D with planar motion: URDFs and the scene file.

The paper (S3, section 4) shakes 200 small bodies and one large one in a hard-walled
container for 75 s (h = 0.1 s, mu = 0.5 at every contact, the convex relaxation) and the
large body emerges on top. It gives neither sizes nor the shaking; ours are:

- disks as in :mod:`contact_lcp.sim.disks`: each a robot on x, z and spin joints (motion
  in the world x-z plane, 3 dof), a cylinder of unit thickness whose axis is world y,
  colliding as the sphere of its radius (the same contacts in the plane of motion, in
  closed form; coal's cylinder contacts at gap 0 can come out metres deep: see
  :mod:`contact_lcp.sim.disks`);
  grains of five radii (:data:`GRAIN_RADII`, 0.8 to 1.2, or half that in the paper-sized
  scene), the nut of radius :data:`LARGE_RADIUS`, all of density 10 per unit area;
- a container (robot ``shaker``, 20 wide, walls :data:`WALL_HEIGHT` high): a floor and two
  vertical walls on prismatic joints along world x and z that follow prescribed sinusoids
  (vertical: amplitude 1, period 1 s, peak acceleration 4 g, 75 shakes in 75 s; sideways:
  amplitude 1, period 1.3 s, 2.4 g; :data:`AMPLITUDE`, :data:`PERIOD`, :data:`SWAY`).
  Vertical shaking alone lifts the bed and drops it as one block at this step; the
  sideways motion shears it;
- the large disk starts at the bottom centre, the small ones in a loose grid above it
  and fall into place during the first second.

``brazil_nut.yaml`` has the paper's 200 grains at half the size (radii 0.4 to 0.6), so
that the bed is as deep as the 50-grain one (~13 above the floor): 200 full-size grains
make a bed ~45 deep, in which the nut stays on the floor. ``brazil_nut_50.yaml`` and
``brazil_nut_100.yaml`` have fewer, larger grains. The paper-sized world (``nv = 606``) is
split into several Pinocchio models (:mod:`contact_lcp.dynamics.groups`), and its relaxed
LCPs (~600 contacts, 3 600 unknowns) are solved as the velocity QP of
:mod:`contact_lcp.contact.relaxed_qp`, where pivoting is orders of magnitude slower. The
nut's height over the shake is measured by ``benchmarks/bench_brazil_nut.py`` (results in
``benchmarks/results/``). Generate other scenes with :func:`scene_yaml`.
"""


import numpy as np

from contact_lcp.sim.disks import DENSITY, THICKNESS, disk_urdf

SMALL_RADIUS, LARGE_RADIUS = 1.0, 3.0
#: the grains' radii: five sizes around SMALL_RADIUS, assigned in turn (equal disks in a
#: plane crystallise into a hexagonal packing that locks the large disk in place)
GRAIN_RADII = (0.8, 0.9, 1.0, 1.1, 1.2)
#: the container's inner width: ten small disks side by side
INNER_WIDTH = 20.0
#: shaking: z = z0 + AMPLITUDE sin(2 pi t / PERIOD)  (peak acceleration A (2 pi / T)^2 = 4 g)
AMPLITUDE, PERIOD = 1.0, 1.0
#: sideways shaking (amplitude, period) of the container: x = x0 + A sin(2 pi t / T), 2.4 g
SWAY = (1.0, 1.3)
#: small disks of the bundled scene: the paper's 200
BUNDLED_SMALL = 200
FRICTION = 0.5
#: [m] contacts enter the LCP within this gap: at h = 0.1 s a kick of the floor crosses a
#: whole stack of grains within one step (6 m/s x 0.1 s), so the gaps between grains
#: tossed apart must be in the problem (at the default 1 mm, grains sank 0.6 into each other)
ACTIVATION = 1.0


#: the container's walls: above the 200 grains' starting column (~74 high: seven grains a
#: row, 2.5 apart), so that none falls or is tossed out (at 40, grains left over the top)
WALL_HEIGHT = 90.0


def shaker_urdf(inner_width=INNER_WIDTH, wall_height=WALL_HEIGHT, thickness=2.0, depth=10.0,
                name="shaker"):
    """URDF of the container: a floor (top face at z = 0 of the joint frame) and two
    vertical walls (inner faces at ``x = +-inner_width / 2``) on a prismatic x joint
    ``sway`` and a prismatic z joint ``shake``."""
    w, t = 0.5 * inner_width, thickness
    boxes = [((0.0, -0.5 * t), (inner_width + 2 * t, depth, t))]
    boxes += [((s * (w + 0.5 * t), 0.5 * wall_height - t), (t, depth, wall_height))
              for s in (-1, 1)]
    lim = '<limit lower="-1000" upper="1000" effort="0" velocity="1000"/>'
    out = ['<?xml version="1.0"?>', f'<robot name="{name}">', '  <link name="frame"/>',
           '  <joint name="sway" type="prismatic"><parent link="frame"/><child link="cart"/>'
           f'<axis xyz="1 0 0"/>{lim}</joint>',
           '  <link name="cart"><inertial><mass value="1000"/><inertia ixx="1000" ixy="0" '
           'ixz="0" iyy="1000" iyz="0" izz="1000"/></inertial></link>',
           '  <joint name="shake" type="prismatic"><parent link="cart"/><child link="box"/>'
           f'<axis xyz="0 0 1"/>{lim}</joint>',
           '  <link name="box">',
           '    <inertial><mass value="1000"/><inertia ixx="1000" ixy="0" ixz="0" iyy="1000" '
           'iyz="0" izz="1000"/></inertial>']
    for (x, z), (sx, sy, sz) in boxes:
        geo = (f'<origin xyz="{x:.9g} 0 {z:.9g}" rpy="0 0 0"/>'
               f'<geometry><box size="{sx:.9g} {sy:.9g} {sz:.9g}"/></geometry>')
        out += [f'    <visual>{geo}</visual>', f'    <collision name="wall">{geo}</collision>']
    out += ['  </link>', '</robot>', '']
    return "\n".join(out)


def container_width(urdf_path):
    """Inner width of a container URDF written by :func:`shaker_urdf` (read from its wall
    boxes: the walls' inner faces are at ``+-(|x| - thickness / 2)``)."""
    import xml.etree.ElementTree as ET

    faces = []
    for col in ET.parse(urdf_path).getroot().iter("collision"):
        x = float(col.find("origin").get("xyz").split()[0])
        sx = float(col.find("geometry/box").get("size").split()[0])
        if x != 0.0:
            faces.append(abs(x) - 0.5 * sx)
    if not faces:
        raise ValueError(f"{urdf_path}: expected a container with two walls; found none")
    return 2.0 * min(faces)


def grain_urdf_name(radius):
    """File name of the URDF of a grain of ``radius`` (``grain_r08.urdf`` for 0.8,
    ``grain_r045.urdf`` for 0.45)."""
    tenths = 10.0 * radius
    if abs(tenths - round(tenths)) < 1e-9:
        return f"grain_r{int(round(tenths)):02d}.urdf"
    return f"grain_r{int(round(100.0 * radius)):03d}.urdf"


def grain_radius(k, scale=1.0):
    """Radius of grain ``k`` (0-based): the sizes of :data:`GRAIN_RADII` in turn, times
    ``scale``."""
    return GRAIN_RADII[k % len(GRAIN_RADII)] * scale


def disk_radius(urdf_path):
    """Collision radius of a disk URDF written by :func:`write_files` (its sphere)."""
    import xml.etree.ElementTree as ET

    sphere = ET.parse(urdf_path).getroot().find("link/collision/geometry/sphere")
    if sphere is None:
        raise ValueError(f"{urdf_path}: expected a disk colliding as a sphere; found none")
    return float(sphere.get("radius"))


def initial_centres(num_small, inner_width=INNER_WIDTH, r=max(GRAIN_RADII), R=LARGE_RADIUS,
                    spacing=0.1):
    """``(large, small)``: the large disk's centre (x, z) and the ``(num_small, 2)`` small
    centres, on a square grid ``spacing`` apart, filled row by row above the large disk
    (cells overlapping it or the walls skipped)."""
    large = np.array([0.0, R])
    pitch = 2 * r + spacing
    per_row = int((inner_width - spacing) // pitch)
    x0 = -0.5 * (per_row - 1) * pitch
    small, row = [], 0
    while len(small) < num_small:
        z = r + spacing + row * pitch
        for i in range(per_row):
            c = np.array([x0 + i * pitch, z])
            if np.linalg.norm(c - large) >= R + r + spacing and len(small) < num_small:
                small.append(c)
        row += 1
    return large, np.array(small)


def shaker_urdf_name(inner_width):
    """File name of the URDF of the container ``inner_width`` wide."""
    w = f"{inner_width:g}"
    return "brazil_shaker.urdf" if inner_width == INNER_WIDTH else f"brazil_shaker_w{w}.urdf"


def scene_yaml(num_small=BUNDLED_SMALL, duration=75.0, *, amplitude=AMPLITUDE, period=PERIOD,
               sway=SWAY, activation=ACTIVATION, inner_width=INNER_WIDTH, grain_scale=1.0,
               urdf_dir="../urdf"):
    """The text of a Brazil-nut scene with ``num_small`` grains (radii :data:`GRAIN_RADII`
    times ``grain_scale``) in a container ``inner_width`` wide (``urdf_dir``: the URDFs'
    folder, relative to the scene file or absolute)."""
    large, small = initial_centres(num_small, inner_width, max(GRAIN_RADII) * grain_scale)
    u = str(urdf_dir).rstrip("/")
    lines = [
        "# Anitescu & Hart's Brazil-nut shaker (S3, section 4): small disks (grains) and one",
        f"# large one (the nut) shaken in a container, h = 0.1 s, mu = {FRICTION} everywhere, the",
        "# convex relaxation (contact.model: relaxed); the nut rises (benchmarks/",
        "# bench_brazil_nut.py: first on top at 52 s with 200 grains of radius 0.4-0.6, at 46 s",
        "# with 50 of 0.8-1.2; from 3.0 to 7.1 above the floor in 75 s with 100). The paper has",
        f"# 200 small bodies; this scene has {num_small}, of radius "
        f"{min(GRAIN_RADII) * grain_scale:g}-{max(GRAIN_RADII) * grain_scale:g}, in a container "
        f"{inner_width:g} wide.",
        "# Motion in the x-z plane; the world is split into several Pinocchio models",
        "# (contact_lcp/dynamics/groups.py).",
        "# Generated by `python -m contact_lcp.sim.brazil_nut .` (URDFs in urdf/).",
        "time_step: 0.1", f"duration: {duration:g}", "gravity: [0.0, 0.0, -9.81]",
        "ground: false", "robots:",
        f"  - {{name: shaker, urdf: {u}/{shaker_urdf_name(inner_width)}, floating_base: false,",
        "     controller: {type: prescribed, trajectory: {type: sinusoid,",
        f"       joints: {{shake: {{amplitude: {amplitude:g}, period: {period:g}, phase: 0.0}},",
        f"                sway: {{amplitude: {sway[0]:g}, period: {sway[1]:g}, phase: 0.0}}}}}}}}}}",
        f"  - {{name: nut, urdf: {u}/disk_3.urdf, floating_base: false, "
        f"base_pose: [{large[0]:.9g}, 0, {large[1]:.9g}, 0, 0, 0, 1], controller: {{type: effort}}}}"]
    for k, (x, z) in enumerate(small):
        lines.append(f"  - {{name: grain_{k + 1}, urdf: {u}/{grain_urdf_name(grain_radius(k, grain_scale))}, "
                     f"floating_base: false, base_pose: [{x:.9g}, 0, {z:.9g}, 0, 0, 0, 1], "
                     "controller: {type: effort}}")
    lines += [f"contact: {{model: relaxed, friction: {FRICTION}, friction_directions: 4, "
              f"max_points_per_pair: 1, activation_distance: {activation:g}, max_contacts: 4000}}",
              "solver: {method: robust}", ""]
    return "\n".join(lines)


#: the bundled scenes: file name -> :func:`scene_yaml` arguments. The paper-sized one has
#: grains of half the size (and the activation distance scaled with them), so that its bed
#: is as deep as the 50-grain one's
BUNDLED = {"brazil_nut.yaml": {"num_small": BUNDLED_SMALL, "grain_scale": 0.5, "activation": 0.5},
           "brazil_nut_100.yaml": {"num_small": 100}, "brazil_nut_50.yaml": {"num_small": 50}}


def write_files(root):
    """Write the URDFs into ``root/urdf`` and the :data:`BUNDLED` scenes into ``root/config``."""
    from pathlib import Path

    root = Path(root)
    scales = sorted({args.get("grain_scale", 1.0) for args in BUNDLED.values()})
    for r in sorted({r * s for r in GRAIN_RADII for s in scales}):
        (root / "urdf" / grain_urdf_name(r)).write_text(
            disk_urdf(r, DENSITY, THICKNESS, collision="sphere"))
    (root / "urdf" / "disk_3.urdf").write_text(
        disk_urdf(LARGE_RADIUS, DENSITY, THICKNESS, collision="sphere"))
    (root / "urdf" / "brazil_shaker.urdf").write_text(shaker_urdf())
    for name, args in BUNDLED.items():
        (root / "config" / name).write_text(scene_yaml(**args))


if __name__ == "__main__":
    import sys

    write_files(sys.argv[1] if len(sys.argv) > 1 else ".")
    print("wrote urdf/grain_r*.urdf, urdf/disk_3.urdf, urdf/brazil_shaker.urdf, "
          + ", ".join(f"config/{n}" for n in BUNDLED))
