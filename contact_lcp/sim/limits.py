"""Joint limits as unilateral rows of the step's contact problem."""

from dataclasses import dataclass

import numpy as np


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
        cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
        iq = cat([r.idx_q for r in robots], int)
        iv = cat([r.idx_v for r in robots], int)
        lo = cat([r.lower for r in robots], float)
        hi = cat([r.upper for r in robots], float)
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
        x = q[self.idx_q]
        gap_lo, gap_hi = x - self.lower, self.upper - x
        step = 0.0 if v_free is None else h * v_free[iv]
        at_lo = np.minimum(gap_lo, gap_lo + step) <= activation
        at_hi = np.minimum(gap_hi, gap_hi - step) <= activation
        if prescribed is not None:
            free = ~np.isin(iv, prescribed)
            at_lo &= free
            at_hi &= free
        return LimitRows(np.concatenate([iv[at_lo], iv[at_hi]]),
                         np.concatenate([np.ones(at_lo.sum()), -np.ones(at_hi.sum())]),
                         np.concatenate([gap_lo[at_lo], gap_hi[at_hi]]))


def joint_limit_rows(robots, q, prescribed, activation, v_free=None, h=0.0):
    """:meth:`JointLimits.rows` for ``robots`` (gathering their limits on each call)."""
    return JointLimits(robots).rows(q, prescribed, activation, v_free, h)


def no_limits():
    """No active limit row."""
    return LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0))
