"""The n-legged rigid frame of Enzenhöfer, Teichmann & Kövecses, as a URDF string.

A square-ish plate on ``n`` legs evenly spaced on a circle, each ending in a small
sphere (one contact point per foot). On flat ground at most three feet are needed to
carry it: for n >= 4 the contact impulses are not unique, but the velocities are.
"""

import math


def legged_frame_urdf(n, *, radius=0.3, leg_length=0.3, foot_radius=0.02, mass=10.0):
    """URDF of a rigid frame with ``n`` legs (one link, to be put on a floating base).

    Parameters
    ----------
    n : int
        Number of legs, >= 3.
    radius : float
        Radius of the circle of feet [m].
    leg_length : float
        Distance from the plate centre down to the foot centres [m].
    foot_radius : float
        Radius of the spherical feet [m].
    mass : float
        Total mass [kg], in the plate (the legs are massless).

    Returns
    -------
    str
        URDF XML with the single link ``frame`` and collision spheres ``foot_<i>``.
        Standing height of the link origin: ``leg_length + foot_radius``.
    """
    if int(n) != n or n < 3:
        raise ValueError(f"a legged frame needs n >= 3 legs; received {n!r}")
    side = 2.0 * radius
    t = 0.04
    ixx = mass * (side**2 + t**2) / 12.0
    izz = mass * (2 * side**2) / 12.0
    parts = [
        '<?xml version="1.0"?>',
        f'<robot name="legged_frame_{n}">',
        '  <link name="frame">',
        "    <inertial>",
        '      <origin xyz="0 0 0" rpy="0 0 0"/>',
        f'      <mass value="{mass}"/>',
        f'      <inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{ixx:.6g}" iyz="0" izz="{izz:.6g}"/>',
        "    </inertial>",
        f'    <visual><geometry><box size="{side} {side} {t}"/></geometry></visual>',
    ]
    for i in range(n):
        a = 2.0 * math.pi * i / n
        x, y = radius * math.cos(a), radius * math.sin(a)
        parts += [
            f'    <visual><origin xyz="{x:.6f} {y:.6f} {-leg_length / 2:.6f}"/>'
            f'<geometry><cylinder radius="0.01" length="{leg_length}"/></geometry></visual>',
            f'    <collision name="foot_{i}"><origin xyz="{x:.6f} {y:.6f} {-leg_length:.6f}"/>'
            f'<geometry><sphere radius="{foot_radius}"/></geometry></collision>',
        ]
    parts += ["  </link>", "</robot>", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    import sys

    print(legged_frame_urdf(int(sys.argv[1]) if len(sys.argv) > 1 else 4), end="")
