"""Joint limits as unilateral rows of the step's contact problem."""

from dataclasses import dataclass

import numpy as np
from numba import njit

from contact_lcp.sim.joint_angles import gathered


@dataclass
class LimitRows:
    """Active joint-limit rows: velocity index, sign (+1 lower, -1 upper), gap [rad or m]."""

    idx_v: np.ndarray
    sign: np.ndarray
    gap: np.ndarray


class JointLimits:
    """The finite position limits of the robots' one-dof joints, gathered once.

    Parameters
    ----------
    robots : list of RobotInfo
    """

    def __init__(self, robots):
        robots = list(robots)
        iq, iv = gathered(robots, "idx_q", int), gathered(robots, "idx_v", int)
        lo, hi = gathered(robots, "lower", float), gathered(robots, "upper", float)
        finite = np.isfinite(lo) | np.isfinite(hi)  # inf limits are never active
        self.idx_q, self.idx_v, self.lower, self.upper = iq[finite], iv[finite], lo[finite], hi[finite]

    def rows(self, q, prescribed, activation, v_free=None, h=0.0):
        """Limits within ``activation`` of being reached, as unilateral rows.

        A limit is active when its gap, or the gap it would have after a step of ``h`` at
        the free velocity ``v_free`` (nv,), is at most ``activation``: a joint approaching
        faster than ``activation / h`` is still caught before it passes the limit.

        Parameters
        ----------
        q : (nq,) ndarray
        prescribed : (p,) int ndarray or None
            Velocity indices that are prescribed (their limits are not constraints).
        activation : float
            Gap [rad or m] below which a limit row is active.
        v_free : (nv,) ndarray, optional
        h : float
            Time step [s].
        """
        iv = self.idx_v
        if iv.size == 0:
            return no_limits()
        pres = _NO_INDEX if prescribed is None else np.asarray(prescribed, dtype=np.int64)
        vf = _NO_VALUE if v_free is None else np.asarray(v_free, dtype=float)
        idx, sign, gap = _rows(q, self.idx_q, iv, self.lower, self.upper, vf, float(h),
                               float(activation), pres)
        return LimitRows(idx, sign, gap)


_NO_INDEX = np.zeros(0, dtype=np.int64)
_NO_VALUE = np.zeros(0)


@njit(cache=True)
def _rows(q, idx_q, idx_v, lower, upper, v_free, h, activation, prescribed):
    """:meth:`JointLimits.rows` compiled: the active lower limits, then the upper ones."""
    n = idx_q.shape[0]
    idx = np.empty(2 * n, dtype=np.int64)
    sign = np.empty(2 * n)
    gap = np.empty(2 * n)
    m = 0
    for side in range(2):
        for a in range(n):
            c = idx_v[a]
            free = True
            for p in range(prescribed.shape[0]):
                if prescribed[p] == c:
                    free = False
            if not free:
                continue
            x = q[idx_q[a]]
            g = x - lower[a] if side == 0 else upper[a] - x
            step = h * v_free[c] if v_free.shape[0] else 0.0
            after = g + step if side == 0 else g - step
            if min(g, after) <= activation:
                idx[m] = c
                sign[m] = 1.0 if side == 0 else -1.0
                gap[m] = g
                m += 1
    return idx[:m], sign[:m], gap[:m]


def joint_limit_rows(robots, q, prescribed, activation, v_free=None, h=0.0):
    """:meth:`JointLimits.rows` for ``robots`` (gathering their limits on each call)."""
    return JointLimits(robots).rows(q, prescribed, activation, v_free, h)


def no_limits():
    """No active limit row."""
    return LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0))
