"""Joint references: hold a posture, sinusoids, a CSV file, or an external trajectory.

A reference is called with the sim time ``t`` [s] and returns positions [rad or m],
velocities and accelerations of the joints it was built for, each ``(n,)``.
"""

import csv

import numpy as np

from contact_lcp.exceptions import SceneError


class HoldReference:
    """Hold a posture ``q0`` (n,) with zero velocity.

    Every call returns the same three arrays, the reference's own (it is asked every
    step): callers read them and must not write into them."""

    def __init__(self, q0):
        self.q0 = np.array(q0, dtype=float)
        self._zero = np.zeros_like(self.q0)

    def __call__(self, t):
        return self.q0, self._zero, self._zero


class SinusoidReference:
    """``q0 + A sin(2 pi t / T + phi) - A sin(phi)`` per joint: starts at ``q0`` at t = 0.

    Parameters
    ----------
    q0 : (n,) ndarray
        Initial posture of the joints.
    amplitude, period, phase : (n,) ndarray
        Per joint [rad], [s], [rad]; amplitude 0 holds the joint.
    """

    def __init__(self, q0, amplitude, period, phase):
        self.q0 = np.array(q0, dtype=float)
        self.A = np.asarray(amplitude, dtype=float)
        self.w = 2.0 * np.pi / np.asarray(period, dtype=float)
        self.phi = np.asarray(phase, dtype=float)

    def __call__(self, t):
        arg = self.w * t + self.phi
        q = self.q0 + self.A * (np.sin(arg) - np.sin(self.phi))
        v = self.A * self.w * np.cos(arg)
        a = -self.A * self.w**2 * np.sin(arg)
        return q, v, a


class SampledReference:
    """Piecewise-linear positions through samples; clamps outside the time range.

    Parameters
    ----------
    times : (m,) ndarray
        Strictly increasing sample times [s].
    positions : (m, n) ndarray
    velocities : (m, n) ndarray, optional
        When given, cubic Hermite interpolation uses them.
    """

    def __init__(self, times, positions, velocities=None):
        self.t = np.asarray(times, dtype=float)
        self.p = np.atleast_2d(np.asarray(positions, dtype=float))
        self.v = None if velocities is None else np.atleast_2d(np.asarray(velocities, dtype=float))

    def __call__(self, t):
        ts, p = self.t, self.p
        n = p.shape[1]
        if t <= ts[0] or ts.size == 1:
            return p[0].copy(), np.zeros(n), np.zeros(n)
        if t >= ts[-1]:
            return p[-1].copy(), np.zeros(n), np.zeros(n)
        i = int(np.searchsorted(ts, t, side="right")) - 1
        dt = ts[i + 1] - ts[i]
        s = (t - ts[i]) / dt
        if self.v is None:
            slope = (p[i + 1] - p[i]) / dt
            return p[i] + s * (p[i + 1] - p[i]), slope, np.zeros(n)
        p0, p1, m0, m1 = p[i], p[i + 1], self.v[i] * dt, self.v[i + 1] * dt
        h00, h10, h01, h11 = 2*s**3 - 3*s**2 + 1, s**3 - 2*s**2 + s, -2*s**3 + 3*s**2, s**3 - s**2
        d00, d10, d01, d11 = 6*s**2 - 6*s, 3*s**2 - 4*s + 1, -6*s**2 + 6*s, 3*s**2 - 2*s
        e00, e10, e01, e11 = 12*s - 6, 6*s - 4, -12*s + 6, 6*s - 2
        q = h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1
        v = (d00 * p0 + d10 * m0 + d01 * p1 + d11 * m1) / dt
        a = (e00 * p0 + e10 * m0 + e01 * p1 + e11 * m1) / dt**2
        return q, v, a


def read_csv_trajectory(path, joint_names):
    """Read a CSV trajectory: a header row (``time`` then joint names), then samples.

    Returns
    -------
    columns : list of str
        The joint names of the file, in file order (each must be in ``joint_names``).
    reference : SampledReference
    """
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and not r[0].lstrip().startswith("#")]
    except OSError as e:
        raise SceneError(f"trajectory CSV {path!r} cannot be read: {e}") from e
    if len(rows) < 2:
        raise SceneError(f"trajectory CSV {path!r}: expected a header and at least one sample row")
    header = [h.strip() for h in rows[0]]
    unknown = [h for h in header[1:] if h not in joint_names]
    if unknown:
        raise SceneError(f"trajectory CSV {path!r}: unknown joint {unknown[0]!r}; joints: {joint_names}")
    try:
        data = np.array([[float(x) for x in r] for r in rows[1:]])
    except ValueError as e:
        raise SceneError(f"trajectory CSV {path!r}: expected numbers, {e}") from e
    if data.shape[1] != len(header) or not np.all(np.isfinite(data)):
        raise SceneError(f"trajectory CSV {path!r}: every row needs {len(header)} finite numbers")
    if np.any(np.diff(data[:, 0]) <= 0):
        raise SceneError(f"trajectory CSV {path!r}: the time column must be strictly increasing")
    return header[1:], SampledReference(data[:, 0], data[:, 1:])
