"""The world's kinematic tree in independent Pinocchio models, so that its Data fits.

Pinocchio 4's ``Data`` allocates and zero-fills eight ``(nv, nv, nv)`` tensors of second
derivatives whatever the joints (:data:`DATA_BYTES_PER_NV3`): a pile of 200 free spheres
(nv = 1200) would need ~60 GB per Data. Yet the trees hanging from the universe (each
robot, each free body, each planar disk) share no mass matrix entry: ``M`` is block
diagonal over them, and so are ``M^-1``, the bias forces and each tree's Jacobians.

A world whose Data would take more than :data:`SINGLE_MODEL_BYTES` is therefore split
into *groups*: runs of consecutive top-level subtrees, each given its own ``pin.Model``
(the same joints, placements, inertias and armature, renumbered from 1) and its own
Data. Each group covers a contiguous range of the world's joints, ``q`` and ``v`` (the
world appends robots then bodies, each a depth-first run of joints), so the world's
vectors are the groups' vectors end to end and its ``M^-1`` their block-diagonal sum.
Group sizes are chosen so that all their Data together stay within
:data:`SPLIT_BUDGET_BYTES` while keeping their number (Python calls per step) small.

Worlds below the threshold keep one group whose model *is* the world model: their steps
are exactly as before. A world is kept whole (and refused if too large) when a loop
closure or a mimic joint couples its trees, or when its joints are not in depth-first
order.
"""

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from contact_lcp.exceptions import SceneError

#: bytes a pinocchio.Data takes per cubed velocity dimension: Pinocchio 4 allocates and
#: zero-fills eight (nv, nv, nv) tensors of second-order derivatives in every Data, whatever
#: the joints (measured resident size: 60 free-flyers, nv = 360: 1.08 GB; 200 revolute
#: joints, nv = 200: 0.28 GB; 80 planar joints, nv = 240: 0.46 GB)
DATA_BYTES_PER_NV3 = 35.0
#: the Data objects a world and its free motion create per group (kinematics, dynamics,
#: Jacobians, free motion, energy)
DATA_PER_GROUP = 5
#: worlds whose Data would take at most this stay one Pinocchio model [bytes] (nv <= 178)
SINGLE_MODEL_BYTES = 1e9
#: the Data of a split world's groups together take at most about this [bytes]
SPLIT_BUDGET_BYTES = 1e9
#: refuse a world (or one indivisible tree) whose Data would take more than this [bytes]
MAX_DATA_BYTES = 8e9


def data_bytes(nv):
    """Estimated resident bytes of the Data objects of one group of ``nv`` velocities."""
    return DATA_BYTES_PER_NV3 * float(nv) ** 3 * DATA_PER_GROUP


@dataclass
class Group:
    """One Pinocchio model over a contiguous run of the world's joints.

    Attributes
    ----------
    model : pin.Model
        The world model itself when the world is one group; else the run's joints
        renumbered ``1 .. j1 - j0`` (joint ``j`` of the world is ``j - j0 + 1`` here).
    j0, j1 : int
        World joint ids ``j0 <= j < j1``.
    qs, vs : slice
        The group's entries of the world's ``q`` and ``v``.
    """

    model: object
    j0: int
    j1: int
    qs: slice
    vs: slice

    def local(self, joint):
        """The group-model id of world joint ``joint`` (0 for the universe)."""
        return 0 if joint == 0 else joint - self.j0 + 1


def _top_subtrees(model):
    """``[(j0, j1)]``: the runs of joints of each tree hanging from the universe, or None
    when some tree's joints are not one contiguous run."""
    runs = []
    for j in range(1, model.njoints):
        if int(model.parents[j]) == 0:
            runs.append([j, j + 1])
        elif runs and runs[-1][0] <= int(model.parents[j]) < j:
            runs[-1][1] = j + 1
        else:
            return None
    return [tuple(r) for r in runs]


def _submodel(model, j0, j1):
    """A pin.Model of the world joints ``j0 <= j < j1`` (a union of whole top-level trees):
    same joint models, placements, inertias and armature; no frames beyond the joints'."""
    sub = pin.Model()
    sub.name = f"{model.name}[{j0}:{j1}]"
    sub.gravity = model.gravity
    for j in range(j0, j1):
        p = int(model.parents[j])
        jid = sub.addJoint(0 if p == 0 else p - j0 + 1, model.joints[j], model.jointPlacements[j],
                           model.names[j])
        sub.appendBodyToJoint(jid, model.inertias[j], pin.SE3.Identity())
    v0 = model.idx_vs[j0]
    sub.armature = np.array(model.armature[v0:v0 + sub.nv], dtype=float)
    return sub


def split_world(model, *, whole=False):
    """The groups of a world model (see the module notes).

    Parameters
    ----------
    model : pin.Model
    whole : bool
        Keep the world one group (loop closures couple its trees).

    Returns
    -------
    list of Group

    Raises
    ------
    SceneError
        When a group that cannot be split further would need more than
        :data:`MAX_DATA_BYTES`.
    """
    one = [Group(model, 1, model.njoints, slice(0, model.nq), slice(0, model.nv))]
    runs = None if whole or len(model.mimicking_joints) else _top_subtrees(model)
    if data_bytes(model.nv) <= SINGLE_MODEL_BYTES or runs is None or len(runs) < 2:
        _check_size(model.nv, model, "the world")
        return one
    # groups of about s velocities: n/s groups of s^3 each take n s^2 (budget permitting)
    size = max(6.0, np.sqrt(SPLIT_BUDGET_BYTES / (DATA_BYTES_PER_NV3 * DATA_PER_GROUP * model.nv)))
    packs, nv_pack = [], 0
    for j0, j1 in runs:
        nv_run = sum(model.nvs[j] for j in range(j0, j1))
        if packs and nv_pack + nv_run <= size:
            packs[-1][1] = j1
            nv_pack += nv_run
        else:
            packs.append([j0, j1])
            nv_pack = nv_run
    groups = []
    for j0, j1 in packs:
        sub = _submodel(model, j0, j1)
        _check_size(sub.nv, model, f"the tree of joints {model.names[j0]!r} ...")
        q0, v0 = model.idx_qs[j0], model.idx_vs[j0]
        groups.append(Group(sub, j0, j1, slice(q0, q0 + sub.nq), slice(v0, v0 + sub.nv)))
    return groups


def _check_size(nv, model, what):
    need = data_bytes(nv)
    if need > MAX_DATA_BYTES:
        raise SceneError(
            f"{what} has nv = {nv} degrees of freedom in one kinematic tree (world: "
            f"{model.njoints - 1} joints, nv = {model.nv}); Pinocchio's dynamics data would "
            f"take about {need / 1e9:.0f} GB (limit {MAX_DATA_BYTES / 1e9:.0f} GB; it grows "
            "as nv^3): split it into separate robots or bodies, or use fewer degrees of "
            "freedom")


def block_diagonal(blocks, slices, nv):
    """(nv, nv) ndarray with ``blocks[k]`` at rows and columns ``slices[k]`` (a group's
    velocity range), zero elsewhere."""
    out = np.zeros((nv, nv))
    for B, vs in zip(blocks, slices):
        out[vs, vs] = B
    return out
