"""Every collision geometry's placement in one compiled pass over the kinematic tree.

The collision detector needs the placements of the geometries that may touch something
each step. Read from Pinocchio's ``GeometryData.oMg`` they cost one Python call each
(~0.5-1 us: a 21-sphere pile reads 21 per step, a robot its feet); computed here from
``q`` they cost one call for all of them: ``oMi[j] = oMi[parent] jointPlacement[j]
M_j(q)`` down the tree (Pinocchio's own recursion) and ``oMg = oMi[joint] placement``.

Joints covered: free flyers, revolute (about x, y, z or any axis; bounded or
continuous) and prismatic (along x, y, z or any axis). A model with another joint type
(spherical, planar, composite, mimic...) gets None from :func:`tree_placements` and its
placements are read from Pinocchio. ``test/test_dynamics_placements.py`` checks this
against Pinocchio's ``updateGeometryPlacements`` on random configurations.
"""

import numpy as np
from numba import njit

# joint kinds of the compiled recursion
_FIXED, _REVOLUTE, _CONTINUOUS, _PRISMATIC, _FREE = 0, 1, 2, 3, 4
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def _kind_and_axis(joint):
    """(kind, axis) of a Pinocchio joint model, or None when it is not covered."""
    name = joint.shortname()
    if name == "JointModelFreeFlyer":
        return _FREE, (0.0, 0.0, 0.0)
    for prefix, kind in (("JointModelRUB", _CONTINUOUS), ("JointModelR", _REVOLUTE),
                         ("JointModelP", _PRISMATIC)):
        rest = name[len(prefix):]
        if name.startswith(prefix) and rest in _AXES:
            return kind, _AXES[rest]
    if name == "JointModelRevoluteUnaligned":
        return _REVOLUTE, tuple(joint.extract().axis)
    if name == "JointModelRevoluteUnboundedUnaligned":
        return _CONTINUOUS, tuple(joint.extract().axis)
    if name == "JointModelPrismaticUnaligned":
        return _PRISMATIC, tuple(joint.extract().axis)
    return None


class TreePlacements:
    """``__call__(q) -> (ngeoms, 4, 4)`` geometry placements in W of a model whose joints
    are all covered (see the module notes), and :meth:`frames` those of other frames (a
    robot's links); build with :func:`tree_placements`."""

    def __init__(self, parent, kind, axis, idx_q, joint_M, geom_joint, geom_M):
        self._args = (parent, kind, axis, idx_q, joint_M, geom_joint, geom_M)

    def __call__(self, q):
        return tree_pass(q, *self._args)

    @property
    def arrays(self):
        """The recursion's arrays, the arguments of :func:`tree_pass` after ``q`` (for a
        compiled caller)."""
        return self._args

    def frames(self, q, frame_joint, frame_M):
        """(f, 4, 4) placements in W of frames on joints ``frame_joint`` (f,) at
        ``frame_M`` (f, 4, 4) in their joints' frames (the same recursion, one call)."""
        return tree_pass(q, *self._args[:5], frame_joint, frame_M)


def tree_placements(model, geom_model):
    """A :class:`TreePlacements` for ``model`` and its geometries, or None when some joint
    is of a type the compiled recursion does not cover."""
    nj = model.njoints
    parent = np.zeros(nj, dtype=np.int64)
    kind = np.zeros(nj, dtype=np.int64)
    axis = np.zeros((nj, 3))
    idx_q = np.zeros(nj, dtype=np.int64)
    joint_M = np.zeros((nj, 4, 4))
    joint_M[0] = np.eye(4)
    for j in range(1, nj):
        ka = _kind_and_axis(model.joints[j])
        if ka is None:
            return None
        kind[j], axis[j] = ka[0], ka[1]
        parent[j] = model.parents[j]
        idx_q[j] = model.idx_qs[j]
        joint_M[j] = model.jointPlacements[j].homogeneous
    objs = list(geom_model.geometryObjects)
    geom_joint = np.array([int(o.parentJoint) for o in objs], dtype=np.int64)
    geom_M = np.array([o.placement.homogeneous for o in objs], dtype=float).reshape(-1, 4, 4)
    return TreePlacements(parent, kind, axis, idx_q, joint_M, geom_joint, geom_M)


@njit(cache=True, inline="always")
def _set_rotation(M, axis, c, s):
    """``M[:3, :3]`` = the rotation by the angle of cosine ``c`` and sine ``s`` about the
    unit ``axis`` (written in place: a joint's motion is set once per joint and step)."""
    x, y, z = axis[0], axis[1], axis[2]
    t = 1.0 - c
    M[0, 0], M[0, 1], M[0, 2] = t * x * x + c, t * x * y - s * z, t * x * z + s * y
    M[1, 0], M[1, 1], M[1, 2] = t * x * y + s * z, t * y * y + c, t * y * z - s * x
    M[2, 0], M[2, 1], M[2, 2] = t * x * z - s * y, t * y * z + s * x, t * z * z + c


@njit(cache=True)
def tree_pass(q, parent, kind, axis, idx_q, joint_M, geom_joint, geom_M):
    """The recursion of :class:`TreePlacements`: (g, 4, 4) placements in W at ``q`` of
    the frames on joints ``geom_joint`` (g,) at ``geom_M`` (g, 4, 4) in their joints'
    frames."""
    nj = parent.shape[0]
    oMi = np.empty((nj, 4, 4))
    for r in range(4):
        for c in range(4):
            oMi[0, r, c] = 1.0 if r == c else 0.0
    # the joint's motion M_j(q): each kind below sets its rotation block and translation
    # column (the last row stays 0 0 0 1)
    Mq = np.eye(4)
    T = np.empty((4, 4))
    for j in range(1, nj):
        a = idx_q[j]
        k = kind[j]
        if k == _REVOLUTE or k == _CONTINUOUS:
            if k == _REVOLUTE:
                _set_rotation(Mq, axis[j], np.cos(q[a]), np.sin(q[a]))
            else:
                _set_rotation(Mq, axis[j], q[a], q[a + 1])
            Mq[0, 3], Mq[1, 3], Mq[2, 3] = 0.0, 0.0, 0.0
        elif k == _FREE:
            x, y, z, w = q[a + 3], q[a + 4], q[a + 5], q[a + 6]
            Mq[0, 0], Mq[0, 1], Mq[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
            Mq[1, 0], Mq[1, 1], Mq[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
            Mq[2, 0], Mq[2, 1], Mq[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
            Mq[0, 3], Mq[1, 3], Mq[2, 3] = q[a], q[a + 1], q[a + 2]
        else:  # fixed (identity) or prismatic (identity rotation, along its axis)
            for r in range(3):
                for c in range(3):
                    Mq[r, c] = 1.0 if r == c else 0.0
                Mq[r, 3] = axis[j, r] * q[a] if k == _PRISMATIC else 0.0
        _compose(oMi[parent[j]], joint_M[j], T)
        _compose(T, Mq, oMi[j])
    X = np.empty((geom_joint.shape[0], 4, 4))
    for g in range(geom_joint.shape[0]):
        _compose(oMi[geom_joint[g]], geom_M[g], X[g])
    return X


@njit(cache=True, inline="always")  # (views passed to it: no refcount traffic once inlined)
def _compose(A, B, out):
    """``out = A B`` for homogeneous transforms (4, 4) (no BLAS call for a 4 x 4)."""
    for r in range(3):
        for c in range(4):
            acc = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]
            out[r, c] = acc + A[r, 3] if c == 3 else acc
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0
