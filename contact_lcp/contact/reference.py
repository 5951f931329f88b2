"""Reference LCPs: small named problems with a known answer or a known failure.

Each function builds one problem and says where it comes from;
:func:`reference_problems` lists them all (the tests run every method on each, and the
benchmark uses them as its set (a)). Contact problems are built with
:mod:`contact_lcp.contact.lcp_builder` from a Delassus matrix ``G = J M^-1 J'`` [1/kg]
and a pre-impulse velocity ``u = J v`` [m/s]; their unknowns are impulses [N.s].
"""

from dataclasses import dataclass, field

import numpy as np

from contact_lcp.contact.lcp_builder import build_contact_lcp, build_frictionless_lcp

GRAVITY = 9.81  # [m/s^2]


@dataclass(frozen=True)
class ReferenceProblem:
    """A named LCP ``w = M z + q``.

    Attributes
    ----------
    name : str
    M : (n, n) ndarray
    q : (n,) ndarray
    source : str
        Where the problem comes from.
    z_expected : (n,) ndarray or None
        The solution when it is unique.
    solvable : bool
        False for a problem known to have no solution.
    """

    name: str
    M: np.ndarray = field(repr=False)
    q: np.ndarray = field(repr=False)
    source: str
    z_expected: np.ndarray = field(default=None, repr=False)
    solvable: bool = True


def planted_p_matrix(n, seed):
    """SPD ``M = A A' + I`` (a P-matrix: unique solution) with a planted ``z*``.

    ``z*`` and ``w*`` are complementary, each nonzero on about half the indices;
    ``q = w* - M z*``. Planted-solution construction as scipy's ``test_nnls.py``.
    """
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T + np.eye(n)
    active = rng.random(n) < 0.5
    z = np.where(active, rng.uniform(0.1, 2.0, n), 0.0)
    w = np.where(active, 0.0, rng.uniform(0.1, 2.0, n))
    return ReferenceProblem(f"planted_p_{n}_s{seed}", M, w - M @ z,
                            f"planted solution, seeded rng {seed}", z_expected=z)


def murty_exponential(n):
    """Murty's example on which Lemke's method (covering vector 1) needs ``2^n`` pivots.

    Murty (1988), ch. 6: ``M`` upper triangular with 1 on the diagonal and 2 above it.
    With ``q = -1`` our min-index Lemke needs only ``2 n`` pivots; the exponential
    instance has ``q_i = -(2^i + 2^(i+1) + ... + 2^n)`` (1-based ``i``), checked to take
    exactly ``2^n`` pivots for n = 1..10. Unique solution ``z = 2^n e_n`` (P-matrix).
    """
    M = np.triu(2.0 * np.ones((n, n)), 1) + np.eye(n)
    powers = 2.0 ** np.arange(1, n + 1)
    q = -np.cumsum(powers[::-1])[::-1]
    z = np.zeros(n)
    z[-1] = 2.0 ** n
    return ReferenceProblem(f"murty_exponential_{n}", M, q, "Murty (1988), ch. 6",
                            z_expected=z)


def cycling_example():
    """A degenerate LCP on which min-index Lemke cycles; it has the solution (0, 0, 1).

    Not taken from the literature: we could not recover a published cycling instance
    reliably, so this one was found by a search over 3x3 integer LCPs with ``q = -1``
    (every row ties in Step 0) and is verified to cycle after 6 pivots in exact rational
    arithmetic (``test_lcp_reference.py``). Cycling of Lemke's method on degenerate
    problems is discussed in Cottle, Pang & Stone (1992), sec. 4.9; the lexicographic
    rule solves it.
    """
    M = np.array([[1.0, 0.0, 2.0], [2.0, 0.0, 1.0], [0.0, -2.0, 1.0]])
    return ReferenceProblem("cycling_example", M, -np.ones(3),
                            "found by search; verified in exact arithmetic",
                            z_expected=np.array([0.0, 0.0, 1.0]))


def lexicographic_ray_example():
    """A 3x3 LCP with the solution (0, 1, 0) on which single-path Lemke variants fail.

    Found by the same search as :func:`cycling_example`: min-index Lemke cycles and
    lexicographic Lemke ends on a secondary ray. ``M`` is not copositive-plus, so Lemke's
    method has no guarantee here (Cottle, Pang & Stone 1992, sec. 4.4); a search over
    pivot sequences (robust) reaches the solution after backtracking from the ray.
    """
    M = np.array([[1.0, 2.0, 2.0], [2.0, 1.0, -1.0], [-2.0, 1.0, -2.0]])
    return ReferenceProblem("lexicographic_ray_example", M, -np.ones(3),
                            "found by search; a ray for lexicographic Lemke",
                            z_expected=np.array([0.0, 1.0, 0.0]))


def infeasible():
    """``M = -I``, ``q = -1``: ``w = -z - 1 < 0`` for every ``z >= 0``; no solution."""
    n = 3
    return ReferenceProblem("infeasible", -np.eye(n), -np.ones(n),
                            "w = -z - 1 is never nonnegative", solvable=False)


def copositive_plus():
    """A copositive-plus matrix that is not positive semi-definite, planted solution.

    ``M`` is nonnegative with a positive diagonal, hence strictly copositive and so
    copositive-plus (Cottle, Pang & Stone 1992, sec. 3.8), which Lemke's method processes
    (ibid., sec. 4.4); its symmetric part has the eigenvalue -1/2. All its principal
    minors are positive (a P-matrix), so the solution is unique.
    """
    M = np.array([[1.0, 3.0, 0.0], [0.0, 1.0, 3.0], [3.0, 0.0, 1.0]])
    z = np.array([1.0, 0.0, 0.5])
    w = np.array([0.0, 1.0, 0.0])
    return ReferenceProblem("copositive_plus", M, w - M @ z,
                            "Cottle, Pang & Stone (1992), sec. 3.8", z_expected=z)


def trivial():
    """``q >= 0``: ``z = 0`` with 0 pivots."""
    M = np.array([[2.0, -1.0], [-1.0, 2.0]])
    return ReferenceProblem("trivial_q_nonnegative", M, np.array([0.5, 0.0]), "q >= 0",
                            z_expected=np.zeros(2))


def empty():
    """The LCP of size 0."""
    return ReferenceProblem("empty", np.zeros((0, 0)), np.zeros(0), "n = 0",
                            z_expected=np.zeros(0))


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _rigid_body_contacts(points_B, mass, inertia, v_W, omega_W):
    """``(G, u)`` of a rigid body touching the plane z = 0 at ``points_B`` (k, 3) [m].

    Body frame = world orientation at its COM; contact frames (n, t1, t2) = (z, x, y).
    Velocity of point ``p``: ``v + omega x p``. Mass [kg], principal inertia (3,)
    [kg m^2], COM velocity ``v_W`` [m/s] and angular velocity ``omega_W`` [rad/s].
    """
    rows = []
    for p in points_B:
        block = np.hstack([np.eye(3), -_skew(p)])  # v_p = v - [p]x omega
        rows.append(block[[2, 0, 1]])
    J = np.vstack(rows)
    M_inv = np.diag(np.concatenate([np.full(3, 1.0 / mass), 1.0 / np.asarray(inertia)]))
    G = J @ M_inv @ J.T
    u = J @ np.concatenate([v_W, omega_W])
    return G, u


def legged_frame(legs):
    """Frictionless LCP of a rigid flat frame standing on ``legs`` legs (redundant contact).

    Enzenhoefer, Teichmann & Kovecses's example of redundant contact: a rigid frame on
    ``n`` legs on the ground. Only its heave and two tilts move the feet vertically, so
    ``G`` (normal rows) has rank 3: at most 3 legs need to carry load, the impulses are
    not unique, but ``w`` is (``M`` is symmetric PSD). Legs on a ring of radius 0.5 m
    (slightly uneven angles), 10 kg, falling at 0.1 m/s with a small tilt rate.
    """
    angles = 2 * np.pi * np.arange(legs) / legs + 0.05 * np.sin(np.arange(legs))
    points = np.column_stack([0.5 * np.cos(angles), 0.5 * np.sin(angles),
                              np.full(legs, -0.3)])
    G, u = _rigid_body_contacts(points, 10.0, [0.9, 1.0, 1.7], np.array([0.0, 0.0, -0.1]),
                                np.array([0.05, -0.02, 0.0]))
    lcp = build_frictionless_lcp(G, u, num_contacts=legs)
    return ReferenceProblem(f"legged_frame_{legs}", lcp.M, lcp.q,
                            "Enzenhoefer, Teichmann & Kovecses: frame on n legs")


def box_on_plane(motion, friction=True):
    """A 2 kg box (0.4 x 0.2 x 0.1 m) touching the plane at its 4 bottom corners.

    ``motion``: 'landing' (falling at 0.5 m/s, slightly tilting), 'sliding' (0.3 m/s
    along x while pressed down by gravity over h = 10 ms), 'spinning' (1 rad/s about z).
    With ``friction`` the LCP has a d = 8 pyramid and mu = 0.5 (n = 40); without, n = 4.
    ``G`` (12 x 12) has rank 6 < 12: the problem is degenerate by construction.
    """
    half = np.array([0.2, 0.1, 0.05])
    corners = np.array([[sx * half[0], sy * half[1], -half[2]]
                        for sx in (-1, 1) for sy in (-1, 1)])
    mass = 2.0
    inertia = mass / 12 * np.array([0.2**2 + 0.1**2, 0.4**2 + 0.1**2, 0.4**2 + 0.2**2])
    v = {"landing": [0.0, 0.0, -0.5], "sliding": [0.3, 0.0, -GRAVITY * 0.01],
         "spinning": [0.0, 0.0, -GRAVITY * 0.01]}[motion]
    omega = {"landing": [0.2, -0.1, 0.0], "sliding": [0.0, 0.0, 0.0],
             "spinning": [0.0, 0.0, 1.0]}[motion]
    G, u = _rigid_body_contacts(corners, mass, inertia, np.array(v), np.array(omega))
    if friction:
        lcp = build_contact_lcp(G, u, 0.5, num_directions=8)
        name = f"box_{motion}_friction"
    else:
        lcp = build_frictionless_lcp(G, u, num_contacts=4)
        name = f"box_{motion}_frictionless"
    return ReferenceProblem(name, lcp.M, lcp.q,
                            "rigid box on a plane, build_contact_lcp (Stewart-Trinkle)")


def rigid_box_contact(points, seed, friction=True):
    """A random rigid box resting on the plane at ``points`` points of its bottom face.

    For timing and property tests of the rank-deficient contact LCPs robust is made for:
    ``G`` (3k x 3k) has rank <= 6 for any ``k``. Seeded: box of 0.5 to 20 kg and 0.1 to
    0.6 m, points uniform on the bottom face (the first four at its corners), pressed
    down by gravity over h = 5 ms plus a random velocity (up to 0.5 m/s, 1 rad/s) and a
    random ``mu`` in [0.2, 1] per contact. With ``friction`` (d = 8) ``n = 10 k``, else
    ``n = k``.
    """
    rng = np.random.default_rng(seed)
    mass = rng.uniform(0.5, 20.0)
    size = rng.uniform(0.1, 0.6, 3)
    half = size / 2
    xy = rng.uniform(-1.0, 1.0, (points, 2)) * half[:2]
    xy[:4] = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]])[: min(points, 4)] * half[:2]
    pts = np.column_stack([xy, np.full(points, -half[2])])
    inertia = mass / 12 * np.array([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2,
                                    size[0] ** 2 + size[1] ** 2])
    v = rng.uniform(-0.5, 0.5, 3) + np.array([0.0, 0.0, -GRAVITY * 0.005])
    omega = rng.uniform(-1.0, 1.0, 3)
    G, u = _rigid_body_contacts(pts, mass, inertia, v, omega)
    if friction:
        lcp = build_contact_lcp(G, u, rng.uniform(0.2, 1.0, points), num_directions=8)
    else:
        lcp = build_frictionless_lcp(G, u, num_contacts=points)
    kind = "friction" if friction else "frictionless"
    return ReferenceProblem(f"rigid_box_{points}pt_s{seed}_{kind}", lcp.M, lcp.q,
                            "random rigid box on a plane, build_contact_lcp")


def reference_problems():
    """Every reference problem, in a fixed order.

    Returns
    -------
    list of ReferenceProblem
    """
    problems = [planted_p_matrix(n, seed) for n, seed in ((5, 0), (10, 1), (30, 2))]
    problems += [murty_exponential(8), murty_exponential(16), cycling_example(),
                 lexicographic_ray_example(), infeasible(), copositive_plus(), trivial(), empty()]
    problems += [legged_frame(legs) for legs in range(4, 9)]
    problems += [box_on_plane(m) for m in ("landing", "sliding", "spinning")]
    problems += [box_on_plane("landing", friction=False)]
    return problems
