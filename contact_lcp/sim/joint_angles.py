"""Joint positions of the robots' one-dof joints as users read and command them.

A revolute (with limits) or prismatic joint's position is its configuration entry. A
continuous joint (Pinocchio's ``JointModelRUB*``: ``nq = 2``, ``nv = 1``) stores
``(cos θ, sin θ)``; its position is the angle θ [rad]:

- **Reported** (``Simulator.joint_state()``, recordings, ``/joint_states``) *unwrapped*, as
  Gazebo does: a wheel that made three turns reads about 6π. The simulator keeps an
  anchor angle per continuous joint, moved at every step to the angle of the new
  configuration nearest to it (``atan2(sin, cos)`` plus the whole turns of the anchor).
  This follows the joint exactly while it turns less than π per step (a wheel at
  3000 rad/s with h = 1 ms); the configuration itself only ever holds (cos, sin).
  The anchors start at the initial angles (``reset``) and are saved in state files, so a
  resumed run reads the same unwrapped angles.
- **Servoed** on the wrapped angle difference: a position target θ* is an absolute angle,
  and the servo's error is ``wrap(θ* - θ)`` in [-π, π), the shortest way to the target,
  as ros2_control's joint trajectory controller does for continuous joints
  (``angle_wraparound``). θ* and θ* + 2πk are the same target.
"""

import numpy as np
from numba import njit

TWO_PI = 2.0 * np.pi


def wrap_angle(x):
    """``x`` [rad] (scalar or ndarray) brought to [-π, π) by whole turns."""
    return x - TWO_PI * np.floor((np.asarray(x) + np.pi) / TWO_PI)


@njit(cache=True)
def wrap_scalar(x):
    """:func:`wrap_angle` of one float, for compiled servo loops."""
    return x - TWO_PI * np.floor((x + np.pi) / TWO_PI)


def joint_positions(q, idx_q, continuous):
    """Positions of one-dof joints in configuration ``q``.

    Parameters
    ----------
    q : (nq,) ndarray
    idx_q : (n,) int ndarray
        Each joint's first index in ``q`` (a continuous joint's cosine).
    continuous : (n,) bool ndarray

    Returns
    -------
    (n,) ndarray
        ``q[idx_q]`` [rad or m]; a continuous joint's angle ``atan2(sin, cos)`` in (-π, π].
    """
    out = q[idx_q].astype(float)
    if continuous.any():
        ic = idx_q[continuous]
        out[continuous] = np.arctan2(q[ic + 1], q[ic])
    return out


def servo_error(target, position, continuous):
    """``target - position`` (n,), wrapped to [-π, π) on continuous joints."""
    e = np.asarray(target, dtype=float) - position
    if continuous.any():
        e[continuous] = wrap_angle(e[continuous])
    return e


def gathered(robots, field, dtype):
    """The per-joint array ``field`` of every robot's RobotInfo, concatenated in
    ``joint_names`` order, as ``dtype`` (empty without robots)."""
    parts = [getattr(r, field) for r in robots]
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)


class JointPositions:
    """The reported positions of every robot's one-dof joints (in ``joint_names`` order),
    continuous joints unwrapped from one step to the next.

    Parameters
    ----------
    robots : list of RobotInfo
    """

    def __init__(self, robots):
        robots = list(robots)
        self.idx_q = gathered(robots, "idx_q", np.int64)
        self.continuous = gathered(robots, "continuous", bool)
        self.any_continuous = bool(self.continuous.any())
        self.anchor = np.zeros(int(self.continuous.sum()))

    def reset(self, q):
        """Anchor the continuous joints at their angles in ``q``, in (-π, π]."""
        self.anchor = joint_positions(q, self.idx_q, self.continuous)[self.continuous]

    def advance(self, q):
        """Move the anchors to configuration ``q`` (called after every step)."""
        if self.any_continuous:
            self.anchor = self._unwrapped(q)

    def _unwrapped(self, q):
        ic = self.idx_q[self.continuous]
        theta = np.arctan2(q[ic + 1], q[ic])
        return self.anchor + wrap_angle(theta - self.anchor)

    def read(self, q):
        """(n,) positions at ``q`` [rad or m]: continuous joints at the angle nearest to
        their anchor (``q`` is the configuration the anchors were last moved to, or one
        set since: a loaded state)."""
        out = q[self.idx_q].astype(float)
        if self.any_continuous:
            out[self.continuous] = self._unwrapped(q)
        return out
