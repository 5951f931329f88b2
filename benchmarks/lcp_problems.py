"""Benchmark LCPs: the reference set and seeded random frictional contact LCPs.

Set (b) is made of contact LCPs with *redundant* contacts, in pure numpy: rigid boxes and
feet resting flat on the plane z = 0 (normal +z, from the ground to the body), each touching
it at 4 to 16 points of its sole (corners, edge midpoints, interior points, points collinear
with an edge and near-duplicates of other points). A rigid sole with 4 or more points has a
Delassus block of rank <= 6 < 3 k, so every matrix here is singular; mass ratios of 0.5 to
60 kg and sole sizes of 5 cm to 40 cm make it ill-conditioned on its range too.

Scenes (``family``):

* ``boxes``  1 to 4 free boxes, block-diagonal Delassus matrix;
* ``chain``  2 to 4 boxes on the ground joined in a chain by joints of 1 to 5 DOF;
* ``biped``  two feet under a heavy pelvis (10 to 60 kg, not in contact) through thighs
  and legs of 2 to 6 DOF, so the Delassus matrix is dense across the feet;
* ``frame``  the n-legged frame of Enzenhöfer et al.: one rigid ring standing on n legs
  (n = 4 ... 32), resting, sliding, spinning or landing tilted.

Generalized velocities ``nu`` are 6 per free root (COM velocity and angular velocity in
world, [m/s], [rad/s]) plus one per joint; body twists are ``V = S nu`` with ``S`` of full
column rank, the mass matrix is ``S' blockdiag(m I, R I_B R') S`` [kg, kg m^2], the contact
Jacobian ``J`` gives, per contact, the (n, t1, t2) components of the velocity of the point
[m/s], and ``G = J M^-1 J'`` [1/kg] with a Cholesky factor of ``M``. The pre-impulse
velocity is ``u = J (nu0 + h M^-1 tau_g)`` with gravity g = 9.81 m/s^2 and h in 1 to 10 ms;
``normal_bias`` is ``-0.2 phi / h`` for a penetration ``phi`` <= 2 mm or ``+gap / h`` for a
gap <= 0.1 mm. The LCP is :func:`contact_lcp.contact.lcp_builder.build_contact_lcp` with an
8-sided pyramid, ``n = 10 k`` for k contacts. Every problem is solvable: lifting the root
separates every contact, so the normals admit a strictly separating direction (Anitescu &
Potra 1997).
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor, solve_triangular

from contact_lcp.contact.lcp_builder import build_contact_lcp

GRAVITY = 9.81  # [m/s^2]
NUM_DIRECTIONS = 8
FAMILIES = ("boxes", "chain", "biped")
FRAME_LEGS = (4, 5, 6, 8, 10, 12, 16, 20, 24, 32)
FRAME_MOTIONS = ("resting", "sliding", "spinning", "landing")


@dataclass(frozen=True)
class BenchProblem:
    """One LCP of a benchmark set.

    Attributes
    ----------
    name : str
        Unique in its set, e.g. ``'b0042-biped'``.
    family : str
        ``'reference'``, ``'boxes'``, ``'chain'``, ``'biped'`` or ``'frame'``.
    M : (n, n) ndarray
    q : (n,) ndarray
    solvable : bool or None
        False for a known infeasible LCP, None when unknown.
    k : int
        Contacts (0 for reference problems).
    rank_G, cond_G : int, float
        Numerical rank and 2-norm condition number of the Delassus matrix (inf if singular).
    cond_range : float
        ``sigma_max / sigma_rank``: the condition number on its range.
    G : (3k, 3k) ndarray or None
        Delassus matrix [1/kg], kept for checks and replays.
    source : str
        Where the problem comes from.
    z_expected : (n,) ndarray or None
    """

    name: str
    family: str
    M: np.ndarray
    q: np.ndarray
    solvable: bool = True
    k: int = 0
    rank_G: int = 0
    cond_G: float = float("nan")
    cond_range: float = float("nan")
    G: np.ndarray = field(default=None, repr=False)
    source: str = ""
    z_expected: np.ndarray = field(default=None, repr=False)

    @property
    def n(self):
        """Size of the LCP."""
        return self.q.shape[0]


def reference_set():
    """The reference problems of :mod:`contact_lcp.contact.reference` as BenchProblems.

    Returns ``[]`` when that module is not importable yet.
    """
    try:
        from contact_lcp.contact.reference import reference_problems
    except ImportError:
        return []
    return [
        BenchProblem(
            p.name, "reference", np.asarray(p.M, float), np.asarray(p.q, float),
            solvable=p.solvable, source=p.source, z_expected=p.z_expected,
        )
        for p in reference_problems()
    ]


# --- rigid-body kinematics -------------------------------------------------------------

def skew(r):
    """``[r]x`` such that ``skew(r) @ x = r x x``."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def yaw(theta):
    """Rotation about +z by ``theta`` [rad]."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def box_inertia(mass, extents):
    """Principal inertia ``(3,)`` [kg m^2] of a solid box of full ``extents`` (3,) [m]."""
    a, b, c = np.square(extents)
    return mass / 12.0 * np.array([b + c, a + c, a + b])


@dataclass
class Body:
    """A rigid body: COM position ``c_W`` [m], yaw ``R_WB``, mass [kg], inertia [kg m^2]."""

    c_W: np.ndarray
    R_WB: np.ndarray
    mass: float
    inertia_B: np.ndarray
    parent: int = -1          # -1: a floating root (6 DOF)
    joint_W: np.ndarray = None
    joint_dof: int = 0
    sole_W: np.ndarray = None  # (c, 3) contact points on z = 0, or None
    mu: np.ndarray = None


def twist_map(bodies, rng):
    """``S`` (6B, p): stacked body twists ``[v_c; w]`` from generalized velocities.

    A root has 6 columns (identity); a child has its parent's twist carried rigidly to
    its COM plus one column per revolute axis (random direction through a point near the
    joint), so ``S`` has full column rank for generic axes.
    """
    B = len(bodies)
    cols = [6 if b.parent < 0 else b.joint_dof for b in bodies]
    S = np.zeros((6 * B, sum(cols)))
    start = np.concatenate([[0], np.cumsum(cols)])
    for i, b in enumerate(bodies):
        rows = slice(6 * i, 6 * i + 6)
        if b.parent < 0:
            S[rows, start[i] : start[i] + 6] = np.eye(6)
            continue
        p = bodies[b.parent]
        carry = np.eye(6)
        carry[:3, 3:] = -skew(b.c_W - p.c_W)
        S[rows] = carry @ S[6 * b.parent : 6 * b.parent + 6]
        for j in range(b.joint_dof):
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            point = b.joint_W + rng.uniform(-0.03, 0.03, size=3)
            S[6 * i : 6 * i + 3, start[i] + j] = np.cross(axis, b.c_W - point)
            S[6 * i + 3 : 6 * i + 6, start[i] + j] = axis
    return S


def body_mass(bodies):
    """Block-diagonal body mass matrix (6B, 6B) in the twist coordinates ``[v_c; w]``."""
    Mb = np.zeros((6 * len(bodies),) * 2)
    for i, b in enumerate(bodies):
        Mb[6 * i : 6 * i + 3, 6 * i : 6 * i + 3] = b.mass * np.eye(3)
        Mb[6 * i + 3 : 6 * i + 6, 6 * i + 3 : 6 * i + 6] = b.R_WB @ np.diag(b.inertia_B) @ b.R_WB.T
    return Mb


def contact_jacobian(bodies, rng):
    """``(Jb, mu)``: rows (n, t1, t2) per contact point of the body twists, and mu per point.

    The tangent t1 is turned by a random angle about the normal +z for each point.
    """
    rows, mus = [], []
    B = len(bodies)
    for i, b in enumerate(bodies):
        if b.sole_W is None:
            continue
        for p_W, mu in zip(b.sole_W, b.mu):
            t1 = yaw(rng.uniform(0.0, 2 * np.pi))[:, 0]
            R_WC = np.column_stack([[0.0, 0.0, 1.0], t1, np.cross([0.0, 0.0, 1.0], t1)])
            block = np.zeros((3, 6 * B))
            block[:, 6 * i : 6 * i + 3] = R_WC.T
            block[:, 6 * i + 3 : 6 * i + 6] = -R_WC.T @ skew(p_W - b.c_W)
            rows.append(block)
            mus.append(mu)
    return np.vstack(rows), np.array(mus)


def delassus(J, M):
    """``G = J M^-1 J'`` [1/kg] through a Cholesky factor of ``M``; symmetric PSD."""
    L, _ = cho_factor(M, lower=True)
    X = solve_triangular(np.tril(L), J.T, lower=True)
    G = X.T @ X
    return 0.5 * (G + G.T)


def spectrum(G):
    """``(rank, cond, cond_range)`` from the singular values of ``G``."""
    s = np.linalg.svd(G, compute_uv=False)
    tol = s[0] * G.shape[0] * np.finfo(float).eps if s.size else 0.0
    r = int(np.sum(s > tol))
    cond = float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
    return r, cond, float(s[0] / s[r - 1]) if r else float("nan")


# --- soles ------------------------------------------------------------------------------

def sole_points(rng, half, count):
    """``count`` points (x, y) on a rectangular sole of half-sizes ``half`` [m].

    The 4 corners always come first; then edge midpoints, interior points, points
    collinear with an edge and near-duplicates (1e-9 to 1e-6 m) of earlier points.
    """
    hx, hy = half
    pts = [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)]
    mids = [(0.0, -hy), (hx, 0.0), (0.0, hy), (-hx, 0.0)]
    rng.shuffle(mids)
    while len(pts) < count:
        kind = rng.choice(["mid", "interior", "collinear", "duplicate"], p=[0.3, 0.3, 0.2, 0.2])
        if kind == "mid" and mids:
            pts.append(mids.pop())
        elif kind == "collinear":
            s = rng.uniform(-1.0, 1.0)
            pts.append(rng.choice([(s * hx, -hy), (hx, s * hy), (s * hx, hy), (-hx, s * hy)]))
        elif kind == "duplicate":
            base = np.array(pts[rng.integers(len(pts))])
            pts.append(tuple(base + rng.uniform(-1.0, 1.0, 2) * 10.0 ** rng.uniform(-9, -6)))
        else:
            pts.append((rng.uniform(-hx, hx), rng.uniform(-hy, hy)))
    return np.array(pts[:count], dtype=float)


def grounded_box(rng, x, y, count, mass=None):
    """A box resting flat on z = 0 at (x, y) with ``count`` sole points; random sizes."""
    extents = np.array([rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.3), rng.uniform(0.02, 0.4)])
    mass = rng.uniform(0.5, 60.0) if mass is None else mass
    R = yaw(rng.uniform(0.0, 2 * np.pi))
    c = np.array([x, y, extents[2] / 2])
    local = sole_points(rng, extents[:2] / 2, count)
    sole = np.column_stack([local, np.full(count, -extents[2] / 2)]) @ R.T + c
    sole[:, 2] = 0.0
    if rng.random() < 0.5:
        mu = np.full(count, rng.uniform(0.2, 1.0))  # one friction coefficient per body
    else:
        mu = rng.uniform(0.2, 1.0, count)
    return Body(c, R, mass, box_inertia(mass, extents), sole_W=sole, mu=mu)


def split_contacts(rng, k, max_bodies=4, lo=4, hi=16):
    """Split ``k`` contacts over 1 to ``max_bodies`` bodies with ``lo``..``hi`` each."""
    fewest = int(np.ceil(k / hi))
    most = max(fewest, min(max_bodies, k // lo))
    B = int(rng.integers(fewest, most + 1))
    counts = np.full(B, lo)
    for _ in range(k - lo * B):
        open_ = np.flatnonzero(counts < hi)
        counts[rng.choice(open_)] += 1
    return [int(c) for c in counts]


def scene_bodies(rng, family, k):
    """Bodies of a ``family`` scene with ``k`` contact points in total."""
    if family == "biped":
        counts = split_contacts(rng, k, max_bodies=2) if k >= 8 else [k]
        if len(counts) == 1 and k >= 8:
            counts = [k // 2, k - k // 2]
        height = rng.uniform(0.6, 1.0)
        pelvis_mass = rng.uniform(10.0, 60.0)
        pelvis = Body(np.array([0.0, 0.0, height]), yaw(rng.uniform(0, 2 * np.pi)), pelvis_mass,
                      box_inertia(pelvis_mass, rng.uniform(0.15, 0.4, 3)))
        bodies = [pelvis]
        for side, count in zip((1.0, -1.0), counts):
            y = side * rng.uniform(0.08, 0.15)
            thigh_mass = rng.uniform(1.0, 10.0)
            thigh = Body(np.array([0.0, y, height / 2]), np.eye(3), thigh_mass,
                         box_inertia(thigh_mass, [0.08, 0.08, height / 2]), parent=0,
                         joint_W=np.array([0.0, y, height - 0.05]),
                         joint_dof=int(rng.integers(1, 4)))
            bodies.append(thigh)
            foot = grounded_box(rng, rng.uniform(-0.1, 0.1), y, count, mass=rng.uniform(0.5, 3.0))
            foot.parent, foot.joint_dof = len(bodies) - 1, int(rng.integers(1, 4))
            foot.joint_W = np.array([foot.c_W[0], y, foot.c_W[2] + 0.05])
            bodies.append(foot)
        return bodies
    counts = split_contacts(rng, k, max_bodies=4)
    if family == "chain" and len(counts) == 1:
        counts = [k // 2, k - k // 2] if k >= 8 else counts
    bodies, x = [], 0.0
    for i, count in enumerate(counts):
        b = grounded_box(rng, x, rng.uniform(-0.05, 0.05), count)
        if family == "chain" and i > 0:
            b.parent, b.joint_dof = i - 1, int(rng.integers(1, 6))
            b.joint_W = 0.5 * (b.c_W + bodies[-1].c_W)
        bodies.append(b)
        x += rng.uniform(0.3, 0.7)
    return bodies


# --- problems ---------------------------------------------------------------------------

def scene_problem(name, family, bodies, rng, motion, h, source):
    """Assemble the contact LCP of a scene; ``motion`` picks the free velocity ``nu0``."""
    S = twist_map(bodies, rng)
    Mb = body_mass(bodies)
    p = S.shape[1]
    M_gen = S.T @ Mb @ S + np.diag(np.r_[np.zeros(6), rng.uniform(1e-4, 1e-2, p - 6)])
    Jb, mu = contact_jacobian(bodies, rng)
    J = Jb @ S
    G = delassus(J, M_gen)
    nu0 = np.zeros(p)
    if motion == "sliding":
        nu0[:2] = rng.uniform(0.05, 2.0) * yaw(rng.uniform(0, 2 * np.pi))[:2, 0]
        nu0[5] = rng.uniform(-2.0, 2.0)
        nu0[6:] = rng.normal(scale=0.3, size=p - 6)
    elif motion == "spinning":
        nu0[5] = rng.uniform(0.5, 5.0) * rng.choice([-1.0, 1.0])
    elif motion == "landing":
        nu0[2] = -rng.uniform(0.1, 3.0)
        nu0[:2] = rng.normal(scale=0.3, size=2)
        nu0[3:5] = rng.normal(scale=1.0, size=2)
    elif motion == "jitter":
        nu0 = rng.normal(scale=0.05, size=p)
    tau = np.zeros(6 * len(bodies))
    tau[2::6] = [-b.mass * GRAVITY for b in bodies]
    nu_free = nu0 + h * np.linalg.solve(M_gen, S.T @ tau)
    u = J @ nu_free
    k = J.shape[0] // 3
    gap = rng.random(k) < 0.2
    phi = rng.uniform(0.0, 2e-3, k) * (rng.random(k) < 0.5)
    bias = np.where(gap, rng.uniform(0.0, 1e-4, k) / h, -0.2 * phi / h)
    lcp = build_contact_lcp(G, u, mu, num_directions=NUM_DIRECTIONS, normal_bias=bias)
    rank, cond, cond_range = spectrum(G)
    return BenchProblem(name, family, lcp.M, lcp.q, True, k, rank, cond, cond_range, G, source)


def random_contact_problem(index, seed=0, family=None, num_contacts=None):
    """The ``index``-th random contact problem of the seeded set (independent of the others).

    Parameters
    ----------
    index : int
    seed : int
    family : str, optional
        One of ``FAMILIES``; default drawn at random.
    num_contacts : int, optional
        ``k`` in 4..32; default drawn uniformly, so ``n = 10 k`` spans 40..320.

    Returns
    -------
    BenchProblem
    """
    rng = np.random.default_rng([seed, index])
    family = family or str(rng.choice(FAMILIES, p=[0.4, 0.3, 0.3]))
    k = int(rng.integers(4, 33)) if num_contacts is None else int(num_contacts)
    motion = str(rng.choice(["resting", "sliding", "spinning", "landing", "jitter"]))
    h = float(rng.choice([1e-3, 2e-3, 5e-3, 1e-2]))
    bodies = scene_bodies(rng, family, k)
    name = f"b{index:04d}-{family}-k{k}"
    return scene_problem(name, family, bodies, rng, motion, h, f"random seed={seed}")


def legged_frame_problem(legs, motion, seed=0):
    """A rigid ring (10 kg, radius 0.5 m, 0.3 m above ground) on ``legs`` legs, mu = 0.5.

    The redundant-contact scene of Enzenhöfer et al.: ``rank(G) = 6`` for any number of
    legs >= 3, while ``G`` is ``3 legs`` square; frictional, with the root ``resting``,
    ``sliding``, ``spinning`` about +z or ``landing`` tilted.
    """
    rng = np.random.default_rng([seed, 1_000_000 + 100 * legs + FRAME_MOTIONS.index(motion)])
    mass, radius, height = 10.0, 0.5, 0.3
    angles = 2 * np.pi * np.arange(legs) / legs
    feet = np.column_stack([radius * np.cos(angles), radius * np.sin(angles), np.zeros(legs)])
    inertia = mass * radius**2 * np.array([0.5, 0.5, 1.0])
    ring = Body(np.array([0.0, 0.0, height]), np.eye(3), mass, inertia, sole_W=feet,
                mu=np.full(legs, 0.5))
    name = f"frame-{legs}-{motion}"
    return scene_problem(name, "frame", [ring], rng, motion, 1e-3, "n-legged frame")


def contact_problems(count=1000, seed=0, frames=True):
    """Set (b): ``count`` random scenes, then the n-legged frames (``FRAME_LEGS`` x motions)."""
    problems = [random_contact_problem(i, seed) for i in range(count)]
    if frames:
        problems += [legged_frame_problem(n, m, seed) for n in FRAME_LEGS for m in FRAME_MOTIONS]
    return problems


def quick_contact_problems(size=100, count=1000, seed=0):
    """A deterministic spread of ``size`` problems of the full set (every ``count/size``-th
    random scene, and every fourth frame), generated without building the rest."""
    frames = [(n, m) for n in FRAME_LEGS for m in FRAME_MOTIONS][::4]
    step = count / max(size - len(frames), 1)
    picks = sorted({int(i * step) for i in range(size - len(frames))})
    return ([random_contact_problem(i, seed) for i in picks]
            + [legged_frame_problem(n, m, seed) for n, m in frames])
