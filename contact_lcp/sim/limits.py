"""Joint limits as unilateral rows of the step's contact problem."""

from dataclasses import dataclass

import numpy as np


@dataclass
class LimitRows:
    """Active joint-limit rows: velocity index, sign (+1 lower, -1 upper), gap [rad or m]."""

    idx_v: np.ndarray
    sign: np.ndarray
    gap: np.ndarray



def joint_limit_rows(robots, q, prescribed, activation, v_free=None, h=0.0):
    """Joint limits within ``activation`` of being reached, as unilateral rows.

    A limit is active when its gap, or the gap it would have after a step of ``h`` at the
    free velocity ``v_free`` (nv,), is at most ``activation``: a joint approaching faster
    than ``activation / h`` is still caught before it passes the limit.

    Parameters
    ----------
    robots : list of RobotInfo
    q : (nq,) ndarray
    prescribed : (p,) int ndarray or None
        Velocity indices that are prescribed (their limits are not constraints).
    activation : float
        Gap [rad or m] below which a limit row is active.
    """
    if not robots:
        return LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0))
    iq = np.concatenate([r.idx_q for r in robots]).astype(int)
    iv = np.concatenate([r.idx_v for r in robots]).astype(int)
    lo = np.concatenate([r.lower for r in robots])
    hi = np.concatenate([r.upper for r in robots])
    free = ~np.isin(iv, prescribed) if prescribed is not None else np.ones(iv.size, bool)
    gap_lo, gap_hi = q[iq] - lo, hi - q[iq]
    step = np.zeros(iv.size) if v_free is None else h * v_free[iv]
    # inf limits give inf gaps: never active
    at_lo = free & (np.minimum(gap_lo, gap_lo + step) <= activation)
    at_hi = free & (np.minimum(gap_hi, gap_hi - step) <= activation)
    return LimitRows(np.concatenate([iv[at_lo], iv[at_hi]]),
                     np.concatenate([np.ones(at_lo.sum()), -np.ones(at_hi.sum())]),
                     np.concatenate([gap_lo[at_lo], gap_hi[at_hi]]))


def no_limits():
    """No active limit row."""
    return LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0))
