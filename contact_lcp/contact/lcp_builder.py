"""Frictional and frictionless contact LCPs from a Delassus matrix.

The frictional LCP is the Stewart-Trinkle / Anitescu-Potra form with a ``d``-sided
friction pyramid inscribed in the Coulomb cone (Yamane & Nakamura 2008, eq. 25).

Coordinates of the Delassus matrix ``G`` (shape ``(3k + l, 3k + l)``): for each of the
``k`` contacts the three rows (n, t1, t2) of its contact frame, then ``l`` frictionless
unilateral rows (joint limits). ``u`` in the same coordinates is the relative velocity
before the contact impulse [m/s or rad/s]; after an impulse ``f`` it is ``u + G f``.

Unknowns of the frictional LCP, ``z = [a; b; lam]``:

* ``a`` (k + l,) normal impulses of the contacts, then of the unilateral rows [N.s];
* ``b`` (k d,) impulses along the pyramid edges ``cos(2 pi j / d) t1 + sin(2 pi j / d) t2``,
  contact by contact [N.s];
* ``lam`` (k,) the sliding speed of each contact (Lagrange multiplier) [m/s].

With ``N`` the normal selector, ``C`` the edge directions and ``E`` the per-contact
block of ones::

    M = [[N'GN, N'GC, 0 ],      q = [N'u + bias,
         [C'GN, C'GC, E ],           C'u,
         [mu  , -E' , 0 ]]           0 ]

so that ``w = [normal velocity; edge velocity + lam; mu a - sum(b)]``. The relaxed LCP
(:func:`build_relaxed_lcp`) adds ``-mu`` at the (normal, lam) entries.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from contact_lcp.exceptions import InvalidProblem


@dataclass(frozen=True)
class ContactLCP:
    """A contact LCP and the map from its unknowns back to contact impulses.

    Attributes
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    num_contacts : int
        ``k``, contacts with friction.
    num_unilateral : int
        ``l``, frictionless unilateral rows after the contacts.
    num_directions : int
        ``d``, pyramid edges per contact; 0 for the frictionless LCP.
    edge_angle : (k,) ndarray or None
        Angle of each contact's first edge from its t1 axis [rad] (None: 0).
    """

    M: np.ndarray
    q: np.ndarray
    num_contacts: int
    num_unilateral: int
    num_directions: int
    edge_angle: np.ndarray = None
    _edges: tuple = None  # (cos, sin) (k, d) of the edges, as assembled

    @property
    def edges(self):
        """Cosines and sines (k, d) of every contact's edges, as assembled."""
        return self._edges or edge_directions(self.num_directions, self.num_contacts,
                                              self.edge_angle)

    @property
    def num_normals(self):
        """``k + l``: the leading unknowns, which are normal impulses."""
        return self.num_contacts + self.num_unilateral

    def impulses(self, z):
        """Impulse in Delassus coordinates.

        Parameters
        ----------
        z : (n,) ndarray
            A solution of this LCP.

        Returns
        -------
        f : (3k + l,) ndarray
            Per contact (f_n, f_t1, f_t2) [N.s], then the unilateral impulses.
        """
        k, l, d = self.num_contacts, self.num_unilateral, self.num_directions
        f = np.zeros(3 * k + l)
        a = z[: k + l]
        f[0 : 3 * k : 3] = a[:k]
        f[3 * k :] = a[k:]
        if d:
            b = z[k + l : k + l + k * d].reshape(k, d)
            cos, sin = self.edges
            f[1 : 3 * k : 3] = np.sum(b * cos, axis=1)
            f[2 : 3 * k : 3] = np.sum(b * sin, axis=1)
        return f


def pyramid_directions(d):
    """Cosines and sines of the ``d`` pyramid edges, ``(d,)`` each (edge 0 along t1)."""
    angles = 2.0 * np.pi * np.arange(d) / d
    return np.cos(angles), np.sin(angles)


def edge_directions(d, k, edge_angle=None):
    """Cosines and sines ``(k, d)`` of every contact's edges; contact i's edge 0 is at
    ``edge_angle[i]`` [rad] from its t1 axis (0 when None)."""
    offset = np.zeros(k) if edge_angle is None else np.asarray(edge_angle, dtype=float)
    angles = offset[:, None] + 2.0 * np.pi * np.arange(d)[None, :] / d
    return np.cos(angles), np.sin(angles)


@njit(cache=True)
def _assemble(G, u, mu, bias, k, l, d, cos, sin):
    """Fill M and q of the frictional LCP (see the module docstring) in one pass.

    Row/column groups: a (k + l normals: contact i's is row 3i of G, unilateral j's is row
    3k + j), b (k d edges: edge e of contact i is cos_e t1_i + sin_e t2_i), lam (k).
    """
    nn, nb = k + l, k * d
    n = nn + nb + k
    M = np.zeros((n, n))
    q = np.zeros(n)
    nr = np.empty(nn, dtype=np.int64)
    for i in range(k):
        nr[i] = 3 * i
    for j in range(l):
        nr[k + j] = 3 * k + j
    # N'GN and the normal part of q
    for r in range(nn):
        for c in range(nn):
            M[r, c] = G[nr[r], nr[c]]
        q[r] = u[nr[r]] + bias[r]
    # C'GN (and its transpose), C'u: an edge row is cos * (t1 row) + sin * (t2 row)
    for i in range(k):
        t1, t2 = 3 * i + 1, 3 * i + 2
        for e in range(d):
            row = nn + i * d + e
            for c in range(nn):
                v = cos[i, e] * G[t1, nr[c]] + sin[i, e] * G[t2, nr[c]]
                M[row, c] = v
                M[c, row] = v
            q[row] = cos[i, e] * u[t1] + sin[i, e] * u[t2]
            M[row, nn + nb + i] = 1.0  # E
            M[nn + nb + i, row] = -1.0  # -E'
        M[nn + nb + i, i] = mu[i]
    # C'GC
    for i in range(k):
        for j in range(k):
            a11 = G[3 * i + 1, 3 * j + 1]
            a12 = G[3 * i + 1, 3 * j + 2]
            a21 = G[3 * i + 2, 3 * j + 1]
            a22 = G[3 * i + 2, 3 * j + 2]
            if a11 == 0.0 and a12 == 0.0 and a21 == 0.0 and a22 == 0.0:
                continue  # (contacts that share no moving body: the block stays 0)
            for e in range(d):
                x1 = cos[i, e] * a11 + sin[i, e] * a21
                x2 = cos[i, e] * a12 + sin[i, e] * a22
                for f in range(d):
                    M[nn + i * d + e, nn + j * d + f] = x1 * cos[j, f] + x2 * sin[j, f]
    return M, q


def _check(G, u, k, l, normal_bias):
    from scipy import sparse  # (a sparse problem's G stays sparse: _relaxed_sparse)

    G = G if sparse.issparse(G) else np.asarray(G, dtype=float)
    u = np.asarray(u, dtype=float)
    m = 3 * k + l
    if G.shape != (m, m):
        raise InvalidProblem(
            f"G must have shape ({m}, {m}) for {k} contacts and {l} unilateral rows; "
            f"received {G.shape}"
        )
    if u.shape != (m,):
        raise InvalidProblem(f"u must have shape ({m},); received {u.shape}")
    bias = np.zeros(k + l) if normal_bias is None else np.asarray(normal_bias, dtype=float)
    if bias.shape != (k + l,):
        raise InvalidProblem(f"normal_bias must have shape ({k + l},); received {bias.shape}")
    # one sum is finite iff every entry is (or it overflowed): only then look entry-wise
    if not np.isfinite(G.sum() + u.sum() + bias.sum()):
        for name, x in (("G", G), ("u", u), ("normal_bias", bias)):
            if not np.all(np.isfinite(x.data if sparse.issparse(x) else x)):
                raise InvalidProblem(f"{name} must be finite; it contains NaN or inf")
    normal_rows = np.concatenate([np.arange(0, 3 * k, 3), np.arange(3 * k, m)]).astype(int)
    return G, u, bias, normal_rows


def build_frictionless_lcp(G, u, *, num_contacts, num_unilateral=0, normal_bias=None):
    """The normal-only LCP: ``w = N'G N a + N'u + bias``.

    Parameters
    ----------
    G : (3k + l, 3k + l) ndarray
        Delassus matrix ``J M^-1 J'`` in contact coordinates [1/kg].
    u : (3k + l,) ndarray
        Pre-impulse relative velocity in contact coordinates [m/s].
    num_contacts, num_unilateral : int
        ``k`` and ``l``.
    normal_bias : (k + l,) ndarray, optional
        Added to the normal rows, e.g. the stabilization ``phi / h`` [m/s].

    Returns
    -------
    ContactLCP
        With ``num_directions = 0``; ``n = k + l``.
    """
    k, l = int(num_contacts), int(num_unilateral)
    G, u, bias, nr = _check(G, u, k, l, normal_bias)
    M = G[np.ix_(nr, nr)].copy()
    q = u[nr] + bias
    return ContactLCP(M, q, k, l, 0)


def build_contact_lcp(G, u, mu, *, num_directions=8, num_unilateral=0, normal_bias=None,
                      edge_angle=None):
    """The frictional contact LCP with a ``num_directions``-sided friction pyramid.

    Parameters
    ----------
    G : (3k + l, 3k + l) ndarray
        Delassus matrix ``J M^-1 J'`` in contact coordinates (symmetric PSD, possibly
        singular) [1/kg].
    u : (3k + l,) ndarray
        Pre-impulse relative velocity in contact coordinates [m/s].
    mu : (k,) array_like or float
        Friction coefficient of each contact (>= 0).
    num_directions : int
        ``d >= 3``, edges of the pyramid inscribed in the Coulomb cone (8 by default).
    num_unilateral : int
        ``l``, frictionless unilateral rows at the end of ``G`` (joint limits).
    normal_bias : (k + l,) ndarray, optional
        Added to the normal rows, e.g. the stabilization ``phi / h`` [m/s].
    edge_angle : (k,) ndarray, optional
        Rotation of each contact's pyramid about its normal: edge 0 at this angle from t1
        [rad] (None: along t1). Rotating the pyramid keeps its stick thresholds relative
        to the edges.

    Returns
    -------
    ContactLCP
        ``n = k + l + k d + k``; for 32 contacts with ``d = 8``, n = 320.
    """
    d = int(num_directions)
    if d < 3:
        raise InvalidProblem(f"num_directions must be >= 3; received {num_directions}")
    l = int(num_unilateral)
    m = np.asarray(G).shape[0] if np.ndim(G) == 2 else -1
    if m < l or (m - l) % 3:
        raise InvalidProblem(
            f"G must have 3k + {l} rows for k contacts and {l} unilateral rows; "
            f"received shape {np.shape(G)}"
        )
    k = (m - l) // 3
    mu = np.asarray(mu, dtype=float)
    if mu.ndim == 0:
        mu = np.full(k, float(mu))
    if mu.shape != (k,) or not np.all(np.isfinite(mu)) or np.any(mu < 0):
        raise InvalidProblem(f"mu must be {k} finite values >= 0; received {mu!r}")
    G, u, bias, nr = _check(G, u, k, l, normal_bias)
    if edge_angle is not None:
        edge_angle = np.asarray(edge_angle, dtype=float)
        if edge_angle.shape != (k,) or not np.all(np.isfinite(edge_angle)):
            raise InvalidProblem(f"edge_angle must be {k} finite angles; received {edge_angle!r}")
    cos, sin = edge_directions(d, k, edge_angle)
    M, q = _assemble(np.ascontiguousarray(G), u, mu, bias, k, l, d, cos, sin)
    return ContactLCP(M, q, k, l, d, edge_angle, (cos, sin))


def build_relaxed_lcp(problem, *, num_directions=8, edge_angle=None, sparse_M=False):
    """Anitescu & Hart's convex relaxation of the frictional LCP of a
    :class:`~contact_lcp.contact.problem.ContactProblem` (the ``relaxed`` model's LCP and
    the pyramid model's fallback; see :mod:`contact_lcp.contact.relaxed`).

    Parameters
    ----------
    problem : ContactProblem
    num_directions : int
        ``d``, pyramid edges per contact.
    edge_angle : (k,) ndarray, optional
        Angle of each contact's first edge from its t1 axis [rad].
    sparse_M : bool
        Store ``M`` as a ``scipy.sparse.csr_matrix`` (the same entries): a pile's
        Delassus matrix couples each contact with those of its two bodies only, so its
        LCP (n ~ 4500 on the settled 200-sphere pour) holds a few per cent of nonzeros,
        and the dense assembly cost more than the QP that solves it. For the QP path and
        :func:`contact_lcp.lcp.sparse_residual.certify_sparse`; pivoting needs
        ``M.toarray()``.

    Returns
    -------
    ContactLCP
        Unknowns ``[a (k + l); b (k d); lam (k)]`` as :func:`build_contact_lcp`'s; ``M``
        has ``-mu_i`` at (normal row i, lam column i).
    """
    if sparse_M:
        return _relaxed_sparse(problem, int(num_directions), edge_angle)
    lcp = build_contact_lcp(problem.G, problem.u, problem.mu, num_directions=num_directions,
                            num_unilateral=problem.num_limits, normal_bias=problem.bias,
                            edge_angle=edge_angle)
    k, nn = lcp.num_contacts, lcp.num_normals
    lam0 = nn + k * lcp.num_directions
    lcp.M[np.arange(k), lam0 + np.arange(k)] = -problem.mu  # (M is this call's own array)
    return lcp


def _relaxed_sparse(problem, d, edge_angle):
    """:func:`build_relaxed_lcp` with a CSR ``M``: ``T G T'`` for the normal and edge
    rows (``T`` picks the normal rows and combines the tangent rows into edges), then the
    ``E``, ``-E'``, ``mu`` and ``-mu`` entries of the lam rows and column."""
    from scipy import sparse

    k, l = problem.num_contacts, problem.num_limits
    if d < 3:
        raise InvalidProblem(f"num_directions must be >= 3; received {d}")
    G, u, bias, nr = _check(problem.G, problem.u, k, l, problem.bias)
    mu = np.asarray(problem.mu, dtype=float)
    if edge_angle is not None:
        edge_angle = np.asarray(edge_angle, dtype=float)
        if edge_angle.shape != (k,) or not np.all(np.isfinite(edge_angle)):
            raise InvalidProblem(f"edge_angle must be {k} finite angles; received {edge_angle!r}")
    cos, sin = edge_directions(d, k, edge_angle)
    nn, nb = k + l, k * d
    edge = nn + np.arange(nb)
    t1 = 3 * np.repeat(np.arange(k), d) + 1
    T = sparse.csr_matrix((np.concatenate([np.ones(nn), cos.ravel(), sin.ravel()]),
                           (np.concatenate([np.arange(nn), edge, edge]),
                            np.concatenate([nr, t1, t1 + 1]))), shape=(nn + nb, 3 * k + l))
    core = (T @ sparse.csr_matrix(G) @ T.T).tocoo()
    lam = nn + nb + np.arange(k)
    who = np.repeat(np.arange(k), d)  # the contact of each edge
    rows = np.concatenate([core.row, np.arange(k), edge, lam, nn + nb + who])
    cols = np.concatenate([core.col, lam, nn + nb + who, np.arange(k), edge])
    vals = np.concatenate([core.data, -mu, np.ones(nb), mu, -np.ones(nb)])
    n = nn + nb + k
    M = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    q = np.concatenate([u[nr] + bias, cos.ravel() * u[t1] + sin.ravel() * u[t1 + 1],
                        np.zeros(k)])
    return ContactLCP(M, q, k, l, d, edge_angle, (cos, sin))
