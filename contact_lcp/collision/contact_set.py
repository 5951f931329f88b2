"""The contacts of one step as arrays (struct of arrays), not per-contact objects."""

from dataclasses import dataclass

import numpy as np
from numba import njit

from contact_lcp.collision.contact_point import ContactPoint, tangent_basis


@dataclass(frozen=True, eq=False)
class ContactSet:
    """``k`` contacts between bodies A and B, one row per contact.

    Attributes
    ----------
    names : tuple of str
        Surface names (link, free body or ``"ground"``) that ``body_a``/``body_b`` index.
    body_a, body_b : (k,) int ndarray
        Index into ``names`` of A and B (the normal points from A to B).
    joint_a, joint_b : (k,) int ndarray
        World-model joint ids moving A and B (0: fixed to the world).
    p_W : (k, 3) ndarray
        Contact points in W [m] (midpoint of the witness points).
    R_WC : (k, 3, 3) ndarray
        Contact frames, columns (n, t1, t2); ``n`` is the unit normal from A to B.
    distance : (k,) ndarray
        Signed distances along n [m]; < 0 in penetration.
    mu : (k,) ndarray
        Friction coefficients of the pairs.
    size : int
        ``k`` (``len()``'s value, read as an attribute where a step asks it often).
    """

    names: tuple
    body_a: np.ndarray
    body_b: np.ndarray
    joint_a: np.ndarray
    joint_b: np.ndarray
    p_W: np.ndarray
    R_WC: np.ndarray
    distance: np.ndarray
    mu: np.ndarray

    def __init__(self, names, body_a, body_b, joint_a, joint_b, p_W, R_WC, distance, mu):
        # one update of the instance's dict, not one object.__setattr__ per field (the
        # __init__ dataclass generates for a frozen class): the detector makes a set a step
        self.__dict__.update(names=names, body_a=body_a, body_b=body_b, joint_a=joint_a,
                             joint_b=joint_b, p_W=p_W, R_WC=R_WC, distance=distance, mu=mu,
                             size=distance.shape[0])

    def __len__(self):
        return self.size

    @property
    def deepest(self):
        """The smallest signed distance [m] (< 0: the deepest penetration); inf when there
        is no contact. (Every step asks; one compiled call costs less than numpy's.)"""
        return _smallest(self.distance)

    @property
    def n_W(self):
        """(k, 3) unit normals from A to B."""
        return self.R_WC[:, :, 0]

    def __getitem__(self, i):
        """Contact ``i`` as a :class:`ContactPoint` (for inspection, not for hot loops)."""
        c = ContactPoint(self.names[self.body_a[i]], self.names[self.body_b[i]],
                         int(self.joint_a[i]), int(self.joint_b[i]), self.p_W[i],
                         self.n_W[i], float(self.distance[i]), float(self.mu[i]))
        object.__setattr__(c, "_R_WC", self.R_WC[i])
        return c

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def select(self, keep):
        """The contacts at the indices or mask ``keep``."""
        return ContactSet(self.names, self.body_a[keep], self.body_b[keep],
                          self.joint_a[keep], self.joint_b[keep], self.p_W[keep],
                          self.R_WC[keep], self.distance[keep], self.mu[keep])

    @staticmethod
    def empty(names=()):
        """No contact."""
        z = np.zeros(0, dtype=np.int64)
        return ContactSet(tuple(names), z, z, z, z, np.zeros((0, 3)), np.zeros((0, 3, 3)),
                          np.zeros(0), np.zeros(0))

    @staticmethod
    def concatenate(names, parts):
        """One set from per-pair blocks ``(a, b, ja, jb, P, R, d, mu)`` (P (m, 3), R (m, 3, 3),
        d (m,); the others scalars)."""
        if not parts:
            return ContactSet.empty(names)
        sizes = [p[6].shape[0] for p in parts]

        def rep(idx):
            return np.repeat(np.array([p[idx] for p in parts], dtype=np.int64), sizes)

        return ContactSet(tuple(names), rep(0), rep(1), rep(2), rep(3),
                          np.concatenate([p[4] for p in parts]),
                          np.concatenate([p[5] for p in parts]),
                          np.concatenate([p[6] for p in parts]),
                          np.repeat(np.array([p[7] for p in parts], dtype=float), sizes))

    @staticmethod
    def from_points(points, names=None):
        """A set from a list of :class:`ContactPoint` (tests, hand-made contacts)."""
        points = list(points)
        names = list(names or [])
        index = {n: i for i, n in enumerate(names)}
        for c in points:
            for n in (c.body_a, c.body_b):
                if n not in index:
                    index[n] = len(names)
                    names.append(n)
        if not points:
            return ContactSet.empty(names)
        return ContactSet(
            tuple(names), np.array([index[c.body_a] for c in points], dtype=np.int64),
            np.array([index[c.body_b] for c in points], dtype=np.int64),
            np.array([c.joint_a for c in points], dtype=np.int64),
            np.array([c.joint_b for c in points], dtype=np.int64),
            np.array([c.p_W for c in points], dtype=float),
            np.array([c.frame() for c in points], dtype=float),
            np.array([c.distance for c in points], dtype=float),
            np.array([c.mu for c in points], dtype=float))


def frames_of(N):
    """(m, 3, 3) contact frames of normals N (m, 3); rows with equal normals share one."""
    R = np.empty((N.shape[0], 3, 3))
    last = None
    for k in range(N.shape[0]):
        if last is None or not np.array_equal(N[k], N[k - 1]):
            last = tangent_basis(N[k])
        R[k] = last
    return R


@njit(cache=True)
def _smallest(x):
    """``min(x)`` of a (k,) array as numpy's (NaN when one is), inf when empty."""
    out = np.inf
    for i in range(x.shape[0]):
        if x[i] != x[i]:
            return x[i]
        out = min(out, x[i])
    return out
