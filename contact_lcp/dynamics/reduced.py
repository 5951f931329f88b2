"""Free motion over one step, with implicit joint servos and prescribed joints.

Implicit servos. A joint servo ``tau = kp (q_ref - q) + kd (v_ref - v)`` evaluated at the
end of the step (backward Euler, as MuJoCo's implicit damping and Drake's discrete PD)
stays stable for any gains and time step. With ``A = h kd + h^2 kp`` per joint::

    (M + diag(A)) dv = h (tau_pred - b),   tau_pred = kp (q_ref - q - h v) + kd (v_ref - v)

Pinocchio's joint ``armature`` adds exactly ``diag(A)`` to the mass matrix in ABA, CRBA
and ``computeMinverse``, so the stepper works on a private copy of the model whose
armature is the model's own plus ``A``. Contact impulses then act on the same implicit
system: ``v+ = v_free + K J' f`` with ``K = (M + diag(A))^-1``.

Prescribed joints. With joints in ``P`` following a reference exactly (Yamane & Nakamura's
high-gain feedback mode), only the other degrees of freedom ``D`` are dynamic::

    (M + A)_DD dv_D = h (tau_D - b_D - M_DP a_P),       a_P = (v_P+ - v_P) / h

and ``K`` is ``(M + A)_DD^-1`` embedded with zero rows and columns for ``P``. That block is
small (6 per floating base or free body) and is factorised with a dense Cholesky.

Free-flyer joints. ABA's free-flyer accelerations are spatial (body-frame Coriolis
``-w x v`` included); :class:`contact_lcp.dynamics.free_flyer.FreeFlyers` turns them into
classical accelerations in the frame at ``q`` and steps lone rigid bodies exactly
(implicit-midpoint Euler equation). The returned ``v_free`` is therefore expressed in the
frames at ``q`` and must be integrated with :meth:`World.integrate_state`, which also
re-expresses it in the frames at ``q+``.
"""

import numpy as np
import pinocchio as pin
from numba import njit
from scipy.linalg import cho_factor, cho_solve

from contact_lcp.dynamics.free_flyer import FreeFlyers, _free_velocities
from contact_lcp.dynamics.groups import block_diagonal
from contact_lcp.dynamics.sparse_rows import block_diagonal_csr
from contact_lcp.dynamics.world import same_vector


class FreeMotion:
    """Free motion of a :class:`contact_lcp.dynamics.World`, on its own model copy and Data.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    sparse : bool
        Return ``K`` as a ``scipy.sparse`` CSR matrix, block diagonal over the world's
        groups (:mod:`contact_lcp.dynamics.sparse_rows`; a world of several groups only).
    """

    def __init__(self, world, sparse=False):
        self.model = pin.Model(world.model)
        self.armature0 = np.array(self.model.armature, dtype=float)
        self._armature = None  # the armature last set on the models
        self.flyers = FreeFlyers(self.model)
        self.gravity_W = np.array(self.model.gravity.linear)
        # one (model copy, Data) per group of the world (contact_lcp.dynamics.groups)
        if len(world.groups) == 1:
            self.data = self.model.createData()
            self._parts = [(self.model, self.data, slice(0, self.model.nq),
                            slice(0, self.model.nv))]
        else:
            self.data = None
            self._parts = []
            for g in world.groups:
                m = pin.Model(g.model)
                self._parts.append((m, m.createData(), g.qs, g.vs))
            self._nv = self.model.nv
        self.sparse = bool(sparse) and self.data is None

    def gravity(self, q):
        """Gravity torques ``g(q)`` (nv,) [N.m or N] of the whole world."""
        if self.data is not None:  # (one group: Pinocchio's array as it is, a new one)
            return pin.computeGeneralizedGravity(self.model, self.data, q)
        return np.concatenate([pin.computeGeneralizedGravity(m, d, q[qs])
                               for m, d, qs, _ in self._parts])

    def _set_armature(self, arm):
        """Give the model copies the armature ``arm`` (nv,) (a copy into Pinocchio)."""
        for m, _, _, vs in self._parts:
            m.armature = arm[vs]
        self._armature = arm

    def _blocks(self, matrix, q, v):
        """``matrix(model, data, q)`` (``pin.computeMinverse`` or ``pin.crba``: the upper
        triangle at least) of the world as one (nv, nv) array, block diagonal over the
        groups of a split world, and ``b(q, v)`` (nv,)."""
        if self.data is not None:
            return matrix(self.model, self.data, q), pin.nonLinearEffects(self.model, self.data,
                                                                          q, v)
        blocks = [matrix(m, d, q[qs]) for m, d, qs, _ in self._parts]
        b = np.concatenate([pin.nonLinearEffects(m, d, q[qs], v[vs])
                            for m, d, qs, vs in self._parts])
        return block_diagonal(blocks, [vs for *_, vs in self._parts], self._nv), b

    def __call__(self, q, v, tau, h, armature=None, prescribed=None, v_prescribed=None):
        """Velocity after one step without contact, and the impulse-to-velocity map.

        Parameters
        ----------
        q : (nq,) ndarray
        v, tau : (nv,) ndarray
            Velocity [rad/s, m/s] and generalized force [N.m, N] (servo torques already
            evaluated at the predicted position ``q + h v``).
        h : float
            Time step [s].
        armature : (nv,) ndarray, optional
            Implicit servo terms ``h kd + h^2 kp`` [kg.m^2 or kg]; zero where explicit.
        prescribed : (p,) int ndarray, optional
            Velocity indices of prescribed joints; ``v_prescribed`` (p,) their velocities
            at the end of the step.

        Returns
        -------
        v_free : (nv,) ndarray
            In the free-flyers' frames at ``q`` (integrate with
            :meth:`World.integrate_state`).
        K : (nv, nv) ndarray
            Symmetric map from generalized impulse to velocity change [1/kg].
        """
        arm = self.armature0 if armature is None else self.armature0 + armature
        if self._armature is None or not same_vector(arm, self._armature):
            self._set_armature(arm)  # (only when it changes: one copy per model)
        if self.sparse:
            return self._sparse(q, v, tau, h, armature, prescribed, v_prescribed)
        if prescribed is None or len(prescribed) == 0:
            # the ABA acceleration from the inverse already at hand (an RNEA is half an
            # ABA), and the free-flyers' correction, in one compiled call
            if self.data is not None:
                Minv = pin.computeMinverse(self.model, self.data, q)
                b = pin.nonLinearEffects(self.model, self.data, q, v)
            else:
                Minv, b = self._blocks(pin.computeMinverse, q, v)
            fl = self.flyers
            return _unconstrained(Minv, b, q, v, tau, float(h), self.gravity_W, fl._iq, fl._iv,
                                  fl._single, fl._c, fl._mass, fl._I, fl._no_prescribed,
                                  fl._no_armature if armature is None else armature)
        nv = v.shape[0]
        P = np.asarray(prescribed, dtype=int)
        D = np.setdiff1d(np.arange(nv), P)
        M, b = self._blocks(pin.crba, q, v)
        M = np.triu(M) + np.triu(M, 1).T
        a_P = (np.asarray(v_prescribed, dtype=float) - v[P]) / h
        v_free = v.copy()
        v_free[P] = v_prescribed
        K = np.zeros((nv, nv))
        if D.size:
            L = cho_factor(M[np.ix_(D, D)])
            rhs = tau[D] - b[D] - M[np.ix_(D, P)] @ a_P
            v_free[D] = v[D] + h * cho_solve(L, rhs)
            K[np.ix_(D, D)] = cho_solve(L, np.eye(D.size))
        is_P = np.zeros(nv, dtype=bool)
        is_P[P] = True
        self.flyers.free_velocity(q, v, tau, h, v_free, self.gravity_W, prescribed=is_P,
                                  armature=armature)
        return v_free, K


    def _sparse(self, q, v, tau, h, armature, prescribed, v_prescribed):
        """:meth:`__call__` group by group, ``K`` block diagonal as CSR: the same
        equations on each group's block (``M`` is block diagonal over the groups)."""
        nv = v.shape[0]
        is_P = np.zeros(nv, dtype=bool)
        v_P = np.zeros(nv)  # the prescribed velocities, at their indices
        if prescribed is not None and len(prescribed):
            P_all = np.asarray(prescribed, dtype=int)
            is_P[P_all] = True
            v_P[P_all] = v_prescribed
        v_free = v.copy()
        blocks, slices = [], []
        for m, d, qs, vs in self._parts:
            q_g, v_g, P = q[qs], v[vs], np.flatnonzero(is_P[vs])
            b = pin.nonLinearEffects(m, d, q_g, v_g)
            if P.size == 0:  # the whole group moves: its M^-1 (upper triangle) mirrored
                K_g = np.array(pin.computeMinverse(m, d, q_g))
                K_g = np.triu(K_g) + np.triu(K_g, 1).T
                v_free[vs] = v_g + h * (K_g @ (tau[vs] - b))
            else:  # (M + A)_DD dv_D = h (tau_D - b_D - M_DP a_P), as __call__
                K_g = np.zeros((v_g.size, v_g.size))
                D = np.flatnonzero(~is_P[vs])
                if D.size:
                    M = pin.crba(m, d, q_g)
                    M = np.triu(M) + np.triu(M, 1).T
                    a_P = (v_P[vs][P] - v_g[P]) / h
                    L = cho_factor(M[np.ix_(D, D)])
                    rhs = tau[vs][D] - b[D] - M[np.ix_(D, P)] @ a_P
                    v_free[vs.start + D] = v_g[D] + h * cho_solve(L, rhs)
                    K_g[np.ix_(D, D)] = cho_solve(L, np.eye(D.size))
                v_free[vs.start + P] = v_P[vs][P]
            blocks.append(K_g)
            slices.append(vs)
        fl = self.flyers
        if is_P.any():
            fl.free_velocity(q, v, tau, h, v_free, self.gravity_W, prescribed=is_P,
                             armature=armature)
        else:
            _free_velocities(q, v, tau, h, v_free, self.gravity_W, fl._iq, fl._iv, fl._single,
                             fl._c, fl._mass, fl._I, fl._no_prescribed,
                             fl._no_armature if armature is None else armature)
        return v_free, block_diagonal_csr(blocks, slices, nv)


@njit(cache=True)
def _mirror_upper(K):
    """Copy the upper triangle of the square ``K`` onto its lower one, in place."""
    for i in range(K.shape[0]):
        for j in range(i):
            K[i, j] = K[j, i]


@njit(cache=True)
def _unconstrained(Minv, b, q, v, tau, h, gravity, iq, iv, single, lever, mass, I_c, prescribed,
                   armature):
    """``(v_free, K)`` of :meth:`FreeMotion.__call__` without prescribed joints: ``K`` the
    symmetric copy of Pinocchio's upper-triangular ``Minv``, ``v_free = v + h K (tau - b)``
    corrected for the free flyers (:meth:`FreeFlyers.free_velocity`)."""
    K = np.empty(Minv.shape)  # a C-ordered copy (Pinocchio's array may be its own memory)
    for i in range(K.shape[0]):
        for j in range(K.shape[1]):
            K[i, j] = Minv[i, j]
    _mirror_upper(K)
    v_free = v + h * (K @ (tau - b))
    _free_velocities(q, v, tau, h, v_free, gravity, iq, iv, single, lever, mass, I_c,
                     prescribed, armature)
    return v_free, K
