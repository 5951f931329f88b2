"""A Cholesky factor that grows and shrinks by one row and column at a time.

``IncrementalCholesky`` keeps ``L`` with ``L L' = A[S, S]`` for an ordered index set ``S``
of a symmetric positive semi-definite matrix ``A``. Appending an index costs one
triangular solve (O(k^2) for ``k = |S|``); removing one is a deletion followed by a rank-1
update of the trailing block (O(k^2)). An append whose new pivot would not be positive
(relative to the diagonal entry) is refused: the index is linearly dependent on ``S`` in
the metric ``A``. This is the singularity test of Drumwright's FIND-INDICES (S4, Alg. 2)
and the factor update of the modified principal pivoting method (S4, Alg. 1).
"""

import numpy as np
from numba import njit


@njit(cache=True)
def forward_substitute(L, b, k):
    """``L[:k, :k]^-1 b`` for ``b`` (k, p): forward substitution."""
    x = b.copy()
    for i in range(k):
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] /= L[i, i]
    return x


@njit(cache=True)
def back_substitute(L, b, k):
    """``L[:k, :k]'^-1 b`` for ``b`` (k, p): back substitution."""
    x = b.copy()
    for i in range(k - 1, -1, -1):
        for j in range(i + 1, k):
            x[i] -= L[j, i] * x[j]
        x[i] /= L[i, i]
    return x


def _as_columns(b):
    b = np.asarray(b, dtype=float)
    return np.ascontiguousarray(b.reshape(b.shape[0], -1)), b.ndim == 1


class IncrementalCholesky:
    """Cholesky factor of ``A[S, S]`` for a growing and shrinking ordered set ``S``.

    Parameters
    ----------
    capacity : int
        Largest ``|S|`` (storage is allocated once).
    singular_tol : float
        An append is refused when the new squared pivot ``d2 = a_ii - l.l`` is at most
        ``singular_tol * a_ii`` (dimensionless: the squared sine of the angle between the
        new direction and the span of the current ones, in the metric ``A``).
    """

    def __init__(self, capacity, singular_tol=1e-10):
        self.L = np.zeros((max(int(capacity), 1), max(int(capacity), 1)))
        self.size = 0
        self.singular_tol = float(singular_tol)

    def try_append(self, a, c):
        """Add one index: ``a`` (k,) its column ``A[S, i]``, ``c`` its diagonal ``A[i, i]``.

        Returns
        -------
        bool
            False (and nothing changes) when ``A[S + i, S + i]`` would be numerically
            singular or ``c <= 0``.
        """
        k = self.size
        if not c > 0.0:
            return False
        if k:
            col, _ = _as_columns(a)
            lrow = forward_substitute(self.L, col, k)[:, 0]
            d2 = c - float(lrow @ lrow)
        else:
            lrow, d2 = np.zeros(0), c
        if not d2 > self.singular_tol * c:
            return False
        if k == self.L.shape[0]:
            grown = np.zeros((2 * k, 2 * k))
            grown[:k, :k] = self.L
            self.L = grown
        self.L[k, :k] = lrow
        self.L[k, k] = np.sqrt(d2)
        self.L[:k, k] = 0.0
        self.size = k + 1
        return True

    def remove(self, p):
        """Remove the ``p``-th index of ``S`` (0-based position, not the index itself)."""
        k = self.size
        if not 0 <= p < k:
            raise IndexError(f"position {p} out of range for a factor of size {k}")
        L = self.L
        x = L[p + 1:k, p].copy()
        # Delete row and column p, then restore L33 L33' + x x' on the trailing block.
        L[p:k - 1, :p] = L[p + 1:k, :p]
        L[p:k - 1, p:k - 1] = L[p + 1:k, p + 1:k]
        L[k - 1, :k] = 0.0
        L[:k, k - 1] = 0.0
        for j in range(p, k - 1):
            t = x[j - p]
            if t == 0.0:
                continue
            r = np.hypot(L[j, j], t)
            cth, sth = r / L[j, j], t / L[j, j]
            L[j, j] = r
            col = L[j + 1:k - 1, j]
            rest = x[j - p + 1:]
            col += sth * rest
            col /= cth
            rest *= cth
            rest -= sth * col
        self.size = k - 1

    def solve(self, b):
        """``A[S, S]^-1 b`` for ``b`` (k,) or (k, p)."""
        k = self.size
        cols, vector = _as_columns(b)
        if k == 0:
            return np.zeros(cols.shape if not vector else 0)
        x = back_substitute(self.L, forward_substitute(self.L, cols, k), k)
        return x[:, 0] if vector else x

    def factor(self):
        """A copy of the current ``L`` (k, k)."""
        return self.L[:self.size, :self.size].copy()
