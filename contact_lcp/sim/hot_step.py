"""The step's common case in one compiled call: the contacts of the last step, solved by
its basis.

A robot standing or walking on flat ground, a tower or a resting box pyramid spend most
steps in one situation: every collision pair within reach has a closed form (a polytope
on the ground, spheres against the ground, spheres and boxes, boxes against boxes), the
contacts are those of the last step, and the pyramid model's last basis solves the new
LCP (no pivot of the search). The staged step (:class:`contact_lcp.sim.stepper.Stepper`)
then runs a dozen compiled kernels with Python in between: about 200 Python-level calls,
which cost more than the physics (Talos: ~60 us of kernels and Pinocchio in a 260 us
step).

:meth:`HotStep.step` runs the same kernels on the same inputs in one compiled call, in
the staged step's order: the closed forms of the detector merged in pair order
(:func:`_narrow`), the contact rows, the active set, the joint-limit rows, the problem's
``G``, ``u`` and bias, the friction pyramids' orientation, the last basis
(:func:`~contact_lcp.contact.pyramid_kernel.warm_pyramid`), ``v+ = v_free + K J' f``, the
active-set test of the step's re-solve and the configuration step. It commits nothing
unless all of them give the answer the staged step would apply; otherwise it returns
None and the staged step runs from the start (the same inputs, so the same answer: the
hot step is a shortcut, never a different model). ``test/test_hot_step.py`` compares
both step by step on standing robots, boxes, a tower and a settling sphere pile.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.boxes import box_contacts
from contact_lcp.collision.broadphase import _reach, farther
from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.collision.detector import _GROUND_FRAME
from contact_lcp.collision.ground import curved_on_ground, polytopes_on_ground
from contact_lcp.collision.spheres import sphere_contacts
from contact_lcp.contact.problem import ContactProblem, _rows_and_bias, active_contacts
from contact_lcp.contact.pyramid import (
    ANGLE_SNAP,
    STICK_SPEED,
    WARM_FLIPS,
    WARM_ROWS_PER_FLIP,
    WARM_START_METHODS,
    PyramidModel,
    _edge_angles,
    _friction_directions,
    keep_inside,
)
from contact_lcp.contact.pyramid_kernel import basis_flags, warm_pyramid
from contact_lcp.dynamics.free_flyer import _integrate_vector
from contact_lcp.dynamics.world import _fill_contact_rows
from contact_lcp.sim.limits import _NO_INDEX
from contact_lcp.sim.limits import _rows as _limit_rows

#: why the compiled step handed a step to the staged one (``HotStep.misses`` counts them)
MISSES = ("", "no contact or limit row", "other contacts than the last step's",
          "the last basis does not solve it", "the impulses close or reach other contacts",
          "more contacts than max_contacts", "NaN or inf in the rows", "no last basis",
          "a near pair without a closed form", "its contacts curve into each other",
          "a penetration to project")


#: steps without an attempt after consecutive misses at most (the misses' cost is the
#: closed forms, G and the warm solve done twice: 10 % of a settling pile's step)
MAX_BACKOFF = 32


class HotStep:
    """The compiled common step of a :class:`~contact_lcp.sim.stepper.Stepper`, when its
    world and model allow it (:attr:`enabled`).

    It needs the pyramid model (with warm start and the robust method), no loop closure
    and no facet set; each step it also needs a closed form for every near pair.
    ``hits`` counts the steps it took, ``misses[reason]`` the others; after a miss the
    next attempt waits 1, 3, 7 ... up to :data:`MAX_BACKOFF` - 1 steps (``skipped``), so
    that a pile whose contacts change every step does not pay for it.
    """

    def __init__(self, stepper):
        # what the step reads, not the stepper itself (it holds this object: a cycle
        # would keep a replaced simulator's world alive until a full garbage collection)
        self._model, self._detector, self._world = stepper.model, stepper.detector, stepper.world
        depth = stepper.projection.depth  # the staged step projects deeper ones first
        self._params = (stepper.h, stepper.activation, stepper.max_contacts,
                        np.inf if depth is None else float(depth))
        self._bias = (stepper.gamma, stepper.max_correction_speed)
        self._max_lookahead = stepper.max_lookahead
        model = stepper.model
        self.enabled = (isinstance(model, PyramidModel) and stepper.loops is None
                        and stepper.facets is None and model.settings.warm_start
                        and model.settings.method in WARM_START_METHODS)
        self.hits = 0
        self.misses = {m: 0 for m in MISSES[1:]}
        self.skipped = 0  # steps not tried after misses
        self._skip, self._backoff = 0, 1
        if not self.enabled:
            return
        d = model.settings.friction_directions
        self._d = int(d)
        self._slip = model.settings.friction_frame != "fixed"
        self._period = 2.0 * np.pi / d
        self._inside = keep_inside(self._period)
        self._singular_tol = float(model.settings.solver_options.get("singular_tol", 1e-10))
        self._narrow = stepper.detector.compiled_pass
        self._kinds = closed_form_kinds(self._narrow)
        self._names = stepper.detector.surface_names
        self._ng = stepper.num_geometries
        self._levers = stepper.detector._levers
        self._support = stepper.world._support
        lim = stepper.limits
        self._limits = ((lim.idx_q, lim.idx_v, lim.lower, lim.upper)
                        if stepper.limit_activation is not None else
                        (_NO_INDEX, _NO_INDEX, np.zeros(0), np.zeros(0)))
        self._limit_activation = (-np.inf if stepper.limit_activation is None
                                  else float(stepper.limit_activation))
        flyers = stepper.free_motion.flyers  # the world's free flyers, already gathered
        self._integrate = flyers._vector is not None  # else World.integrate_state after
        vec = flyers._vector if self._integrate else (_NO_INDEX, _NO_INDEX)
        self._integration = (self._integrate, *vec, flyers._iq, flyers._iv, flyers._c)

    def step(self, q, v, v_free, K, lookahead, prescribed):
        """The step from ``(q, v)`` given its free motion ``v_free``, ``K`` and lookahead
        (as :meth:`Stepper.step` computes them) and the prescribed velocity indices (or
        None), or None (the staged step must run).

        Returns ``(q_next, v_next, v_step, record fields)``: the next state, the velocity
        over the step (frames at its start) and ``(contacts, impulse_C, limit_impulse,
        report, problem, max_penetration)``.
        """
        if self._skip:  # missed lately (a settling pile): the staged step, no attempt
            self._skip -= 1
            self.skipped += 1
            return None
        out = self._attempt(q, v, v_free, K, lookahead, prescribed)
        if out is None:  # back off: 1, 3, 7 ... 31 steps without an attempt
            self._backoff = min(2 * self._backoff, MAX_BACKOFF)
            self._skip = self._backoff - 1
        else:
            self._backoff = 1
        return out

    def reject(self):
        """The staged step redoes the step the last call answered (its contacts' paths
        curve into each other: :mod:`contact_lcp.sim.curvature`): counted as a miss."""
        self.hits -= 1
        key = MISSES[9]
        self.misses[key] = self.misses.get(key, 0) + 1

    def _attempt(self, q, v, v_free, K, lookahead, prescribed):
        model = self._model
        warm = model.warm_inputs()
        if warm is None:
            self.misses[MISSES[7]] += 1
            return None
        X, near = self._detector.compiled_broad(q, lookahead)
        h = self._params[0]
        out = _hot_step(
            X, near, lookahead, *self._narrow, self._ng, _GROUND_FRAME,
            self._world.joint_jacobians, self._support, v_free, K, *self._params, q,
            *self._limits, _NO_INDEX if prescribed is None else prescribed,
            self._limit_activation, *self._bias, *warm, self._slip, self._period, self._d,
            self._singular_tol, self._inside, self._levers, self._max_lookahead, *self._integration,
            *self._kinds)
        code = out[0]
        if code:
            self.misses[MISSES[code]] += 1
            return None
        (_, ints, P, R, dist, mu, J, G, u, bias, phi, f, nb, lcp_size, kept, basic_a,
         basic_b, basic_lam, directions, v_step, q_next, v_next, pen) = out
        k = dist.shape[0]
        l = phi.shape[0] - k
        contacts = ContactSet(self._names, ints[0], ints[1], ints[2], ints[3], P, R, dist, mu)
        problem = ContactProblem(h, R, P, phi, mu, J, K, G, v, v_free, u, bias, l, ints[4])
        model.adopt(problem, (basic_a, basic_b, basic_lam), directions)
        report = model.warm_report(nb, lcp_size, k - kept)
        self.hits += 1
        if not self._integrate:
            q_next, v_next = self._world.integrate_state(q, v_step, h, trusted=True)
        return q_next, v_next, v_step, (contacts, f[: 3 * k].reshape(k, 3), f[3 * k:], report,
                                         problem, pen)


def closed_form_kinds(compiled_pass):
    """``(spheres, boxes, curves)`` for :func:`_narrow` from the detector's
    ``compiled_pass``: True when some pair of the scene takes that closed form (as
    :func:`_narrow` sorts the pairs), else None (not compiled)."""
    (_, _, _, _, _, _, _, cap, _, second, on_ground, sphere_kind, box_pair, _, _, _, _,
     ground_pair, curved_kind, _, _) = compiled_pass
    off = ~np.asarray(on_ground, dtype=bool)
    sphere = off & (np.asarray(sphere_kind) > 0)
    box = off & ~sphere & np.asarray(box_pair, dtype=bool)
    curved = (off & ~sphere & ~box & np.asarray(ground_pair, dtype=bool)
              & (np.asarray(curved_kind)[second] > 0))
    return (True if sphere.any() else None, True if box.any() else None,
            True if cap > 0 and curved.any() else None)


@njit(cache=True)
def _miss(code, nv, d):
    """:func:`_hot_step`'s answer when it hands the step over (``MISSES[code]``); callers
    pass ``code`` as an int64, not a literal (each literal would compile it again)."""
    return (code, np.zeros((5, 0), dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)),
            np.zeros(0), np.zeros(0), np.zeros((0, nv)), np.zeros((0, 0)), np.zeros(0),
            np.zeros(0), np.zeros(0), np.zeros(0), 0, 0, 0, np.zeros(0, dtype=np.bool_),
            np.zeros((0, d), dtype=np.bool_), np.zeros(0, dtype=np.bool_), np.zeros((0, 3)),
            np.zeros(0), np.zeros(0), np.zeros(0), 0.0)


@njit(cache=True)
def _hot_step(X, near, lookahead, verts, start, ground_h, activation_distance, r2, flat,
              interior, cap, first, second, on_ground, sphere_kind, box_pair, joints,
              sphere_r, box_half, pair_mu, ground_pair, curved_kind, curved_size, segments,
              ng, ground_frame, J_W, support, v_free, K, h,
              activation, max_contacts, deep, q, limit_q, limit_v, lower, upper, prescribed,
              limit_activation, gamma, max_corr,
              last_pair, last_limits, last_a, last_b, last_lam, last_keys, last_p, last_dir,
              slip, period, d, singular_tol, inside, levers, max_lookahead, integrate,
              vec_q, vec_v, flyer_q, flyer_v, flyer_lever, spheres, boxes, curves):
    """See :class:`HotStep`; returns ``(code, ...)``, code 0 when the step is solved (an
    index of ``MISSES`` otherwise, with placeholders). ``spheres``, ``boxes``, ``curves``:
    as :func:`_narrow`."""
    # collision: the closed forms of ContactDetector.detect, merged in pair order
    nv = v_free.shape[0]
    ok, P_f, R_f, d_f, pair_f = _narrow(
        X, near, lookahead, verts, start, ground_h, activation_distance, r2, flat, interior,
        cap, first, second, on_ground, sphere_kind, box_pair, sphere_r, box_half,
        ground_frame, ground_pair, curved_kind, curved_size, segments, spheres, boxes, curves)
    if not ok:
        return _miss(np.int64(8), nv, d)
    kf = d_f.shape[0]
    if kf > max_contacts:
        return _miss(np.int64(5), nv, d)
    for i in range(kf):
        if d_f[i] < -deep:
            return _miss(np.int64(10), nv, d)
    # contact rows of every contact found (World.contact_jacobian)
    a_f = first[pair_f]
    b_f = second[pair_f]
    J_f = np.zeros((3 * kf, nv))
    _fill_contact_rows(J_f, R_f, P_f, joints[b_f], joints[a_f], J_W, support)
    # the active set (as the staged step) and the problem's rows
    act = active_contacts(J_f, v_free, v_free, d_f, h, activation)
    k = act.shape[0]
    lim_idx, lim_sign, lim_gap = _limit_rows(q, limit_q, limit_v, lower, upper, v_free, h,
                                             limit_activation, prescribed)
    l = lim_idx.shape[0]
    if k + l == 0:
        return _miss(np.int64(1), nv, d)
    m = 3 * k + l
    J = np.zeros((m, nv))
    for i in range(k):
        for j in range(3):
            J[3 * i + j] = J_f[3 * act[i] + j]
    for j in range(l):
        J[3 * k + j, lim_idx[j]] = lim_sign[j]
    ints = np.empty((5, k), dtype=np.int64)
    P = np.empty((k, 3))
    R = np.empty((k, 3, 3))
    dist = np.empty(k)
    mu = np.empty(k)
    for i in range(k):
        c = act[i]
        ints[0, i] = a_f[c]
        ints[1, i] = b_f[c]
        ints[2, i] = joints[a_f[c]]
        ints[3, i] = joints[b_f[c]]
        ints[4, i] = a_f[c] * ng + b_f[c]
        P[i] = P_f[c]
        R[i] = R_f[c]
        dist[i] = d_f[c]
        mu[i] = pair_mu[pair_f[c]]
    phi = np.empty(k + l)
    phi[:k] = dist
    phi[k:] = lim_gap
    finite, G, u, bias = _rows_and_bias(J, K, v_free, phi, h, gamma, max_corr)
    if not finite:
        return _miss(np.int64(6), nv, d)
    # the pyramid model's first strategy: the same contacts, the last basis
    pair = ints[4]
    same = last_pair.shape[0] == k and last_limits.shape[0] == l
    if same:
        for i in range(k):
            if last_pair[i] != pair[i]:
                same = False
        for j in range(l):
            for c in range(nv):
                if last_limits[j, c] != J[3 * k + j, c]:
                    same = False
    if not same:
        return _miss(np.int64(2), nv, d)
    keep = np.flatnonzero(last_a[:k])
    if keep.shape[0] + l == 0:
        return _miss(np.int64(3), nv, d)
    if slip and k > 0:
        angle = _edge_angles(u, R, P, pair, last_p, last_keys, last_dir, STICK_SPEED, period,
                             ANGLE_SNAP)
    else:
        angle = np.zeros(k)
    code, f, z, _, _, _, nb = warm_pyramid(G, u, mu, bias, l, d, angle, keep, last_a,
                                               last_b, last_lam, singular_tol,
                                               max(WARM_FLIPS, m // WARM_ROWS_PER_FLIP))
    if code:
        return _miss(np.int64(3), nv, d)
    # v+ and the step's re-solve test (Stepper.step): no contact left out that the
    # impulses drive shut, no body moved farther than the search looked
    v_next = v_free + K @ (J.T @ f)  # as the staged step (the same BLAS products)
    if farther(_reach(levers, v_next, v_free, h, max_lookahead), lookahead, activation):
        return _miss(np.int64(4), nv, d)
    if active_contacts(J_f, v_free, v_next, d_f, h, activation).shape[0] != k:
        return _miss(np.int64(4), nv, d)
    basic_a, basic_b, basic_lam = basis_flags(z, k, l, d, keep)
    # the configuration step (World.integrate_state) of worlds it covers
    if integrate:
        q_next, v_end = _integrate_vector(q, v_next, h, vec_q, vec_v, flyer_q, flyer_v,
                                          flyer_lever)
    else:
        q_next, v_end = np.zeros(0), np.zeros(0)
    pen = 0.0
    for i in range(k):
        pen = max(pen, -dist[i])
    return (0, ints, P, R, dist, mu, J, G, u, bias, phi, f, nb, z.shape[0], keep.shape[0],
            basic_a, basic_b, basic_lam, _friction_directions(f, R, mu, angle, inside), v_next,
            q_next, v_end, pen)


@njit(cache=True)
def _narrow(X, near, la, verts, start, ground_h, eps0, r2, flat, interior, cap, first, second,
            on_ground, sphere_kind, box_pair, sphere_r, box_half, ground_frame, ground_pair,
            curved_kind, curved_size, segments, spheres, boxes, curves):
    """The closed forms of :meth:`ContactDetector.detect` on the near pairs: polytopes on
    the ground, spheres (against the ground, spheres and boxes), boxes against boxes,
    cylinders, capsules, cones and ellipsoids on the ground, each as the staged detector
    runs it, then merged in pair order as its ``_merge`` does.
    Returns ``(ok, P, R, d, pair)``; ``ok`` False when a near pair has no closed form or
    its closed form declines it (a sphere's centre inside a box): the staged step then
    takes it to coal.

    ``spheres``, ``boxes``, ``curves`` are None when the scene has no pair of that kind
    (:func:`closed_form_kinds`): numba then prunes the branch, so that closed form
    (``sphere_contacts``, ``box_contacts``, ``curved_on_ground``: 30 s of compilation
    together) is not compiled for the scene; a near pair of a kind declared absent makes
    ``ok`` False (the staged step's path)."""
    m = near.shape[0]
    ground = np.zeros(m, dtype=np.bool_)
    curved = np.zeros(m, dtype=np.bool_)
    for a in range(m):
        p = near[a]
        ground[a] = on_ground[p]
        if on_ground[p]:
            continue
        if sphere_kind[p] > 0:
            if spheres is None:
                return False, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), near[:0]
        elif box_pair[p]:
            if boxes is None:
                return False, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), near[:0]
        else:
            # a curved shape on the ground: the staged step's closed form, reduced as a
            # patch (with a cap on points; without one it takes another reduction)
            if curves is not None:
                curved[a] = ground_pair[p] and curved_kind[second[p]] > 0 and cap > 0
            if not curved[a]:
                return False, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), near[:0]
    P4 = np.empty((0, 3))
    d4 = np.empty(0)
    own4 = np.empty(0, dtype=np.int64)
    if curves is not None:
        for a in range(m):
            if curved[a]:
                g = second[near[a]]
                Pc, dc = curved_on_ground(curved_kind[g], curved_size[g], X[g], ground_h,
                                          eps0 + la[g], segments, r2, flat, interior, cap)
                if dc.shape[0]:
                    P4 = np.concatenate((P4, Pc))
                    d4 = np.concatenate((d4, dc))
                    own4 = np.concatenate((own4, np.full(dc.shape[0], near[a])))
    g_pairs = near[ground]
    rest = near[~ground] if g_pairs.shape[0] else near
    geoms = second[g_pairs]
    Xg = np.empty((geoms.shape[0], 4, 4))
    eps = np.empty(geoms.shape[0])
    for a in range(geoms.shape[0]):
        Xg[a] = X[geoms[a]]
        eps[a] = eps0 + la[geoms[a]]
    P1, d1, own1 = polytopes_on_ground(verts, start, geoms, Xg, ground_h, eps, r2, flat,
                                       interior, cap)
    P2, R2, d2, own2 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if spheres is not None:
        ana = rest[sphere_kind[rest] > 0]
        done2, P2, R2, d2, own2 = sphere_contacts(ana, sphere_kind, first, second, X,
                                                  sphere_r, box_half, la, eps0, ground_h)
        if not np.all(done2):
            return False, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), near[:0]
    P3, R3, d3, own3 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if boxes is not None:
        bb = rest[box_pair[rest]]
        done3, P3, R3, d3, own3 = box_contacts(bb, first, second, X, box_half, la, eps0, r2,
                                               flat, interior, cap)
        if not np.all(done3):
            return False, np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros(0), near[:0]
    n1, n2, n3, n4 = d1.shape[0], d2.shape[0], d3.shape[0], d4.shape[0]
    n = n1 + n2 + n3 + n4
    pair = np.empty(n, dtype=np.int64)
    P = np.empty((n, 3))
    R = np.empty((n, 3, 3))
    d = np.empty(n)
    for i in range(n1):
        pair[i] = g_pairs[own1[i]]
        P[i] = P1[i]
        R[i] = ground_frame
        d[i] = d1[i]
    for i in range(n2):
        pair[n1 + i] = own2[i]
        P[n1 + i] = P2[i]
        R[n1 + i] = R2[i]
        d[n1 + i] = d2[i]
    for i in range(n3):
        pair[n1 + n2 + i] = own3[i]
        P[n1 + n2 + i] = P3[i]
        R[n1 + n2 + i] = R3[i]
        d[n1 + n2 + i] = d3[i]
    for i in range(n4):
        k = n1 + n2 + n3 + i
        pair[k] = own4[i]
        P[k] = P4[i]
        R[k] = ground_frame
        d[k] = d4[i]
    if max(n1, n2, n3, n4) == n:  # one part: already in pair order
        return True, P, R, d, pair
    order = np.argsort(pair, kind="mergesort")  # stable, as the staged _merge
    return True, P[order], R[order], d[order], pair[order]
