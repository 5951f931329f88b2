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

so that ``w = [normal velocity; edge velocity + lam; mu a - sum(b)]``.
"""

from dataclasses import dataclass

import numpy as np

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
    """

    M: np.ndarray
    q: np.ndarray
    num_contacts: int
    num_unilateral: int
    num_directions: int

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
            cos, sin = pyramid_directions(d)
            f[1 : 3 * k : 3] = b @ cos
            f[2 : 3 * k : 3] = b @ sin
        return f


def pyramid_directions(d):
    """Cosines and sines of the ``d`` pyramid edges, ``(d,)`` each (edge 0 along t1)."""
    angles = 2.0 * np.pi * np.arange(d) / d
    return np.cos(angles), np.sin(angles)


def _check(G, u, k, l, normal_bias):
    G = np.asarray(G, dtype=float)
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
    for name, x in (("G", G), ("u", u), ("normal_bias", bias)):
        if not np.all(np.isfinite(x)):
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


def build_contact_lcp(G, u, mu, *, num_directions=8, num_unilateral=0, normal_bias=None):
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
    D = np.stack(pyramid_directions(d))  # (2, d): edge j = D[0, j] t1 + D[1, j] t2
    tr = np.stack([np.arange(1, 3 * k, 3), np.arange(2, 3 * k, 3)], axis=1).ravel()
    nn, nb = k + l, k * d
    # C is zero outside the tangent rows tr, where it is T = I_k (x) D: contact i's d edge
    # impulses map to its (t1, t2). So C'GC = T' G_tt T, C'GN = T' G_tn, C'u = T' u_t.
    T = np.kron(np.eye(k), D)
    Gt = G[tr]
    CGC = T.T @ Gt[:, tr] @ T
    CGN = T.T @ Gt[:, nr]
    n = nn + nb + k
    M = np.zeros((n, n))
    M[:nn, :nn] = G[np.ix_(nr, nr)]
    M[:nn, nn : nn + nb] = CGN.T
    M[nn : nn + nb, :nn] = CGN
    M[nn : nn + nb, nn : nn + nb] = CGC
    E = np.repeat(np.eye(k), d, axis=0)  # (k d, k): edge rows of each contact
    M[nn : nn + nb, nn + nb :] = E
    M[nn + nb :, :k] = np.diag(mu)
    M[nn + nb :, nn : nn + nb] = -E.T
    q = np.zeros(n)
    q[:nn] = u[nr] + bias
    q[nn : nn + nb] = T.T @ u[tr]
    return ContactLCP(M, q, k, l, d)
