"""The pyramid contact model (two-step solve, fallbacks) on a rigid box, against analytic
impulses."""

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.contact.problem import build_problem
from contact_lcp.contact.report import Outcome
from contact_lcp.exceptions import SceneError

G_ACC = 9.81
H = 1e-3


def box_problem(mass=2.0, half=(0.1, 0.1, 0.05), v=(0, 0, 0, 0, 0, 0), n_points=4):
    """Rigid box resting on z = 0: Delassus G and free contact velocity u at its corners.

    Body velocity [v; w] at the centre of mass, world axes; contact frames (n, t1, t2) =
    (z, x, y). Gravity acts over one step ``H``.
    """
    hx, hy, hz = half
    corners = [(sx * hx, sy * hy, -hz) for sx in (-1, 1) for sy in (-1, 1)][:n_points]
    I = mass / 3.0 * np.diag([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2])
    Minv = np.zeros((6, 6))
    Minv[:3, :3] = np.eye(3) / mass
    Minv[3:, 3:] = np.linalg.inv(I)
    axes = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
    J = np.zeros((3 * len(corners), 6))
    for i, r in enumerate(corners):
        for j, a in enumerate(axes):
            J[3 * i + j, :3] = a
            J[3 * i + j, 3:] = np.cross(r, a)
    v_free = np.asarray(v, dtype=float) + np.array([0, 0, -G_ACC * H, 0, 0, 0])
    return J @ Minv @ J.T, J @ v_free, J, Minv, v_free


def solve_box(mu, J, Minv, v_free, gap=None, model="pyramid", **settings):
    """The model's solution for the box's corners at gaps ``gap`` (k,) [m] (0: touching)."""
    k = J.shape[0] // 3
    R = np.tile(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float), (k, 1, 1))
    v = v_free - np.array([0, 0, -G_ACC * H, 0, 0, 0])
    problem = build_problem(H, R, np.zeros((k, 3)), np.zeros(k) if gap is None else gap, mu,
                            J, Minv, v, v_free, pair=np.zeros(k, dtype=np.int64))
    return make_model(model, ModelSettings(**settings)).solve(problem)


def test_resting_box_normal_impulse_is_m_g_h():
    m = 3.0
    G, u, J, Minv, v_free = box_problem(mass=m)
    sol = solve_box(np.full(4, 0.5), J, Minv, v_free)
    assert sol.report.applied == "pyramid" and sol.report.fallbacks == 0
    assert sol.report.outcome is Outcome.SOLVED and sol.report.certified
    f = sol.f.reshape(4, 3)
    # Summed normal impulse balances gravity over the step (to the certification tolerance).
    assert f[:, 0].sum() == pytest.approx(m * G_ACC * H, rel=1e-9)
    # Nothing pushes the box sideways.
    np.testing.assert_allclose(f[:, 1:].sum(axis=0), 0.0, atol=1e-12)
    v_next = v_free + Minv @ J.T @ sol.f
    np.testing.assert_allclose(v_next, 0.0, atol=1e-9)


@pytest.mark.parametrize("ratio, sticks", [(0.5, True), (0.95, True), (1.05, False), (2.0, False)])
def test_sliding_box_stick_slip_threshold(ratio, sticks):
    """Tangential speed v_t along a pyramid edge (t1): friction stops it within one step iff
    m v_t <= mu m g h, i.e. v_t <= mu g h; otherwise it slows by exactly mu g h."""
    m, mu = 2.0, 0.6
    v_t = ratio * mu * G_ACC * H
    G, u, J, Minv, v_free = box_problem(mass=m, v=(v_t, 0, 0, 0, 0, 0))
    sol = solve_box(np.full(4, mu), J, Minv, v_free, friction_frame="fixed")
    assert sol.report.applied == "pyramid"
    v_next = v_free + Minv @ J.T @ sol.f
    if sticks:
        assert abs(v_next[0]) < 1e-9
    else:
        assert v_next[0] == pytest.approx(v_t - mu * G_ACC * H, rel=1e-7, abs=1e-12)
    assert abs(v_next[2]) < 1e-9  # stays on the plane


def test_failed_frictional_solve_falls_back_to_certified_frictionless():
    # PGS is undefined on the frictional LCP (zero diagonal in the cone rows) but solves the
    # frictionless one: the step must apply the frictionless impulse and count a fallback.
    G, u, J, Minv, v_free = box_problem()
    sol = solve_box(np.full(4, 0.5), J, Minv, v_free, method="pgs")
    r = sol.report
    assert r.outcome is Outcome.FALLBACK and r.applied == "frictionless" and r.fallbacks == 1
    assert r.certified and r.failures >= 1 and r.status.name != "SOLVED"
    assert r.label.startswith("FALLBACK(")


def _failing_pyramid_lcps(monkeypatch):
    """Make the pyramid model's frictional LCPs fail (MAX_PIVOTS) and leave the relaxed
    one (``-mu`` at a normal row's ``lam`` column) to the real solver."""
    from dataclasses import replace

    from contact_lcp.contact import pyramid
    from contact_lcp.lcp import LCPStatus

    real = pyramid.lcp_rung

    def failing(M, q, method, opts):
        res = real(M, q, method, opts)
        k = (q.shape[0]) // 10  # (no unilateral rows: n = 10 k for d = 8)
        relaxed = M[0, 9 * k] < 0.0
        return res if relaxed else replace(res, status=LCPStatus.MAX_PIVOTS)

    monkeypatch.setattr(pyramid, "lcp_rung", failing)


@pytest.mark.parametrize("ratio", [0.5, 2.0])
def test_a_failed_frictional_solve_falls_back_to_the_relaxed_impulse_with_friction(
        monkeypatch, ratio):
    """When the frictional LCP fails, the default fallback is its convex relaxation
    (Anitescu & Hart) on the same pyramids: the box sliding along an edge at ``ratio``
    times the stick threshold ``mu g h`` still sticks (0.5: stopped, no hop) or slows
    (2.0: slides on, pushed off at ``mu`` times its slip speed, the relaxation's
    artefact); the frictionless fallback (``fallback_model: frictionless``) lets it slide
    on at its speed."""
    m, mu = 2.0, 0.6
    v_t = ratio * mu * G_ACC * H
    G, u, J, Minv, v_free = box_problem(mass=m, v=(v_t, 0, 0, 0, 0, 0))
    _failing_pyramid_lcps(monkeypatch)
    sol = solve_box(np.full(4, mu), J, Minv, v_free, friction_frame="fixed")
    r = sol.report
    assert r.outcome is Outcome.FALLBACK and r.applied == "relaxed" and r.fallbacks == 1
    assert r.certified and r.status.name == "MAX_PIVOTS" and r.failures >= 1
    v = v_free + Minv @ J.T @ sol.f
    if ratio < 1.0:
        np.testing.assert_allclose(v, 0.0, atol=1e-9)  # stuck, resting, no hop
        assert sol.f[0::3].sum() == pytest.approx(m * G_ACC * H, rel=1e-9)
    else:
        assert 0.0 < v[0] < v_t and abs(v[1]) < 1e-9
        assert v[2] == pytest.approx(mu * v[0], rel=1e-7)  # pushed off at mu |v_t|
        # it slows by mu times the normal impulse per mass (a normal impulse that also
        # lifts it: m (g h + v_z))
        assert v_t - v[0] == pytest.approx(mu * (G_ACC * H + v[2]), rel=1e-7)
    sol = solve_box(np.full(4, mu), J, Minv, v_free, friction_frame="fixed",
                    options={"fallback_model": "frictionless"})
    assert sol.report.outcome is Outcome.FALLBACK and sol.report.applied == "frictionless"
    v = v_free + Minv @ J.T @ sol.f
    assert v[0] == pytest.approx(v_t, rel=1e-12) and abs(v[2]) < 1e-9


def test_an_unknown_fallback_model_is_refused():
    with pytest.raises(SceneError, match="fallback_model must be one of"):
        make_model("pyramid", ModelSettings(options={"fallback_model": "soft"}))


def test_nothing_certified_means_safe_stop_with_zero_impulse():
    G, u, J, Minv, v_free = box_problem()
    sol = solve_box(np.full(4, 0.5), J, Minv, v_free, method="pgs",
                    solver_options={"max_iterations": 1, "tolerance": 1e-300})
    assert sol.safe_stop and sol.report.fallbacks == 2 and not sol.report.certified
    np.testing.assert_array_equal(sol.f, 0.0)


def test_drop_unloaded_contacts_gives_the_same_velocities():
    # A box tilted onto one edge: two corners carry the load, two hover at 1 mm.
    G, u, J, Minv, v_free = box_problem(v=(0.002, 0, 0, 0, 0, 0))
    gap = np.array([0.0, 0.0, 1e-3, 1e-3])  # corners 2 and 3 are 1 mm above the plane
    full = solve_box(np.full(4, 0.5), J, Minv, v_free, gap=gap)
    dropped = solve_box(np.full(4, 0.5), J, Minv, v_free, gap=gap, drop_unloaded=True)
    assert full.report.applied == dropped.report.applied == "pyramid"
    assert dropped.report.info.get("dropped_contacts") == 2
    np.testing.assert_allclose(Minv @ J.T @ dropped.f, Minv @ J.T @ full.f, atol=1e-9)


def test_joint_limit_rows_activate_near_finite_limits_only():
    from types import SimpleNamespace

    from contact_lcp.sim.limits import joint_limit_rows

    r = SimpleNamespace(idx_q=np.array([7, 8, 9]), idx_v=np.array([6, 7, 8]),
                        lower=np.array([-1.0, -np.inf, 0.0]), upper=np.array([1.0, np.inf, 2.0]))
    q = np.zeros(10)
    q[7], q[8], q[9] = 0.999, 5.0, 0.001
    rows = joint_limit_rows([r], q, None, 0.005)
    # joint 0 near its upper limit (sign -1, gap 1e-3), joint 2 near its lower (sign +1).
    assert sorted(zip(rows.idx_v.tolist(), rows.sign.tolist())) == [(6, -1.0), (8, 1.0)]
    np.testing.assert_allclose(sorted(rows.gap), [1e-3, 1e-3])
    assert joint_limit_rows([r], q, np.array([6, 8]), 0.005).idx_v.size == 0  # prescribed


def _boxes_apart(num, mu=0.5, drift=0.0):
    """``num`` copies of the resting box, each its own 6 coordinates (block-diagonal)."""
    _, _, J1, M1, vf1 = box_problem()
    k1, n1 = J1.shape
    J = np.zeros((num * k1, num * n1))
    Minv = np.zeros((num * n1, num * n1))
    v_free = np.zeros(num * n1)
    for b in range(num):
        J[b * k1:(b + 1) * k1, b * n1:(b + 1) * n1] = J1
        Minv[b * n1:(b + 1) * n1, b * n1:(b + 1) * n1] = M1
        v_free[b * n1:(b + 1) * n1] = vf1 + drift * b * np.array([1, 0, 0, 0, 0, 0])
    k = J.shape[0] // 3
    R = np.tile(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float), (k, 1, 1))
    v = v_free - np.tile([0, 0, -G_ACC * H, 0, 0, 0], num)
    corners = np.array([(sx * 0.1, sy * 0.1, 0.0) for sx in (-1, 1) for sy in (-1, 1)])
    p_W = np.concatenate([corners + [0.5 * b, 0.0, 0.0] for b in range(num)])
    return build_problem(H, R, p_W, np.zeros(k), np.full(k, mu), J, Minv, v,
                         v_free, pair=np.repeat(np.arange(num), 4)), J, Minv


def test_sparse_delassus_equals_the_dense_product():
    # build_problem sums J K J' over the nonzeros of J and K when J is sparse (bodies
    # apart): the same matrix as the dense product, to round-off.
    problem, J, Minv = _boxes_apart(6)
    G = J @ Minv @ J.T
    np.testing.assert_allclose(problem.G, 0.5 * (G + G.T), rtol=0, atol=1e-12 * np.abs(G).max())
    np.testing.assert_allclose(problem.u, J @ problem.v_free, atol=1e-15)


def test_last_step_basis_on_islands_matches_a_cold_solve():
    # Six boxes apart, the middle ones sliding: the second step reuses the first's basis
    # in the compiled kernel, island by island (no pivot of the search), and must give the
    # cold solve's velocities and impulses; the report says where the answer came from.
    problem, J, Minv = _boxes_apart(6, drift=0.2)
    model = make_model("pyramid", ModelSettings())
    first = model.solve(problem)
    second = model.solve(problem, first.guess)
    assert first.report.info["warm_source"] in ("frictionless", "none")
    assert second.report.info["warm_source"] == "previous_step" and second.report.certified
    assert "dropped_contacts" in second.report.info  # the compiled path, not the search
    cold = make_model("pyramid", ModelSettings(warm_start=False)).solve(problem)
    dv = Minv @ J.T @ (second.f - cold.f)
    np.testing.assert_allclose(dv, 0.0, atol=1e-9)
    # each box carries its own weight
    np.testing.assert_allclose(second.f[0::3].reshape(6, 4).sum(axis=1), 2.0 * G_ACC * H, rtol=1e-9)


def test_the_last_steps_equilibration_is_kept_while_it_balances_the_step():
    # The guess carries the equilibration factors of the LCP its basis solved; the next
    # step on the same contacts checks them on its own LCP (one pass) and keeps them
    # when they still balance it, instead of new sweeps. Factors that balance the LCP
    # equally, (2 d1, d2 / 2), give the same equilibrated LCP, so the answer is the
    # same bits and those factors are kept; factors that do not balance it (8 d1) are
    # replaced by the sweeps' own, with the same answer.
    import dataclasses

    problem, J, Minv = _boxes_apart(6, drift=0.2)
    k, l, d = problem.num_contacts, problem.num_limits, 8
    model = make_model("pyramid", ModelSettings())
    first = model.solve(problem)  # (the search: no factors to carry)
    assert first.guess.equilibration is None
    second = model.solve(problem, first.guess)
    g = second.guess
    assert second.report.info["warm_source"] == "previous_step"
    assert g.equilibration.shape == (2, k + l + k * d + k)
    # known (powers of two) exactly for the normals of the contacts its LCP kept
    kept = g.basic_a[:k]
    np.testing.assert_array_equal(g.equilibration[:, :k] > 0.0, np.tile(kept, (2, 1)))
    third = model.solve(problem, g)
    np.testing.assert_array_equal(third.guess.equilibration, g.equilibration)
    scaled = g.equilibration * np.array([[2.0], [0.5]])
    same = model.solve(problem, dataclasses.replace(g, equilibration=scaled))
    np.testing.assert_array_equal(same.guess.equilibration, scaled)  # kept
    np.testing.assert_array_equal(same.f, third.f)
    unbalanced = g.equilibration * np.array([[8.0], [1.0]])
    redone = model.solve(problem, dataclasses.replace(g, equilibration=unbalanced))
    np.testing.assert_array_equal(redone.guess.equilibration, g.equilibration)  # new sweeps
    np.testing.assert_array_equal(redone.f, third.f)
    for sol in (third, same, redone):
        assert sol.report.info["warm_source"] == "previous_step" and sol.report.certified


def test_degenerate_turned_pyramids_retry_on_the_contact_frames(monkeypatch):
    # Recorded from config/hoist.yaml (t = 2.730 s): two contacts of the chain on the rod
    # whose six rows have rank 4. With each pyramid turned to its contact's slip (1.73 and
    # 0 rad) every pivoting method ends on tiny pivots; the model then solves with the
    # pyramids on the contact frames and keeps the friction instead of falling back to
    # the frictionless impulse.
    from contact_lcp.contact import pyramid
    from contact_lcp.contact.problem import ContactProblem

    with np.load("test/data/hoist_turned_pyramids.npz") as f:
        problem = ContactProblem.from_arrays(f)
    model = make_model("pyramid", ModelSettings())
    # the turns as computed before round-off turns were snapped (next test): the search
    # fails on them, and the retry must keep the friction
    turned = np.array([1.73237727, -1.69749726e-08])

    def first_rung(*args):  # no basis to try (no guess), only these turns
        out = real(*args)
        assert out[0] == pyramid.NO_BASIS
        return (*out[:11], turned, *out[12:])  # (the angles: its twelfth value)

    real = pyramid.first_rung
    monkeypatch.setattr(pyramid, "first_rung", first_rung)
    sol = model.solve(problem)
    assert sol.report.outcome is Outcome.SOLVED and sol.report.applied == "pyramid"
    assert sol.report.certified and sol.report.fallbacks == 0
    # The turned LCP's search fails; solve()'s retry on the powers-of-two scaling certifies
    # it (3e-18 off: the impulse of the contact frames' pyramids) since the search accepts
    # a basis only when every row certifies. When it did not, the model's retry on the
    # contact frames kept the friction.
    assert sol.report.info.get("edge_frame") in (None, "contact frame (retry)")
    f = sol.f.reshape(2, 3)
    assert np.all(f[:, 0] >= 0.0)  # pushes, never pulls
    assert np.all(np.hypot(f[:, 1], f[:, 2]) <= problem.mu * f[:, 0] * (1 + 1e-9))  # in the cone


def test_round_off_pyramid_turns_are_snapped_to_the_contact_frame():
    # The hoist's two dependent contacts (test above) with the turns the model computed
    # at t = 2.729 s: 1.732 rad and -1.7e-8 rad (a friction direction of round-off size
    # off t1). That 1e-8 mixes the tangent rows so that exactly dependent rows become
    # nearly dependent: the search ends on tiny pivots. Snapped to 0 it certifies.
    from contact_lcp.contact.lcp_builder import build_contact_lcp
    from contact_lcp.contact.problem import ContactProblem
    from contact_lcp.contact.pyramid_warm import ANGLE_SNAP, edge_angles as _edge_angles
    from contact_lcp.lcp import solve

    with np.load("test/data/hoist_turned_pyramids.npz") as f:
        problem = ContactProblem.from_arrays(f)

    def robust(angle):
        lcp = build_contact_lcp(problem.G, problem.u, problem.mu, num_directions=8,
                                normal_bias=problem.bias, edge_angle=np.asarray(angle))
        return solve(lcp.M, lcp.q, "robust")

    # the search on the equilibrated LCP fails: its first path does not certify (and no
    # retry of solve() rescues it for certain: the powers-of-two retry's answer has rows
    # that the per-row verdict rejects)
    unsnapped = robust([1.73237727, -1.69749726e-08])
    assert not unsnapped.success or unsnapped.info.get("first_status") is not None
    # the model's angles: the last friction directions in W, turned 1.732 rad and -1.7e-8
    R = problem.R_WC
    turns = np.array([1.73237727, -1.69749726e-08])
    last_dir = np.array([np.cos(a) * R[i][:, 1] + np.sin(a) * R[i][:, 2] for i, a in enumerate(turns)])
    period = 2.0 * np.pi / 8
    angle = _edge_angles(np.zeros(6), R, problem.p_W, problem.pair, problem.p_W, problem.pair,
                         last_dir, 1e-6, period, ANGLE_SNAP)
    assert angle[1] == 0.0 and abs(angle[0] - turns[0]) < 1e-12
    assert robust(angle).success
    # a turn by a whole edge spacing plus round-off snaps to that spacing exactly
    last_dir[1] = np.cos(period + 3e-9) * R[1][:, 1] + np.sin(period + 3e-9) * R[1][:, 2]
    angle = _edge_angles(np.zeros(6), R, problem.p_W, problem.pair, problem.p_W, problem.pair,
                         last_dir, 1e-6, period, ANGLE_SNAP)
    assert angle[1] == np.round(angle[1] / period) * period and abs(angle[1] - period) < 1e-8


def particle_on_incline(tilt, azimuth, mass=1.0):
    """One contact of a point mass on the plane z = 0 under gravity tilted by ``tilt`` from
    -z towards ``azimuth`` in that plane [rad]: as on an incline of slope ``tilt``."""
    R = np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]]], dtype=float)  # n = z, t1 = x, t2 = y
    J = R[0].T.copy()  # rows n, t1, t2
    Minv = np.eye(3) / mass
    g = G_ACC * np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth),
                          -np.cos(tilt)])
    v = np.zeros(3)
    return build_problem(H, R, np.zeros((1, 3)), np.zeros(1), np.array([0.0]), J, Minv, v,
                         v + H * g, pair=np.zeros(1, dtype=np.int64))


@pytest.mark.parametrize("ratio, kept", [(0.25, True), (0.9, False)])
def test_a_contact_sticking_well_inside_its_cone_keeps_its_pyramid(ratio, kept):
    # A held particle whose load turns by 20 degrees. Friction at most KEEP_INSIDE
    # cos(pi / 8) = 0.83 of the cone's keeps the pyramid it had (its friction then lies
    # inside a facet, and the next step's basis is the last one); nearer the threshold
    # the pyramid turns to the friction impulse as before (the cone's full threshold in
    # that direction). 0.9 < cos(22.5 deg) / cos(2.5 deg) = 0.925, the turned-away
    # pyramid's support 20 degrees off an edge: the particle is held either way.
    tilt, turn, m = np.radians(10.0), np.radians(20.0), 1.0
    mu = np.tan(tilt) / ratio
    model = make_model("pyramid", ModelSettings())
    angles, guess = [], None
    for azimuth in (0.0, turn, turn):
        problem = particle_on_incline(tilt, azimuth, m)
        problem.mu[:] = mu
        sol = model.solve(problem, guess)
        guess = sol.guess
        angles.append(model._used_angle[0])
        assert sol.report.certified and sol.report.applied == "pyramid"
        # held: no velocity after the impulse, friction m g h sin(tilt) against the load
        v_next = problem.v_free + problem.K @ problem.J.T @ sol.f
        np.testing.assert_allclose(v_next, 0.0, atol=1e-12)
        load = m * G_ACC * H * np.sin(tilt)  # (certified to round-off of the impulses)
        np.testing.assert_allclose(sol.f[1:], -load * np.array([np.cos(azimuth),
                                                                np.sin(azimuth)]),
                                   rtol=1e-9, atol=1e-12 * load)
    # the first pyramid's edge 0 is against the free motion's slip: uphill
    assert np.cos(angles[0] - np.pi) == pytest.approx(1.0)
    assert np.cos(angles[1] - angles[0]) == pytest.approx(1.0)  # the last friction: uphill
    expected = angles[0] if kept else angles[0] + turn
    assert np.cos(angles[2] - expected) == pytest.approx(1.0, abs=1e-12)
    assert sol.report.info["warm_source"] == "previous_step" and "warm_miss" not in sol.report.info


def test_friction_directions_keep_the_edges_of_contacts_inside_the_cone():
    from contact_lcp.contact.pyramid_warm import friction_directions as _friction_directions, keep_inside

    R = np.tile(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float), (3, 1, 1))
    mu = np.full(3, 0.5)
    # normal 1 N.s each: friction 0.1 (inside), 0.5 (on the cone), 0 (none)
    f = np.array([1.0, 0.0, 0.1, 1.0, 0.3, 0.4, 1.0, 0.0, 0.0])
    angle = np.array([0.3, 1.0, 2.0])
    out = _friction_directions(f, R, mu, angle, keep_inside(2 * np.pi / 8))
    np.testing.assert_allclose(out[0], [np.cos(0.3), np.sin(0.3), 0.0], atol=1e-15)  # kept
    np.testing.assert_allclose(out[1], [0.6, 0.8, 0.0], atol=1e-15)  # along its friction
    np.testing.assert_array_equal(out[2], 0.0)


def test_a_missed_last_basis_is_searched_on_the_contacts_it_loaded(monkeypatch):
    # A particle on the ground slides at 0.1 m/s towards a wall 5 mm away (a contact it
    # does not load: it would take 50 ms to get there). With no principal pivot allowed
    # the last (resting) basis misses; the search then runs on the LCP of the contacts
    # the last step loaded (the ground: 10 variables instead of 20), and its answer is
    # accepted since the wall's contact does not close. Coulomb: v_x = v0 - mu g h
    # exactly (the pyramid's first edge is against the slip).
    import contact_lcp.contact.pyramid as pyramid

    m, mu, v0 = 1.0, 0.5, 0.1
    R = np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]],      # ground: n = z, t1 = x, t2 = y
                  [[-1, 0, 0], [0, 1, 0], [0, 0, -1]]], dtype=float)  # wall ahead: n = -x
    J = np.vstack([R[0].T, R[1].T])
    Minv = np.eye(3) / m

    def problem(v):
        v = np.asarray(v, dtype=float)
        return build_problem(H, R, np.zeros((2, 3)), np.array([0.0, 0.005]), np.full(2, mu),
                             J, Minv, v, v + H * np.array([0.0, 0.0, -G_ACC]),
                             pair=np.arange(2, dtype=np.int64))

    model = make_model("pyramid", ModelSettings())
    rest = model.solve(problem([0.0, 0.0, 0.0]))  # at rest: the ground loaded, the wall not
    monkeypatch.setattr(pyramid, "WARM_FLIPS", 0)
    monkeypatch.setattr(pyramid, "WARM_ROWS_PER_FLIP", 10**9)
    p = problem([v0, 0.0, 0.0])
    sol = model.solve(p, rest.guess)
    info = sol.report.info
    assert info["warm_miss"] == "negative slack" and info["dropped_contacts"] == 1
    assert info["lcp_size"] == 10 and sol.report.certified and sol.report.solves == 1
    np.testing.assert_array_equal(sol.f[3:], 0.0)  # nothing at the wall
    v_next = p.v_free + Minv @ J.T @ sol.f
    np.testing.assert_allclose(v_next, [v0 - mu * G_ACC * H, 0.0, 0.0], atol=1e-12)
    # (cold, on both contacts, the same answer)
    cold = make_model("pyramid", ModelSettings(warm_start=False)).solve(p)
    np.testing.assert_allclose(cold.f, sol.f, atol=1e-12)

    # The wall touching (gap 0): the search on the ground alone drives the particle into
    # it, so the wall joins the next search, whose answer stops the particle.
    def touching(v):
        v = np.asarray(v, dtype=float)
        return build_problem(H, R, np.zeros((2, 3)), np.zeros(2), np.full(2, mu), J, Minv, v,
                             v + H * np.array([0.0, 0.0, -G_ACC]),
                             pair=np.arange(2, dtype=np.int64))

    monkeypatch.undo()
    model = make_model("pyramid", ModelSettings())
    rest = model.solve(problem([0.0, 0.0, 0.0]))  # (the ground loaded, the wall far)
    monkeypatch.setattr(pyramid, "WARM_FLIPS", 0)
    monkeypatch.setattr(pyramid, "WARM_ROWS_PER_FLIP", 10**9)
    p = touching([v0, 0.0, 0.0])
    sol = model.solve(p, rest.guess)
    info = sol.report.info
    assert info["drop_rejected"] and info["dropped_contacts"] == 0 and sol.report.solves == 2
    assert sol.report.certified and info["lcp_size"] == 20
    v_next = p.v_free + Minv @ J.T @ sol.f
    np.testing.assert_allclose(v_next, 0.0, atol=1e-12)  # stopped by the wall, held


def test_a_dropped_contact_that_approaches_joins_the_last_basis(monkeypatch):
    # The particle of the test above, at rest on the ground with the wall touching (gap 0,
    # unloaded), then sliding at 0.1 m/s into the wall. The last basis, on the ground
    # alone, slides the particle into the wall; the first rung adds the wall's normal to
    # the basis and solves again in the same compiled call: the particle stops, held by
    # the wall (v = 0 exactly: the wall's normal and the ground's friction share m v0).
    # Without that second solve the step goes to the model's search, which ends on
    # the same velocity.
    import contact_lcp.contact.pyramid as pyramid

    m, mu, v0 = 1.0, 0.5, 0.1
    R = np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]],      # ground: n = z, t1 = x, t2 = y
                  [[-1, 0, 0], [0, 1, 0], [0, 0, -1]]], dtype=float)  # wall: n = -x
    J = np.vstack([R[0].T, R[1].T])
    Minv = np.eye(3) / m

    def problem(v, wall_gap):
        v = np.asarray(v, dtype=float)
        return build_problem(H, R, np.zeros((2, 3)), np.array([0.0, wall_gap]),
                             np.full(2, mu), J, Minv, v,
                             v + H * np.array([0.0, 0.0, -G_ACC]),
                             pair=np.arange(2, dtype=np.int64))

    def step(grow):
        monkeypatch.setattr(pyramid, "WARM_GROW", grow)
        model = make_model("pyramid", ModelSettings())
        rest = model.solve(problem([0.0, 0.0, 0.0], 0.005))  # the ground loaded only
        p = problem([v0, 0.0, 0.0], 0.0)
        sol = model.solve(p, rest.guess)
        assert sol.report.certified and sol.report.fallbacks == 0
        return sol, p.v_free + Minv @ J.T @ sol.f

    sol, v_next = step(pyramid.WARM_GROW)
    assert sol.report.rungs == ("last_basis:solved",) and sol.report.solves == 2
    assert sol.report.info["added_contacts"] == 1 and sol.report.info["dropped_contacts"] == 0
    np.testing.assert_allclose(v_next, 0.0, atol=1e-12)  # stopped by the wall, held
    assert sol.f[3] > 0.0 and np.hypot(*sol.f[1:3]) <= mu * sol.f[0] * (1 + 1e-12)

    searched, v_searched = step(0)
    assert searched.report.rungs[0] == "last_basis:miss"
    assert searched.report.info["warm_miss"] == "a dropped contact approaches"
    np.testing.assert_allclose(v_searched, v_next, atol=1e-12)


def test_the_last_basis_follows_its_contacts_when_others_come_or_go():
    from contact_lcp.contact.pyramid_warm import mapped_flags as _mapped_flags

    # last step: contacts of pairs 5, 5, 7 (and one unilateral row); this step: 7, 5, 9
    last_keys = np.array([5, 5, 7])
    last_p = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 2, 0]])
    last_a = np.array([True, False, True, True])
    last_b = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)
    last_lam = np.array([False, False, True])
    pair = np.array([7, 5, 9])
    p = np.array([[0.0, 2.1, 0], [0.9, 0, 0], [0.0, 0, 0]])
    a, b, lam, new = _mapped_flags(pair, p, last_keys, last_p, last_a, last_b, last_lam)
    assert new == 1  # pair 9
    np.testing.assert_array_equal(a, [True, False, False, True])  # nearest of pair 5: the 2nd
    np.testing.assert_array_equal(b, [[0, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(lam, [True, False, False])

    # A particle resting on the ground; then a wall's contact 5 mm away joins the step:
    # the last basis, moved onto the new contacts, still solves it (no search), the wall
    # carries nothing and the particle stays at rest.
    R = np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]],
                  [[-1, 0, 0], [0, 1, 0], [0, 0, -1]]], dtype=float)
    v = np.zeros(3)
    v_free = v + H * np.array([0.0, 0.0, -G_ACC])
    ground = build_problem(H, R[:1], np.zeros((1, 3)), np.zeros(1), np.full(1, 0.5),
                           R[0].T.copy(), np.eye(3), v, v_free, pair=np.array([0]))
    both = build_problem(H, R, np.array([[0.0, 0, 0], [0.05, 0, 0.05]]), np.array([0.0, 0.005]),
                         np.full(2, 0.5), np.vstack([R[0].T, R[1].T]), np.eye(3), v, v_free,
                         pair=np.array([0, 1]))
    model = make_model("pyramid", ModelSettings())
    sol = model.solve(both, model.solve(ground).guess)
    assert sol.report.info["warm_source"] == "previous_step" and sol.report.solves == 1
    assert sol.report.info["dropped_contacts"] == 1 and sol.report.certified
    np.testing.assert_allclose(sol.f, [G_ACC * H, 0, 0, 0, 0, 0], rtol=1e-12, atol=1e-15)
    # three new contacts at once (a landing pile): more than max(2, k / 8) are new, and
    # the step starts afresh (the two-step solve)
    R4 = np.concatenate([R, R[1:], R[1:]])
    many = build_problem(H, R4, np.zeros((4, 3)), np.array([0.0, 0.005, 0.006, 0.007]),
                         np.full(4, 0.5), np.vstack([r.T for r in R4]), np.eye(3), v, v_free,
                         pair=np.array([0, 1, 2, 3]))
    sol = model.solve(many, model.solve(ground).guess)
    assert "mapped_contacts" not in sol.report.info
    assert sol.report.info["warm_source"] == "frictionless" and sol.report.certified
    np.testing.assert_allclose(sol.f[:3], [G_ACC * H, 0, 0], rtol=1e-12, atol=1e-15)


def _spy_solves(monkeypatch):
    """Record ``(n, initial basis given, pivot_budget, pivots, paths)`` of each solve the
    pyramid model makes (the frictionless one goes through its own module)."""
    from contact_lcp.contact import pyramid

    calls, real = [], pyramid.lcp_rung

    def spy(M, q, method, opts):
        res = real(M, q, method, opts)
        calls.append((q.shape[0], "initial_basis" in opts, opts.get("pivot_budget"),
                      res.pivots, res.info.get("paths")))
        return res

    monkeypatch.setattr(pyramid, "lcp_rung", spy)
    return calls


def test_a_large_frictional_solve_shares_one_pivot_budget(monkeypatch):
    """A contact solve whose frictional LCP has ``LAST_BASIS_MAX_ROWS`` rows or more gives
    all its frictional solves one pivot budget; when they spend it the step falls back
    to the certified relaxed impulse instead of walking every path again (the pour's
    failing steps took about an hour)."""
    from contact_lcp.contact import pyramid

    problem, _, _ = _boxes_apart(50, drift=0.01)  # 200 contacts, 2 000 rows, sliding
    calls = _spy_solves(monkeypatch)
    sol = make_model("pyramid", ModelSettings()).solve(problem)
    assert sol.report.outcome is Outcome.SOLVED and sol.report.applied == "pyramid"
    assert calls[0][2] == pyramid.LARGE_PIVOTS_PER_ROW * 2000
    needed = calls[-1][3]  # the warm path's pivots (622)
    calls.clear()
    budget = needed // 2
    sol = make_model("pyramid", ModelSettings(solver_options={"pivot_budget": budget})).solve(
        problem)
    assert sol.report.outcome is Outcome.FALLBACK and sol.report.applied == "relaxed"
    assert sol.report.certified and sol.report.method == "qp:clarabel"  # (2 000 rows)
    assert len(calls) >= 2 and sum(c[3] for c in calls) == budget
    assert [c[2] for c in calls] == [budget - sum(c[3] for c in calls[:i])
                                     for i in range(len(calls))]


def test_a_failed_warm_solve_that_walked_the_cold_paths_is_not_repeated_cold(monkeypatch):
    """Above robust's dense limit a failed warm-started solve has already walked the
    sparse cold paths, deterministically: the model goes on to its next retry instead of
    walking them again cold."""
    from contact_lcp.lcp import revised, robust

    problem, _, _ = _boxes_apart(50, drift=0.01)
    real = revised.solve_revised
    monkeypatch.setattr(revised, "solve_revised",  # every sparse path fails
                        lambda *a, **kw: real(*a, **dict(kw, max_pivots=100)))
    monkeypatch.setattr(robust, "DENSE_MAX_N", 100)
    calls = _spy_solves(monkeypatch)
    sol = make_model("pyramid", ModelSettings()).solve(problem)
    assert sol.report.outcome is Outcome.FALLBACK
    assert all("revised:max_pivots" in c[4] for c in calls)
    # the warm-started frictional LCP and the contact-frame retry; no cold retry between
    assert [c[1] for c in calls] == [True, True]
    assert sol.report.info["edge_frame"] == "contact frame (retry)"


def test_the_step_report_lists_the_sparse_paths_its_solves_walked():
    """``info['lcp_paths']``: every robust sparse path of the step's solves, in order,
    with its outcome and length (how a slow step of the pour spent its pivots)."""
    from contact_lcp.contact.ladder import sparse_paths as _sparse_paths
    from contact_lcp.lcp import LCPResult, LCPStatus

    def result(paths, lengths):
        return LCPResult(np.zeros(1), np.zeros(1), LCPStatus.SOLVED, "robust", 0, 0.0,
                         {"paths": paths, "path_lengths": lengths})

    info = {}
    _sparse_paths([result(["revised:solved"], [40]), None,
                   result(["revised-warm:max_pivots", "revised:solved"], [5, 7])], info)
    assert info["lcp_paths"] == ["revised:solved:40", "revised-warm:max_pivots:5",
                                 "revised:solved:7"]
    info = {}
    _sparse_paths([result([], [])], info)  # small LCPs: no sparse path, no key
    assert "lcp_paths" not in info
