"""Free-flyer joints: a step that is exact for torque-free motion.

Pinocchio's free-flyer velocity ``v = (v_B, w_B)`` is the spatial velocity of the joint
frame B expressed in B: ``v_B = R' pdot`` [m/s], ``w_B`` [rad/s]. Its time derivative from
ABA is the *spatial* acceleration, ``vdot_B = R' pddot - w_B x v_B``. Integrating that
explicitly (``v+ = v + h vdot``) and then moving along the screw ``exp6(h v+)`` rotates
the body-frame velocity without rotating the frame: ``|v_B|`` grows by
``sqrt(1 + (h |w|)^2)`` per step, so a spinning ball speeds up without bound.

The step used here instead, per free-flyer joint with a reference point ``c`` fixed in B:

* velocity: the *classical* acceleration ``R' pddot = vdot_B + w_B x v_B`` is integrated in
  the frame at the start of the step (the frame is held still while the impulses act);
* position: the reference point moves in a straight line at its world velocity,
  ``p_c+ = p_c + h R (v_B + w_B x c)``; rotation ``R+ = R exp3(h w_B)``;
* the velocity is then re-expressed in the new frame, ``v_B+ = R+' R (v_B + w x c) - w x c``
  (the world velocity of c and ``w_B`` are unchanged by this change of frame).

For a single free rigid body (a free-flyer joint on the universe carrying no other joint)
``c`` is its centre of mass: gravity and the applied wrench change the centre-of-mass
velocity exactly, and the Euler equation about the centre of mass
``I (w+ - w) + h w_m x I w_m = h n_c`` with ``w_m = (w + w+) / 2`` (implicit midpoint,
solved by Newton) keeps the rotational kinetic energy ``w' I w / 2`` and ``|I w|`` of a
torque-free body exactly (dot the equation with ``w_m``, resp. ``I w_m``). A
torque-free body then moves exactly: straight centre-of-mass line, constant |v|, energy
conserved. For the floating base of an articulated robot ``c`` is the joint origin and
only the change of frame is corrected; the robot's other velocity-product terms stay
as ABA gives them (explicit).
"""

import numpy as np
import pinocchio as pin
from numba import njit

#: Newton on the body Euler equation stops when the momentum residual is below
#: this times ``|I w| + h |n_c|`` (about 1e3 round-offs: far below any physical effect).
NEWTON_RTOL = 1e-13
NEWTON_MAX_ITER = 30


def euler_midpoint(I_c, w, n_c, h):
    """Body angular velocity after one implicit-midpoint step of Euler's equation.

    Solves ``I (w+ - w) + h w_m x (I w_m) = h n_c``, ``w_m = (w + w+) / 2``, by Newton.

    Parameters
    ----------
    I_c : (3, 3) ndarray
        Rotational inertia about the centre of mass, in the body frame [kg.m^2].
    w : (3,) ndarray
        Body angular velocity at the start of the step [rad/s].
    n_c : (3,) ndarray
        Torque about the centre of mass, in the body frame [N.m].
    h : float
        Time step [s].

    Returns
    -------
    (3,) ndarray
        ``w+`` [rad/s]. With ``n_c = 0``, ``w+' I w+ = w' I w`` and ``|I w+| = |I w|``
        up to the Newton tolerance.
    """
    return _euler_midpoint(np.asarray(I_c, dtype=float), np.asarray(w, dtype=float),
                           np.asarray(n_c, dtype=float), float(h))


@njit(cache=True)
def _solve3_in_place(M, x):
    """Solve ``M y = x`` for a (3, 3) ``M`` into ``x`` (``M`` is overwritten by its
    elimination): Gaussian elimination with partial pivoting, LAPACK's ``gesv`` on three
    unknowns, written out (numba would call LAPACK, with arrays to allocate, for three)."""
    for col in range(3):
        p = col
        for r in range(col + 1, 3):
            if abs(M[r, col]) > abs(M[p, col]):
                p = r
        if p != col:
            for c in range(3):
                M[col, c], M[p, c] = M[p, c], M[col, c]
            x[col], x[p] = x[p], x[col]
        for r in range(col + 1, 3):
            f = M[r, col] / M[col, col]
            for c in range(col, 3):
                M[r, c] -= f * M[col, c]
            x[r] -= f * x[col]
    for r in range(2, -1, -1):
        acc = x[r]
        for c in range(r + 1, 3):
            acc -= M[r, c] * x[c]
        x[r] = acc / M[r, r]


@njit(cache=True)
def _euler_midpoint(I_c, w, n_c, h):
    """:func:`euler_midpoint` compiled (scalars and four work arrays a call: the Newton
    iterations allocate nothing)."""
    w0, w1, w2 = w[0], w[1], w[2]
    n0, n1, n2 = n_c[0], n_c[1], n_c[2]
    x0, x1, x2 = w0, w1, w2  # w_next
    a0 = I_c[0, 0] * w0 + I_c[0, 1] * w1 + I_c[0, 2] * w2
    a1 = I_c[1, 0] * w0 + I_c[1, 1] * w1 + I_c[1, 2] * w2
    a2 = I_c[2, 0] * w0 + I_c[2, 1] * w1 + I_c[2, 2] * w2
    scale = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2) + h * np.sqrt(n0 * n0 + n1 * n1 + n2 * n2) \
        + 1e-300
    S = np.empty((3, 3))  # skew(w_m)
    T = np.empty((3, 3))  # skew(L_m)
    D = np.empty((3, 3))  # dF
    F = np.empty(3)
    hh = 0.5 * h
    for _ in range(NEWTON_MAX_ITER):
        m0, m1, m2 = 0.5 * (w0 + x0), 0.5 * (w1 + x1), 0.5 * (w2 + x2)
        L0 = I_c[0, 0] * m0 + I_c[0, 1] * m1 + I_c[0, 2] * m2
        L1 = I_c[1, 0] * m0 + I_c[1, 1] * m1 + I_c[1, 2] * m2
        L2 = I_c[2, 0] * m0 + I_c[2, 1] * m1 + I_c[2, 2] * m2
        d0, d1, d2 = x0 - w0, x1 - w1, x2 - w2
        F[0] = (I_c[0, 0] * d0 + I_c[0, 1] * d1 + I_c[0, 2] * d2) + h * (m1 * L2 - m2 * L1) - h * n0
        F[1] = (I_c[1, 0] * d0 + I_c[1, 1] * d1 + I_c[1, 2] * d2) + h * (m2 * L0 - m0 * L2) - h * n1
        F[2] = (I_c[2, 0] * d0 + I_c[2, 1] * d1 + I_c[2, 2] * d2) + h * (m0 * L1 - m1 * L0) - h * n2
        if np.sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]) <= NEWTON_RTOL * scale:
            break
        _skew_into(m0, m1, m2, S)
        _skew_into(L0, L1, L2, T)
        for i in range(3):
            for j in range(3):
                D[i, j] = I_c[i, j] + hh * ((S[i, 0] * I_c[0, j] + S[i, 1] * I_c[1, j]
                                             + S[i, 2] * I_c[2, j]) - T[i, j])
        _solve3_in_place(D, F)
        x0, x1, x2 = x0 - F[0], x1 - F[1], x2 - F[2]
    out = np.empty(3)
    out[0], out[1], out[2] = x0, x1, x2
    return out


@njit(cache=True, inline="always")
def _skew_into(x, y, z, S):
    """``S`` <- the cross-product matrix of ``(x, y, z)`` (``S u = (x, y, z) x u``)."""
    S[0, 0], S[0, 1], S[0, 2] = 0.0, -z, y
    S[1, 0], S[1, 1], S[1, 2] = z, 0.0, -x
    S[2, 0], S[2, 1], S[2, 2] = -y, x, 0.0


@njit(cache=True)
def _free_velocities(q, v, tau, h, v_free, gravity, iq, iv, single, lever, mass, I_c,
                     prescribed, armature):
    """:meth:`FreeFlyers.free_velocity` compiled; ``prescribed`` and ``armature`` (nv,)
    (all False / zero when not given). ``I_c`` (lone bodies' inertias) is None when no
    joint is a lone body (``single`` all False): numba then prunes the exact step (Newton
    on Euler's equation), which a robot's first run would otherwise compile for nothing."""
    R = np.empty((3, 3))  # (work arrays of the lone bodies' exact step)
    n_c = np.empty(3)
    for k in range(iq.shape[0]):
        b = iv[k]
        skip = False
        exact = single[k]
        for c in range(b, b + 6):
            if prescribed[c]:
                skip = True
            if armature[c] != 0.0:
                exact = False
        if skip:
            continue
        u0, u1, u2 = v[b], v[b + 1], v[b + 2]
        w0, w1, w2 = v[b + 3], v[b + 4], v[b + 5]
        if not exact:  # (w x v_B)
            v_free[b] += h * (w1 * u2 - w2 * u1)
            v_free[b + 1] += h * (w2 * u0 - w0 * u2)
            v_free[b + 2] += h * (w0 * u1 - w1 * u0)
            continue
        if I_c is not None:  # (a model without lone bodies passes None: not compiled)
            a = iq[k]
            _quat_into(q[a + 3], q[a + 4], q[a + 5], q[a + 6], R)
            c = lever[k]
            f0, f1, f2 = tau[b], tau[b + 1], tau[b + 2]
            m = mass[k]
            g0 = R[0, 0] * gravity[0] + R[1, 0] * gravity[1] + R[2, 0] * gravity[2]
            g1 = R[0, 1] * gravity[0] + R[1, 1] * gravity[1] + R[2, 1] * gravity[2]
            g2 = R[0, 2] * gravity[0] + R[1, 2] * gravity[1] + R[2, 2] * gravity[2]
            # v_B + w x c + h (f_B / m + R' g); n_B - c x f_B
            c0 = u0 + (w1 * c[2] - w2 * c[1]) + h * (f0 / m + g0)
            c1 = u1 + (w2 * c[0] - w0 * c[2]) + h * (f1 / m + g1)
            c2 = u2 + (w0 * c[1] - w1 * c[0]) + h * (f2 / m + g2)
            n_c[0] = tau[b + 3] - (c[1] * f2 - c[2] * f1)
            n_c[1] = tau[b + 4] - (c[2] * f0 - c[0] * f2)
            n_c[2] = tau[b + 5] - (c[0] * f1 - c[1] * f0)
            w_next = _euler_midpoint(I_c[k], v[b + 3:b + 6], n_c, h)
            x0, x1, x2 = w_next[0], w_next[1], w_next[2]
            v_free[b] = c0 - (x1 * c[2] - x2 * c[1])
            v_free[b + 1] = c1 - (x2 * c[0] - x0 * c[2])
            v_free[b + 2] = c2 - (x0 * c[1] - x1 * c[0])
            v_free[b + 3], v_free[b + 4], v_free[b + 5] = x0, x1, x2




class FreeFlyers:
    """The free-flyer joints of a model and how each one is stepped.

    Parameters
    ----------
    model : pin.Model

    Attributes
    ----------
    joints : list of int
        Free-flyer joint ids.
    idx_q, idx_v : list of int
        First index of each in ``q`` (7 entries) and ``v`` (6 entries).
    single_body : list of bool
        The joint is on the universe and carries no other joint: a lone rigid body.
    lever : list of (3,) ndarray
        Reference point ``c`` in the joint frame [m]: the centre of mass of a lone rigid
        body, the joint origin otherwise.
    """

    def __init__(self, model):
        children = set(int(model.parents[j]) for j in range(1, model.njoints))
        self.joints, self.idx_q, self.idx_v = [], [], []
        self.single_body, self.lever, self.mass, self.I_c = [], [], [], []
        for j in range(1, model.njoints):
            if model.joints[j].shortname() != "JointModelFreeFlyer":
                continue
            single = int(model.parents[j]) == 0 and j not in children
            Y = model.inertias[j]
            self.joints.append(j)
            self.idx_q.append(int(model.idx_qs[j]))
            self.idx_v.append(int(model.idx_vs[j]))
            self.single_body.append(single and Y.mass > 0.0)
            self.lever.append(np.array(Y.lever) if single else np.zeros(3))
            self.mass.append(float(Y.mass))
            self.I_c.append(np.array(Y.inertia))
        self._iq = np.array(self.idx_q, dtype=np.int64)
        self._iv = np.array(self.idx_v, dtype=np.int64)
        self._single = np.array(self.single_body, dtype=np.bool_)
        self._c = np.array(self.lever, dtype=float).reshape(-1, 3)
        self._mass = np.array(self.mass, dtype=float)
        # (None without lone bodies: their exact step is then not compiled, see
        # _free_velocities)
        self._I = (np.array(self.I_c, dtype=float).reshape(-1, 3, 3)
                   if any(self.single_body) else None)
        self._no_prescribed = np.zeros(model.nv, dtype=np.bool_)
        self._no_armature = np.zeros(model.nv)
        # every other joint moves one coordinate along a line or about a fixed axis:
        # pin.integrate is q + h v there, and the whole step is one compiled call
        vec_q, vec_v, simple = [], [], True
        for j in range(1, model.njoints):
            kind = model.joints[j].shortname()
            if kind == "JointModelFreeFlyer":
                continue
            if kind in _VECTOR_JOINTS:
                vec_q.append(int(model.idx_qs[j]))
                vec_v.append(int(model.idx_vs[j]))
            else:
                simple = False
        self._vector = (np.array(vec_q, dtype=np.int64), np.array(vec_v, dtype=np.int64)) \
            if simple else None

    def __len__(self):
        return len(self.joints)

    def free_velocity(self, q, v, tau, h, v_free, gravity, *, prescribed=None, armature=None):
        """Correct a free-motion velocity from ABA for the free-flyer joints, in place.

        Parameters
        ----------
        q : (nq,) ndarray
        v, tau : (nv,) ndarray
            Velocity at the start of the step [m/s, rad/s] and generalized force [N, N.m]
            (a free-flyer's entries are the wrench on B about its origin, in B).
        h : float
            Time step [s].
        v_free : (nv,) ndarray
            ``v + h vdot`` with ``vdot`` from ABA (spatial accelerations); overwritten.
        gravity : (3,) ndarray
            [m/s^2] in W.
        prescribed : (nv,) bool ndarray, optional
            Velocity entries that are prescribed: not touched.
        armature : (nv,) ndarray, optional
            Added armature [kg.m^2 or kg]; a lone body with any nonzero entry keeps ABA's
            result, only changed to classical accelerations.

        Returns
        -------
        (nv,) ndarray
            ``v_free``: classical accelerations integrated in the frame at ``q``; lone
            bodies stepped exactly (centre-of-mass velocity, implicit-midpoint Euler).
        """
        if not self.joints:
            return v_free
        if v.shape[0] != self._no_prescribed.shape[0]:
            raise ValueError(f"v must have {self._no_prescribed.shape[0]} entries; got {v.shape[0]}")
        _free_velocities(q, v, np.asarray(tau, dtype=float), float(h), v_free,
                         np.asarray(gravity, dtype=float), self._iq, self._iv, self._single,
                         self._c, self._mass, self._I,
                         self._no_prescribed if prescribed is None else np.asarray(prescribed, bool),
                         self._no_armature if armature is None else np.asarray(armature, float))
        return v_free

    def integrate(self, model, q, v, h):
        """One step on the configuration manifold, and the velocity in the new frames.

        Parameters
        ----------
        model : pin.Model
        q : (nq,) ndarray
        v : (nv,) ndarray
            Velocity over the step [m/s, rad/s], free-flyers' in their frame at ``q``.
        h : float
            Time step [s].

        Returns
        -------
        q_next : (nq,) ndarray
            Quaternions normalised; other joints by ``pin.integrate``.
        v_next : (nv,) ndarray
            ``v`` with each free-flyer's linear part re-expressed in its frame at
            ``q_next`` (same world velocity of its reference point, same ``w_B``).
        """
        if self._vector is not None:
            return _integrate_vector(q, v, float(h), *self._vector, self._iq, self._iv, self._c)
        q_next = pin.integrate(model, q, v * h)
        v_next = v.copy()
        _step_flyers(q, v, h, self._iq, self._iv, self._c, q_next, v_next)
        return pin.normalize(model, q_next), v_next


#: Pinocchio's one-coordinate joints whose configuration is the coordinate itself
#: (revolute with limits, prismatic); continuous joints (cos, sin) are not among them
_VECTOR_JOINTS = ("JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned",
                  "JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned")


@njit(cache=True)
def _integrate_vector(q, v, h, vec_q, vec_v, iq, iv, lever):
    """:meth:`FreeFlyers.integrate` for models of free flyers and one-coordinate joints
    only: ``q + h v`` on the latter (as ``pin.integrate``), :func:`_step_flyers` on the
    former (quaternions normalised there)."""
    q_next = q.copy()
    for a in range(vec_q.shape[0]):
        q_next[vec_q[a]] = q[vec_q[a]] + v[vec_v[a]] * h
    v_next = v.copy()
    _step_flyers(q, v, h, iq, iv, lever, q_next, v_next)
    return q_next, v_next


@njit(cache=True)
def _quat_matrix(x, y, z, w):
    """Rotation matrix of the quaternion (x, y, z, w), normalised first."""
    R = np.empty((3, 3))
    _quat_into(x, y, z, w, R)
    return R


@njit(cache=True, inline="always")
def _quat_into(x, y, z, w, R):
    """:func:`_quat_matrix` into ``R`` (3, 3)."""
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    R[1, 0], R[1, 1], R[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    R[2, 0], R[2, 1], R[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)


@njit(cache=True)
def _step_flyers(q, v, h, iq, iv, lever, q_next, v_next):
    """The free-flyer part of :meth:`FreeFlyers.integrate`, in place on ``q_next`` and
    ``v_next``: reference point on a straight line at its world velocity, rotation
    ``R exp3(h w)`` as a normalised quaternion, linear velocity re-expressed (scalars and
    four 3 x 3 work arrays a call)."""
    R = np.empty((3, 3))
    Rn = np.empty((3, 3))  # R exp3(h w), then the rotation of its normalised quaternion
    K = np.empty((3, 3))
    E = np.empty((3, 3))
    for k in range(iq.shape[0]):
        a, b = iq[k], iv[k]
        _quat_into(q[a + 3], q[a + 4], q[a + 5], q[a + 6], R)
        w0, w1, w2 = v[b + 3], v[b + 4], v[b + 5]
        c = lever[k]
        wc0, wc1, wc2 = w1 * c[2] - w2 * c[1], w2 * c[0] - w0 * c[2], w0 * c[1] - w1 * c[0]
        u0, u1, u2 = v[b] + wc0, v[b + 1] + wc1, v[b + 2] + wc2
        r0 = R[0, 0] * u0 + R[0, 1] * u1 + R[0, 2] * u2  # R (v_B + w x c), world velocity
        r1 = R[1, 0] * u0 + R[1, 1] * u1 + R[1, 2] * u2
        r2 = R[2, 0] * u0 + R[2, 1] * u1 + R[2, 2] * u2
        # exp3(h w) by Rodrigues, then R exp3 as a quaternion (normalised)
        th = h * np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if th > 0.0:
            ax0, ax1, ax2 = h * w0 / th, h * w1 / th, h * w2 / th
            _skew_into(ax0, ax1, ax2, K)
            sn, cs = np.sin(th), 1.0 - np.cos(th)
            for i in range(3):
                for j in range(3):
                    E[i, j] = ((1.0 if i == j else 0.0) + sn * K[i, j]) + cs * (
                        K[i, 0] * K[0, j] + K[i, 1] * K[1, j] + K[i, 2] * K[2, j])
            for i in range(3):
                for j in range(3):
                    Rn[i, j] = R[i, 0] * E[0, j] + R[i, 1] * E[1, j] + R[i, 2] * E[2, j]
        else:
            Rn[:, :] = R
        # quaternion of Rn (Shepperd), normalised, and its exact rotation matrix
        tr = Rn[0, 0] + Rn[1, 1] + Rn[2, 2]
        if tr > 0.0:
            s = 2.0 * np.sqrt(tr + 1.0)
            qw, qx = 0.25 * s, (Rn[2, 1] - Rn[1, 2]) / s
            qy, qz = (Rn[0, 2] - Rn[2, 0]) / s, (Rn[1, 0] - Rn[0, 1]) / s
        elif Rn[0, 0] > Rn[1, 1] and Rn[0, 0] > Rn[2, 2]:
            s = 2.0 * np.sqrt(1.0 + Rn[0, 0] - Rn[1, 1] - Rn[2, 2])
            qw, qx = (Rn[2, 1] - Rn[1, 2]) / s, 0.25 * s
            qy, qz = (Rn[0, 1] + Rn[1, 0]) / s, (Rn[0, 2] + Rn[2, 0]) / s
        elif Rn[1, 1] > Rn[2, 2]:
            s = 2.0 * np.sqrt(1.0 + Rn[1, 1] - Rn[0, 0] - Rn[2, 2])
            qw, qx = (Rn[0, 2] - Rn[2, 0]) / s, (Rn[0, 1] + Rn[1, 0]) / s
            qy, qz = 0.25 * s, (Rn[1, 2] + Rn[2, 1]) / s
        else:
            s = 2.0 * np.sqrt(1.0 + Rn[2, 2] - Rn[0, 0] - Rn[1, 1])
            qw, qx = (Rn[1, 0] - Rn[0, 1]) / s, (Rn[0, 2] + Rn[2, 0]) / s
            qy, qz = (Rn[1, 2] + Rn[2, 1]) / s, 0.25 * s
        n = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
        _quat_into(qx, qy, qz, qw, Rn)  # R_next
        for i in range(3):
            Rc = R[i, 0] * c[0] + R[i, 1] * c[1] + R[i, 2] * c[2]
            Rnc = Rn[i, 0] * c[0] + Rn[i, 1] * c[1] + Rn[i, 2] * c[2]
            r = r0 if i == 0 else r1 if i == 1 else r2
            wc = wc0 if i == 0 else wc1 if i == 1 else wc2
            # p = q + R c + h v_W - R_next c;  v_B = R_next' v_W - w x c
            q_next[a + i] = q[a + i] + Rc + h * r - Rnc
            v_next[b + i] = (Rn[0, i] * r0 + Rn[1, i] * r1 + Rn[2, i] * r2) - wc
        q_next[a + 3], q_next[a + 4], q_next[a + 5], q_next[a + 6] = qx, qy, qz, qw
