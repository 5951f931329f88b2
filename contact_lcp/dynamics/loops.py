"""Loop closures: bilateral constraints between two links (or a link and the world).

Anitescu & Hart's step is a mixed LCP: free bilateral joint rows ``J_L v+ + Phi / h = 0``
next to the complementary contact rows. The bilateral rows are eliminated first, by the
Schur complement, so the contact LCP keeps its form and the pivot search still decides it.
With ``D = J_L K J_L'`` (the loop Delassus matrix) and ``D^+`` its pseudo-inverse::

    lam_L  = -D^+ (J_L v_free + gamma Phi / h)
    v_free' = v_free + K J_L' lam_L                       (constrained free motion)
    K'      = K - K J_L' D^+ J_L K                        (constrained impulse response)

Then ``v+ = v_free' + K' J_C' f`` satisfies the loop rows for any contact impulse ``f``,
and ``J_C K' J_C'`` is exactly the Schur complement of the loop block in the MLCP matrix.
The ``gamma Phi / h`` term removes loop drift within a step (Anitescu & Hart's
stabilization), as the normal-row bias does for penetration.

Redundant closures (a 3-D point closure of a planar chain has a zero row; two welds on the
same pair repeat six rows) make ``D`` singular. ``D^+`` is computed from the symmetric
eigendecomposition of ``D`` (rank-revealing): eigenvalues below ``rank_tol * max(eig)``
are dropped, so redundant rows get no impulse and inconsistent ones are met in the least-
squares sense; the rank found is reported.

Pinocchio: each closure is a ``pin.RigidConstraintModel`` (``CONTACT_3D`` for ``point``,
``CONTACT_6D`` for ``weld``, LOCAL frame); ``pin.getConstraintJacobian`` gives its rows. The loop
Delassus matrix is formed from our own ``K`` (which holds the implicit-servo armature and
prescribed joints that Pinocchio's ``computeDelassusMatrix`` would not know).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pinocchio as pin

from contact_lcp.exceptions import SceneError

LOOP_TYPES = ("point", "weld")
WORLD = "world"


@dataclass(frozen=True)
class LoopSpec:
    """A loop closure from the scene file.

    Attributes
    ----------
    name : str
    type : str
        ``point`` (3 rows: the two points coincide) or ``weld`` (6 rows: the two frames
        coincide).
    link_a, link_b : str
        Link names; ``link_b = "world"`` for a closure to a fixed point.
    point_a : (3,) tuple
        The closure point in link a's frame [m].
    point_b : (3,) tuple or None
        The closure point in link b's frame (in W for the world) [m]; None: where point_a
        is in the initial configuration. A weld's orientation is always the initial one.
    """

    name: str
    type: str
    link_a: str
    link_b: str = WORLD
    point_a: tuple = (0.0, 0.0, 0.0)
    point_b: Optional[tuple] = None


@dataclass(frozen=True)
class LoopStats:
    """What the projection did in one step: ``rows`` (m), ``rank`` of ``D``, the largest
    closure error ``max_error`` [m or rad] before the step."""

    rows: int
    rank: int
    max_error: float


class LoopClosures:
    """The scene's loop closures on a :class:`~contact_lcp.dynamics.World`.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    specs : sequence of LoopSpec
    q0 : (nq,) ndarray
        Initial configuration (fixes the default ``point_b`` and weld orientations).
    gamma : float
        Stabilization gain of the ``Phi / h`` term, in [0, 1].
    rank_tol : float
        Relative eigenvalue threshold of the pseudo-inverse of ``D``.
    """

    def __init__(self, world, specs, q0, *, gamma=1.0, rank_tol=1e-9):
        self.world, self.specs = world, tuple(specs)
        self.gamma, self.rank_tol = float(gamma), float(rank_tol)
        if len(world.groups) > 1:
            raise SceneError("loop closures need the world in one Pinocchio model; build it "
                             "with World(..., whole=True)")
        model = world.model
        data = model.createData()
        pin.forwardKinematics(model, data, q0)
        self.constraints = []
        for s in self.specs:
            if s.type not in LOOP_TYPES:
                raise SceneError(f"loop {s.name!r}: type must be one of {LOOP_TYPES}; "
                                 f"received {s.type!r}")
            j1, M1 = self._joint_frame(s.link_a, s.point_a)
            X_W1 = data.oMi[j1] * M1
            if s.link_b == WORLD:
                j2, X_W2j = 0, pin.SE3.Identity()
            else:
                if s.link_b == s.link_a:
                    raise SceneError(f"loop {s.name!r}: links a and b are both {s.link_a!r}")
                j2, _ = self._joint_frame(s.link_b, (0.0, 0.0, 0.0))
                X_W2j = data.oMi[j2]
            X_W2 = pin.SE3(X_W1.rotation, X_W1.translation.copy())
            if s.point_b is not None:  # given in frame b (W for the world)
                X_W2.translation = X_W2j.act(np.asarray(s.point_b, dtype=float))
            M2 = X_W2j.actInv(X_W2)
            kind = pin.ContactType.CONTACT_3D if s.type == "point" else pin.ContactType.CONTACT_6D
            cm = pin.RigidConstraintModel(kind, model, j1, M1, j2, M2, pin.ReferenceFrame.LOCAL)
            cm.name = s.name
            self.constraints.append((cm, cm.createData(), s.type))
        self.num_rows = sum(3 if t == "point" else 6 for _, _, t in self.constraints)

    def _joint_frame(self, link, point):
        fid = self.world.frame_id(link)
        frame = self.world.model.frames[fid]
        M = frame.placement * pin.SE3(np.eye(3), np.asarray(point, dtype=float))
        return int(frame.parentJoint), M

    def rows(self, data):
        """Closure Jacobian and error at the configuration of ``data``.

        Parameters
        ----------
        data : pin.Data
            Joint placements and joint Jacobians computed (``computeJointJacobians``).

        Returns
        -------
        J_L : (m, nv) ndarray
            Rows: per point closure the relative velocity of point a w.r.t. point b in
            frame a [m/s]; per weld the relative spatial velocity (linear, angular) [m/s,
            rad/s].
        Phi : (m,) ndarray
            Closure errors whose rate is ``J_L v``: ``R_a' (p_a - p_b)`` [m] for a point,
            ``log6(X_b^-1 X_a)`` [m, rad] for a weld.
        """
        model = self.world.model
        J, Phi = [], []
        for cm, cd, kind in self.constraints:
            cm.calc(model, data, cd)
            # pin.getConstraintJacobian, not cm.jacobian: in Pinocchio 4.1 the latter hands
            # back a shared buffer that keeps columns of the previous constraint
            J.append(np.array(pin.getConstraintJacobian(model, data, cm, cd)))
            X1, X2 = cd.oMc1, cd.oMc2
            if kind == "point":
                Phi.append(X1.rotation.T @ (X1.translation - X2.translation))
            else:
                Phi.append(pin.log6(X2.actInv(X1)).vector)
        nv = model.nv
        if not J:
            return np.zeros((0, nv)), np.zeros(0)
        return np.vstack(J), np.concatenate(Phi)

    def errors(self, q):
        """(m,) closure errors at ``q`` [m or rad] (on a private Data)."""
        data = self.world.model.createData()
        pin.forwardKinematics(self.world.model, data, q)
        pin.computeJointJacobians(self.world.model, data, q)
        return self.rows(data)[1]

    def kinematics(self, q):
        """A private ``pin.Data`` with the joint placements and Jacobians at ``q`` (for
        :meth:`rows` and :meth:`project` away from the world's configuration)."""
        model = self.world.model
        data = self.__dict__.setdefault("_data_q", model.createData())
        pin.computeJointJacobians(model, data, q)
        return data

    def correct(self, q, K):
        """``q`` moved onto the closures by one Gauss-Newton step in the metric of ``K``:
        ``q (+) (-K J' D^+ Phi)``, ``D = J K J'`` (rank-revealing, as :meth:`project`).

        For steps whose position follows the mean of two velocities (the second-order
        step without impulses), which the velocity rows alone hold to O(h^2) per step."""
        J, Phi = self.rows(self.kinematics(q))
        if not J.shape[0]:
            return q
        Vr, KJt = self._inverse_rows(J, K)
        if Vr is None:
            return q
        return self.world.integrate(q, -KJt @ (Vr @ (Vr.T @ Phi)), 1.0)

    def _inverse_rows(self, J, K):
        """``(Vr, K J')`` with ``D^+ = Vr Vr'`` for ``D = J K J'`` (eigenvalues above
        ``rank_tol`` times the largest kept), or ``(None, K J')`` when D is zero."""
        KJt = K @ J.T
        D = J @ KJt
        D = 0.5 * (D + D.T)
        w, V = np.linalg.eigh(D)
        keep = w > self.rank_tol * max(float(w[-1]), 0.0) if w.size else w > 0
        if not np.any(keep):
            return None, KJt
        return V[:, keep] / np.sqrt(w[keep]), KJt

    def project(self, data, v_free, K, h, *, Phi=None, gamma=None):
        """Constrained free motion and impulse response (the Schur complement).

        Parameters
        ----------
        data : pin.Data
            Kinematics at the step's configuration (see :meth:`rows`).
        v_free : (nv,) ndarray
            Free velocity at the end of the step [m/s, rad/s].
        K : (nv, nv) ndarray
            Impulse-to-velocity map [1/kg].
        h : float
            Time step [s].
        Phi : (m,) ndarray, optional
            Closure errors to remove instead of those at ``data``'s configuration [m, rad].
        gamma : float, optional
            Fraction of them removed in the step instead of :attr:`gamma` (0: the velocity
            rows alone).

        Returns
        -------
        v_free : (nv,) ndarray
        K : (nv, nv) ndarray
            Symmetric PSD.
        stats : LoopStats
        """
        J, Phi_here = self.rows(data)
        Phi = Phi_here if Phi is None else Phi
        gamma = self.gamma if gamma is None else gamma
        Vr, KJt = self._inverse_rows(J, K)
        if Vr is None:
            return v_free, K, LoopStats(J.shape[0], 0, float(np.max(np.abs(Phi), initial=0)))
        B = KJt @ Vr
        lam = -Vr @ (Vr.T @ (J @ v_free + gamma * Phi / h))
        v_new = v_free + KJt @ lam
        K_new = K - B @ B.T
        K_new = 0.5 * (K_new + K_new.T)
        return v_new, K_new, LoopStats(J.shape[0], int(Vr.shape[1]),
                                       float(np.max(np.abs(Phi), initial=0.0)))
