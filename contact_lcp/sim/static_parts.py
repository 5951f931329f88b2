"""Static parts as fixed-base URDFs: one link carrying box collision elements.

The seed's scenes (a cracked ramp, a hole) are unions of boxes fixed to the world. A
robot with ``floating_base: false`` and no joint puts all its geometries on the world,
which is what the facet-set model and the detector treat as static.
"""

import numpy as np

from contact_lcp.exceptions import SceneError


def boxes_urdf(name, boxes):
    """URDF text of a robot ``name`` with one link and a box collision per entry.

    Parameters
    ----------
    name : str
    boxes : sequence of (size, xyz)
        Full extents (3,) [m] and centre (3,) [m] of each box in the link frame.

    Returns
    -------
    str
    """
    if not boxes:
        raise SceneError(f"static part {name!r}: expected at least one box, got none")
    parts = []
    for k, (size, xyz) in enumerate(boxes):
        size, xyz = np.asarray(size, dtype=float), np.asarray(xyz, dtype=float)
        if size.shape != (3,) or xyz.shape != (3,) or np.any(size <= 0):
            raise SceneError(f"static part {name!r} box {k}: expected size (3,) > 0 and "
                             f"xyz (3,), got size {size.tolist()} xyz {xyz.tolist()}")
        x, s = " ".join(repr(float(v)) for v in xyz), " ".join(repr(float(v)) for v in size)
        parts.append(f'    <collision name="{name}_box{k}"><origin xyz="{x}"/><geometry>'
                     f'<box size="{s}"/></geometry></collision>')
    body = "\n".join(parts)
    return (f'<?xml version="1.0"?>\n<robot name="{name}">\n  <link name="{name}_link">\n'
            f'    <inertial><mass value="1.0"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
            f'iyz="0" izz="1"/></inertial>\n{body}\n  </link>\n</robot>\n')


def ramp_boxes(length_before, crack, length_after, *, width=1.0, thickness=0.2,
               start=-0.5):
    """Boxes of a ramp along +x whose top is ``z = 0``: one from ``x = start`` of length
    ``length_before``, a gap of ``crack`` [m], then one of ``length_after`` [m].
    ``crack = 0`` gives two abutting boxes (a seam)."""
    z = -0.5 * thickness
    x1 = start + 0.5 * length_before
    x2 = start + length_before + crack + 0.5 * length_after
    return [((length_before, width, thickness), (x1, 0.0, z)),
            ((length_after, width, thickness), (x2, 0.0, z))]


def hole_boxes(hole, depth, *, wall=1.0):
    """Four walls around a square hole of side ``hole`` [m], ``depth`` [m] high, on
    ``z = 0`` (the ground is the hole's floor): x walls span the full outer square, y walls
    fill between them."""
    a, outer = 0.5 * hole, hole + 2.0 * wall
    zc = 0.5 * depth
    xc = a + 0.5 * wall
    return [((wall, outer, depth), (-xc, 0.0, zc)), ((wall, outer, depth), (xc, 0.0, zc)),
            ((hole, wall, depth), (0.0, -xc, zc)), ((hole, wall, depth), (0.0, xc, zc))]
