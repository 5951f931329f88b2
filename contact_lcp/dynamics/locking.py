"""Joints locked at their initial positions: the URDF rewritten with them fixed.

A robot's fingers, a gripper or a head that a scene does not need to move, or links that
move on their joint but carry no mass (Aldebaran's Romeo: 24 finger links without an
``<inertial>``, which make the mass matrix singular), are welded where the initial
configuration puts them. Each locked joint becomes a ``fixed`` joint whose origin is the
joint's origin composed with its motion at that position, so that Pinocchio merges the
child's inertia into the parent and every consumer of the URDF text (the node's
``robot_description``, robot_state_publisher) sees the same locked robot.
"""

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from contact_lcp.exceptions import SceneError

#: URDF joint types that can be locked (one degree of freedom)
LOCKABLE = ("revolute", "continuous", "prismatic")
#: children of a <joint> that a fixed joint does not have
_MOVING_ONLY = ("axis", "limit", "dynamics", "safety_controller", "calibration", "mimic")


def _vector(text, default):
    if text is None:
        return np.array(default, dtype=float)
    return np.array([float(x) for x in text.split()], dtype=float)


def lock_joints(xml, positions, source):
    """The URDF text ``xml`` with the joints ``positions`` (name -> position [rad or m])
    made fixed at those positions.

    Raises SceneError for a name that is not a joint of the URDF, or not one of
    :data:`LOCKABLE`, or a joint that an unlocked joint mimics.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise SceneError(f"{source}: not valid XML: {e}") from e
    joints = {j.get("name"): j for j in root.iter("joint") if j.get("name")}
    movable = sorted(n for n, j in joints.items() if j.get("type") in LOCKABLE)
    # joint -> the joints that mimic it
    mimics = {}
    for n, j in joints.items():
        for m in j.findall("mimic"):
            mimics.setdefault(m.get("joint"), []).append(n)
    for name, value in positions.items():
        joint = joints.get(name)
        if joint is None or joint.get("type") not in LOCKABLE:
            raise SceneError(f"{source}: locked_joints: {name!r} is not a revolute, continuous "
                             f"or prismatic joint of the URDF; those are {movable}")
        free = [n for n in mimics.get(name, ()) if n not in positions]
        if free:
            raise SceneError(f"{source}: locked_joints: {name!r} is mimicked by {free}; lock "
                             "them too, or none")
        origin = joint.find("origin")
        xyz = _vector(None if origin is None else origin.get("xyz"), (0, 0, 0))
        rpy = _vector(None if origin is None else origin.get("rpy"), (0, 0, 0))
        axis_el = joint.find("axis")
        axis = _vector(None if axis_el is None else axis_el.get("xyz"), (1, 0, 0))
        axis = axis / np.linalg.norm(axis)
        T = pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)
        if joint.get("type") == "prismatic":
            motion = pin.SE3(np.eye(3), float(value) * axis)
        else:
            motion = pin.SE3(pin.AngleAxis(float(value), axis).matrix(), np.zeros(3))
        T = T * motion
        for tag in _MOVING_ONLY:
            for child in joint.findall(tag):
                joint.remove(child)
        if origin is None:
            origin = ET.SubElement(joint, "origin")
        origin.set("xyz", " ".join(repr(float(x)) for x in T.translation))
        origin.set("rpy", " ".join(repr(float(x)) for x in pin.rpy.matrixToRpy(T.rotation)))
        joint.set("type", "fixed")
    return ET.tostring(root, encoding="unicode")


def initial_positions(model, q, names):
    """Positions (name -> [rad or m]) of the 1-dof joints ``names`` in configuration ``q``
    of ``model`` (a continuous joint's angle from its cosine and sine)."""
    out = {}
    for name in names:
        if not model.existJointName(name):
            out[name] = float("nan")  # lock_joints refuses it, naming the URDF's joints
            continue
        j = model.getJointId(name)
        iq = model.idx_qs[j]
        if model.nqs[j] == 2:
            out[name] = float(np.arctan2(q[iq + 1], q[iq]))
        elif model.nqs[j] == 1:
            out[name] = float(q[iq])
        else:
            out[name] = float("nan")  # not 1-dof: lock_joints refuses it by its type
    return out
