"""contact.force_distribution: min_norm (contact_lcp/contact/min_norm.py).

Redundant contact has many impulse solutions with one velocity (Enzenhöfer, Teichmann &
Kövecses, S2). Under ``min_norm`` the pyramid model applies the least-norm one: a box on
its four coplanar corners and a frame on evenly spaced legs carry equal shares, the
forces do not depend on the order the contacts come in, and the velocities are those of
the pivoting answer (``any``).
"""

import dataclasses

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.contact.problem import build_problem
from contact_lcp.dynamics import RobotSpec
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.legged_frame import legged_frame_urdf

H, G = 1e-3, 9.81
BOX_MASS, FRAME_MASS = 2.0, 10.0
YAW_90 = (0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5))


def box_sim(distribution, quat=(0.0, 0.0, 0.0, 1.0), velocity=(0.0,) * 6):
    """A 0.2 x 0.2 x 0.1 m box of 2 kg resting on the ground (4 corner contacts)."""
    return Simulator(scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.6},
        "contact": {"force_distribution": distribution},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": BOX_MASS,
                    "pose": [0, 0, 0.05, *quat], "velocity": list(velocity),
                    "friction": 0.6}]}))


def frame_sim(n, distribution):
    """Seed S2's frame on ``n`` legs evenly spaced on a circle (one contact per foot)."""
    scene = scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.8},
        "contact": {"force_distribution": distribution},
        "robots": [{"name": "frame", "urdf": "unused.urdf", "floating_base": True,
                    "base_pose": [0, 0, 0.32, 0, 0, 0, 1], "controller": {"type": "effort"}}],
    })
    r = scene.robots[0]
    spec = RobotSpec("frame", urdf_string=legged_frame_urdf(n, mass=FRAME_MASS),
                     floating_base=True, base_pose=(0, 0, 0.32, 0, 0, 0, 1))
    return Simulator(scene.replace(robots=(dataclasses.replace(r, robot=spec),)))


def settle(sim, steps=40):
    """Run ``steps`` steps; the last step's (problem, solution, guess it started from)."""
    for _ in range(steps - 1):
        sim.step()
    guess = sim.stepper.data.guess
    sim.step()
    data = sim.stepper.data
    return data.problem, data.solution, guess


def world_forces(problem, f):
    """(k, 3) contact impulses in W [N.s] keyed by contact point (rounded to 1 um)."""
    k = problem.num_contacts
    F = np.einsum("kij,kj->ki", problem.R_WC, f[:3 * k].reshape(k, 3))
    return {tuple(np.round(p, 6)): F[i] for i, p in enumerate(problem.p_W)}


def velocity_after(problem, f):
    return problem.v_free + problem.K @ (problem.J.T @ f)


def solve_with(problem, guess, distribution, method="robust"):
    model = make_model("pyramid", ModelSettings(method=method, fallback=False,
                                                force_distribution=distribution))
    return model.solve(problem, guess)


def test_a_box_on_four_corners_gets_four_equal_shares():
    problem, sol, _ = settle(box_sim("min_norm"))
    share = BOX_MASS * G * H / 4
    assert problem.num_contacts == 4
    assert sol.distribution == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    assert np.max(np.abs(np.delete(sol.f, np.s_[0::3]))) < 1e-6 * share  # no friction needed


def test_a_yawed_box_gets_the_same_forces_at_the_same_corners():
    # yawed by 90 degrees the corners are the same points, found in another order
    p0, s0, _ = settle(box_sim("min_norm"))
    p1, s1, _ = settle(box_sim("min_norm", YAW_90))
    assert not np.array_equal(p0.p_W, p1.p_W)  # the order did change
    F0, F1 = world_forces(p0, s0.f), world_forces(p1, s1.f)
    assert sorted(F0) == sorted(F1)
    share = BOX_MASS * G * H / 4
    for corner, F in F0.items():
        np.testing.assert_allclose(F1[corner], F, rtol=0, atol=1e-6 * share, err_msg=str(corner))


@pytest.mark.parametrize("n", [4, 6])
def test_a_legged_frame_gets_equal_leg_shares_whatever_the_contact_order(n):
    sim = frame_sim(n, "min_norm")
    problem, sol, guess = settle(sim)
    share = FRAME_MASS * G * H / n
    assert problem.num_contacts == n
    assert sol.distribution == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    # the same contacts in other orders (legs mirrored and shuffled): the same forces
    reference = world_forces(problem, sol.f)
    rng = np.random.default_rng(n)
    for perm in (np.arange(n)[::-1], rng.permutation(n)):
        rows = (3 * perm[:, None] + np.arange(3)).ravel()
        permuted = build_problem(H, problem.R_WC[perm], problem.p_W[perm], problem.phi[perm],
                                 problem.mu[perm], problem.J[rows], problem.K, problem.v,
                                 problem.v_free, pair=problem.pair[perm])
        other = solve_with(permuted, None, "min_norm")
        assert other.distribution == "min_norm"
        for leg, F in world_forces(permuted, other.f).items():
            np.testing.assert_allclose(F, reference[leg], rtol=0, atol=1e-6 * share)


@pytest.mark.parametrize("make", [lambda: box_sim("any"), lambda: frame_sim(4, "any"),
                                  lambda: box_sim("any", velocity=(1.0, 0.3, 0, 0, 0, 0))],
                         ids=["box", "frame4", "sliding_box"])
def test_min_norm_keeps_the_velocities_and_certifies(make):
    problem, _, guess = settle(make(), steps=5)
    a = solve_with(problem, guess, "any")
    m = solve_with(problem, guess, "min_norm")
    assert m.distribution in ("min_norm", "unique")
    np.testing.assert_allclose(velocity_after(problem, m.f), velocity_after(problem, a.f),
                               rtol=0, atol=1e-9)
    assert np.linalg.norm(m.f) <= np.linalg.norm(a.f) * (1 + 1e-9)
    # normal complementarity of the applied impulse: no contact pulls or approaches, a
    # loaded one does not separate (1e-9 m/s)
    assert np.all(m.f[0::3] >= 0.0)
    w_n = (problem.u + problem.G @ m.f)[0::3] + problem.bias
    assert np.all(w_n >= -1e-9) and np.all(w_n[m.f[0::3] > 0.0] <= 1e-9)


def test_a_sliding_box_keeps_its_full_friction_at_every_loaded_corner():
    problem, sol, _ = settle(box_sim("min_norm", velocity=(1.0, 0.0, 0, 0, 0, 0)), steps=5)
    k = problem.num_contacts
    f = sol.f[:3 * k].reshape(k, 3)
    loaded = f[:, 0] > 1e-9 * f[:, 0].max()
    assert loaded.sum() >= 3
    np.testing.assert_allclose(np.hypot(f[loaded, 1], f[loaded, 2]), 0.6 * f[loaded, 0],
                               rtol=1e-6)


def test_any_is_the_ladders_answer_and_min_norm_keeps_its_warm_start():
    problem, _, guess = settle(box_sim("any"))
    a = solve_with(problem, guess, "any")
    m = solve_with(problem, guess, "min_norm")
    assert a.distribution is None
    assert not np.allclose(a.f, m.f)  # the vertex is not the even distribution
    for field in dataclasses.fields(a.guess):
        x, y = getattr(a.guess, field.name), getattr(m.guess, field.name)
        assert (x is None and y is None) or np.array_equal(x, y), field.name


def test_a_bad_force_distribution_is_named_with_its_choices():
    with pytest.raises(SceneError, match=r"contact\.force_distribution.*min_norm.*even"):
        box_sim("even")
    with pytest.raises(SceneError, match=r"force_distribution.*relaxed"):
        make_model("relaxed", ModelSettings(force_distribution="min_norm"))


def test_the_frictionless_model_gives_equal_shares_too():
    sim = box_sim("min_norm")
    sim = Simulator(sim.scene.replace(contact=dataclasses.replace(sim.scene.contact,
                                                                  model="frictionless")))
    problem, sol, _ = settle(sim)
    assert sol.report.applied == "frictionless"
    assert sol.distribution == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], BOX_MASS * G * H / 4, rtol=1e-2)
    a = make_model("frictionless", ModelSettings(fallback=False)).solve(problem)
    np.testing.assert_allclose(velocity_after(problem, sol.f), velocity_after(problem, a.f),
                               rtol=0, atol=1e-9)


def test_the_motion_is_the_same_whether_the_forces_are_read_or_not():
    # the step applies the pivoting answer (the min-norm forces share its velocities),
    # and the forces are computed only when read: any, min_norm read, min_norm unread
    # move alike bit for bit
    sims = [box_sim(d, velocity=(0.4, 0.1, 0, 0, 0, 0.5)) for d in ("any", "min_norm",
                                                                     "min_norm")]
    for _ in range(60):
        for s in sims:
            s.step()
        table, _, _ = sims[1].contact_table()  # reads the forces of the second one
        assert np.all(np.isfinite(table))
    for s in sims[1:]:
        np.testing.assert_array_equal(s.q, sims[0].q)
        np.testing.assert_array_equal(s.v, sims[0].v)
    last = sims[1].stepper.data.solution
    assert last.distribution in ("min_norm", "unique")


@pytest.mark.parametrize("make,total_of,mass", [
    (lambda: frame_sim(6, "min_norm"), "contact_force_total", FRAME_MASS),
    (lambda: box_sim("min_norm"), "world_contact_force", BOX_MASS)],
    ids=["frame_on_six_legs", "free_box"])
def test_the_applied_impulses_carry_the_read_forces_total(make, total_of, mass):
    # The least-norm forces share the pivoting answer's velocities, so its J' f: on a
    # floating base (the frame's robot) or a free body (the box, all the world touches)
    # the same total force, though the supports' shares differ. The CLI summary's and the
    # sweeps' mean forces sum the applied impulses each step (no least-norm solve).
    sim = make()
    settle(sim)
    rec = sim._last
    applied, read = rec.applied_impulse_C, rec.impulse_C
    assert np.max(np.abs(applied - read)) > 1e-3 * np.max(read[:, 0])  # other shares
    total = getattr(sim, total_of)()
    assert total[2] == pytest.approx(mass * G, rel=1e-3)
    # (round-off of the two J' f: ~1e-15 of the weight each; asserted to 1e-9)
    np.testing.assert_allclose(getattr(sim, total_of)(applied=True), total, rtol=0,
                               atol=1e-9 * total[2])


def test_a_recorded_step_reads_its_forces_from_the_distribution():
    sim = box_sim("min_norm")
    settle(sim)
    sol, rec = sim.stepper.data.solution, sim._last
    k = len(rec.contacts)
    assert sol.distributes
    np.testing.assert_array_equal(rec.impulse_C, sol.f[:3 * k].reshape(k, 3))
    np.testing.assert_allclose(rec.impulse_C[:, 0], BOX_MASS * G * H / 4, rtol=1e-2)


@pytest.mark.parametrize("make,steps", [
    (lambda: box_sim("min_norm"), 5), (lambda: frame_sim(6, "min_norm"), 5),
    (lambda: box_sim("min_norm", velocity=(1.0, 0.3, 0, 0, 0, 0)), 5),
    # pitching at 3 rad/s: the two corners lifting would pull in the least-norm point of
    # the face's equalities, so the compiled active set zeroes them (they carry nothing)
    (lambda: box_sim("min_norm", velocity=(0, 0, 0, 0, 3.0, 0)), 1)],
    ids=["box", "frame6", "sliding_box", "pitching_box"])
def test_the_compiled_least_norm_point_is_the_face_qps(make, steps, monkeypatch):
    # the compiled common case (min_norm_kernel) against the face's QP (Clarabel and
    # its polish), which it skips when it applies; the motion is the same either way
    import contact_lcp.contact.min_norm as mn
    from contact_lcp.contact.min_norm_kernel import APPLIED, NEEDS_QP

    codes, compiled = [], mn.least_norm_face
    monkeypatch.setattr(mn, "least_norm_face",
                        lambda *a: codes.append(compiled(*a)[0]) or compiled(*a))
    _, kernel, _ = settle(make(), steps=steps)
    assert kernel.distribution == "min_norm" and codes[-1] == APPLIED
    monkeypatch.setattr(mn, "least_norm_face", lambda *a: (NEEDS_QP, a[6]))
    _, qp, _ = settle(make(), steps=steps)
    assert qp.distribution == "min_norm"
    np.testing.assert_array_equal(kernel.solved, qp.solved)
    np.testing.assert_allclose(kernel.f, qp.f, rtol=0, atol=1e-7 * np.max(np.abs(qp.f)))
    if steps == 1:  # the pitching box: two corners zeroed, two loaded
        assert np.sum(kernel.f[0::3] == 0.0) == 2 and np.sum(kernel.f[0::3] > 0.0) == 2


def test_islands_solved_apart_give_each_their_least_norm_forces():
    # eleven boxes apart on the ground: 44 contacts, more than auto's pyramid size, so
    # the step solves eleven islands and merges them; read, each island's forces are its
    # least-norm ones (four equal shares), and the motion is the same as under any
    def boxes(distribution):
        return Simulator(scene_from_dict({
            "time_step": H, "ground": {"height": 0.0, "friction": 0.6},
            "contact": {"model": "auto", "force_distribution": distribution},
            "bodies": [{"name": f"box{i}", "shape": "box", "size": [0.2, 0.2, 0.1],
                        "mass": BOX_MASS, "pose": [0.5 * i, 0, 0.05, 0, 0, 0, 1]}
                       for i in range(11)]}))

    sim, ref = boxes("min_norm"), boxes("any")
    problem, sol, _ = settle(sim)
    settle(ref)
    assert problem.num_contacts == 44
    assert sol.report.info["islands"] == 11 and sol.distributes
    np.testing.assert_allclose(sol.f[0::3], BOX_MASS * G * H / 4, rtol=1e-2)
    assert sol.distribution == "min_norm"
    np.testing.assert_array_equal(sim.q, ref.q)


def mirrored_normal_forces(distribution, steps=200):
    """The bundled humanoid (a mirror-symmetric URDF standing on y = 0) after ``steps``
    steps: pairs of its contacts that are mirror images across y = 0, and each contact's
    normal force [N]."""
    from contact_lcp.sim import load_scene

    scene = load_scene("config/humanoid_stand.yaml")
    scene = scene.replace(contact=dataclasses.replace(scene.contact,
                                                      force_distribution=distribution))
    sim = Simulator(scene)
    for _ in range(steps):
        sim.step()
    table = sim.contact_table()[0]
    p, normal = table[:, 0:3], np.einsum("ij,ij->i", table[:, 3:6], table[:, 6:9])
    pairs = []
    for i in np.flatnonzero(p[:, 1] > 0.0):
        gap = np.linalg.norm(p - p[i] * np.array([1.0, -1.0, 1.0]), axis=1)
        j = int(np.argmin(gap))
        assert gap[j] < 1e-6, "every sole point has a mirror image"
        pairs.append((i, j))
    return pairs, normal


def test_a_symmetric_robots_mirrored_sole_points_carry_equal_forces():
    # The humanoid's two soles, four points each, are mirror images; so is its standing
    # posture. Its weight shared by least norm puts equal forces on mirrored points
    # (measured: 1e-12 of the weight apart; asserted to 1e-4); the pivoting's own vertex
    # (any) loads them unevenly (measured: 22 % of the weight between one pair).
    pairs, normal = mirrored_normal_forces("min_norm")
    assert len(pairs) == 4
    worst = max(abs(normal[i] - normal[j]) for i, j in pairs) / normal.sum()
    assert worst < 1e-4
    pairs, normal = mirrored_normal_forces("any")
    assert max(abs(normal[i] - normal[j]) for i, j in pairs) / normal.sum() > 0.01


@pytest.mark.parametrize("seed", range(12))
def test_the_faces_contacts_are_the_loaded_and_the_touching_ones(seed):
    # face_contacts (compiled) against its definition in numpy: a contact joins the face
    # when f loads it or its normal velocity w_n is within the touch bound; a NaN in u
    # makes the bound NaN (no contact touches), and the velocity tolerance is at least
    # VELOCITY_TOL
    from contact_lcp.contact.min_norm import TOUCH_FACTOR, VELOCITY_TOL
    from contact_lcp.contact.min_norm_kernel import face_contacts, face_velocities

    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, 9))
    f = np.where(rng.random(3 * k) < 0.5, 0.0, rng.random(3 * k))
    vel = np.where(rng.random(3 * k) < 0.4, 0.0, 1e-6 * rng.standard_normal(3 * k))
    u, bias = rng.standard_normal(3 * k), 1e-7 * rng.standard_normal(k)
    v_free = rng.standard_normal(5) * (10.0 if seed % 2 else 0.1)
    if k and seed % 3 == 0:
        u[rng.integers(3 * k)] = np.nan
    S, vel_tol = face_contacts(f, vel, u, bias, v_free, k, TOUCH_FACTOR, VELOCITY_TOL)
    touch = TOUCH_FACTOR * (1.0 + np.max(np.abs(u), initial=0.0))
    want = np.flatnonzero((f[0::3] > 0.0) | (vel[0::3] + bias <= touch))
    np.testing.assert_array_equal(S, want)
    assert vel_tol == VELOCITY_TOL * max(1.0, np.max(np.abs(v_free)))
    # the force read's call on dense rows: the velocities u + G f, then the same contacts
    G = rng.standard_normal((3 * k, 3 * k))
    S2, vel2, tol2 = face_velocities(f, G, u, bias, v_free, k, TOUCH_FACTOR, VELOCITY_TOL)
    np.testing.assert_allclose(vel2, u + G @ f, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(
        S2, face_contacts(f, vel2, u, bias, v_free, k, TOUCH_FACTOR, VELOCITY_TOL)[0])
    assert tol2 == vel_tol


@pytest.mark.parametrize("d", [3, 4, 8, 16])
def test_a_frictions_edge_sum_is_its_gauge_in_the_pyramids_polygon(d):
    # the active set's cone test reads sum(b) of edge_split's edge impulses, computed
    # without them as the friction's gauge in the regular polygon of the edges (pyramids
    # have d >= 3 sides, scene_loader): the same number to round-off, whatever the
    # pyramid's turn and the friction (on an edge, on a facet's middle, zero)
    from contact_lcp.contact.min_norm_kernel import _edge_sum, edge_split

    rng = np.random.default_rng(d)
    for trial in range(300):
        th = rng.uniform(-4.0, 4.0) + 2.0 * np.pi * np.arange(d) / d
        c, s = np.cos(th), np.sin(th)
        t = rng.standard_normal(2) * 10.0 ** rng.uniform(-6, 3)
        if trial % 3 == 1:  # along an edge, or along a facet's bisector
            e = int(rng.integers(d))
            t = np.hypot(*t) * (np.array([c[e], s[e]]) if trial % 2 else
                                np.array([c[e] + c[(e + 1) % d], s[e] + s[(e + 1) % d]]))
        if trial == 0:
            t = np.zeros(2)
        b = np.empty(d)
        edge_split(t[0], t[1], c, s, b)
        got = _edge_sum(t[0], t[1], c, s)
        assert abs(got - b.sum()) <= 1e-14 * max(np.hypot(*t), 1e-300), (d, t)


def test_a_sole_point_past_two_facets_is_held_on_their_edge(monkeypatch):
    # Talos standing, 3 ms in (test/data/talos_face_on_an_edge.npz: the face kernel's
    # arguments): a sole point's least-norm friction lies on an edge of its pyramid.
    # Held on one facet, its friction left across the other one, and the active set
    # alternated between the two facets (or between zeroed and free) until the face's QP
    # took over. Held on the edge, the compiled kernel ends, on a point at least as small
    # as the QP's and the same to the QP's active-set tolerance.
    from pathlib import Path
    from types import SimpleNamespace

    import contact_lcp.contact.min_norm as mn
    from contact_lcp.contact.min_norm_kernel import (APPLIED, NEEDS_QP, OPEN_FACTOR,
                                                    least_norm_face)

    a = dict(np.load(Path(__file__).parent / "data" / "talos_face_on_an_edge.npz"))
    args = [a[n] for n in ("G", "u", "bias", "J", "K", "mu", "f", "vel", "S")] + \
        [int(a["l"]), int(a["d"]), a["angle"], float(a["vel_tol"]), OPEN_FACTOR]
    code, f = least_norm_face(*args)
    assert code == APPLIED
    problem = SimpleNamespace(G=a["G"], u=a["u"], bias=a["bias"], J=a["J"], K=a["K"],
                              mu=a["mu"], v_free=np.zeros(a["K"].shape[0]),
                              num_contacts=a["mu"].shape[0], num_limits=int(a["l"]))
    monkeypatch.setattr(mn, "least_norm_face", lambda *x: (NEEDS_QP, x[6]))
    ref, note = mn.min_norm_impulse(problem, a["f"], int(a["d"]), a["angle"])
    assert note == "min_norm"
    assert np.linalg.norm(f) <= np.linalg.norm(ref) * (1.0 + 1e-12)
    np.testing.assert_allclose(f, ref, rtol=0.0, atol=1e-6 * np.abs(ref).max())


def _resting_points(points, mass=BOX_MASS, bodies=None):
    """The contact problem of free bodies of ``mass`` (unit inertia diagonal, 0.1 kg m^2)
    at rest under gravity on ground contacts at ``points`` (body-frame offsets; normal
    +z), contact ``i`` on body ``bodies[i]`` (default: all on body 0)."""
    bodies = [0] * len(points) if bodies is None else bodies
    nb, k = max(bodies) + 1, len(points)
    K = np.kron(np.eye(nb), np.diag([1.0 / mass] * 3 + [10.0] * 3))
    R = np.array([[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]] * k)  # (n, t1, t2)
    J = np.zeros((3 * k, 6 * nb))
    for i, (r, b) in enumerate(zip(np.asarray(points, dtype=float), bodies)):
        for t in range(3):
            J[3 * i + t, 6 * b:6 * b + 3] = R[i][:, t]
            J[3 * i + t, 6 * b + 3:6 * b + 6] = np.cross(r, R[i][:, t])
    v_free = np.tile([0.0, 0.0, -G * H, 0.0, 0.0, 0.0], nb)
    return build_problem(H, R, np.asarray(points, dtype=float), np.zeros(k), np.full(k, 0.6),
                         J, K, np.zeros(6 * nb), v_free)


def test_a_face_whose_contact_rows_have_full_rank_is_unique_and_a_rank_deficient_one_is_not():
    # two bodies on one point each: G (6 x 6) has full rank, so the face holds one impulse
    # (found from G alone, before the face's LCP); the applied answer stays, bit for bit
    one_each = _resting_points([(0.0, 0.0, -0.05), (0.0, 0.0, -0.05)], bodies=[0, 1])
    sol = solve_with(one_each, None, "min_norm")
    assert sol.distribution == "unique"
    np.testing.assert_array_equal(sol.f, sol.solved)
    # one body on two points: as many rows as velocities (6), but a spin about the line
    # through the points is not seen (rank 5): the face is searched, and each point
    # carries half the weight
    two_points = _resting_points([(-0.1, 0.0, -0.05), (0.1, 0.0, -0.05)])
    sol = solve_with(two_points, None, "min_norm")
    assert sol.distribution == "min_norm"
    f = sol.f.reshape(2, 3)
    np.testing.assert_allclose(f[:, 0], BOX_MASS * G * H / 2, rtol=1e-9)
    np.testing.assert_allclose(f[:, 1:], 0.0, atol=1e-12 * BOX_MASS * G * H)


@pytest.mark.parametrize("make", [
    lambda: Simulator.from_file("config/humanoid_stand.yaml"),
    lambda: Simulator.from_file("config/box_stack.yaml"),
    lambda: Simulator.from_file("config/tower_5.yaml"),
    lambda: box_sim("min_norm", velocity=(1.0, 0.3, 0, 0, 0, 0))],
    ids=["humanoid", "box_stack", "tower", "sliding_box"])
def test_a_plain_face_is_told_without_its_lcp_and_gets_the_lcps_forces(make, monkeypatch):
    # Standing soles, resting stacks, a sliding box: every row of the face plainly open
    # (|w| within OPEN_FACTOR of the scale) or plainly closed (beyond CLOSED_FACTOR), so
    # the kernel reads the face from w and certifies by velocities and pyramids, without
    # the face's LCP. Asked of the face's LCP and its verdict instead (a negative factor),
    # every face of 60 steps gets the same forces, bit for bit: the same rows open, the
    # same active set.
    import contact_lcp.contact.min_norm as mn
    from contact_lcp.contact.min_norm_kernel import APPLIED, OPEN_FACTOR, least_norm_face

    faces = []
    monkeypatch.setattr(mn, "least_norm_face",
                        lambda *a: faces.append(a) or least_norm_face(*a))
    sim = make()
    for _ in range(60):
        sim.step()
        sim.contact_arrays()  # (the forces read: the face solved)
    plain = 0
    for a in faces:
        fast_code, fast = least_norm_face(*a[:-1], OPEN_FACTOR)
        code, slow = least_norm_face(*a[:-1], -1.0)
        assert fast_code == code
        np.testing.assert_array_equal(fast, slow)
        plain += code == APPLIED and _plain(*a[:-1])
    assert len(faces) == 60 and plain >= 30


def test_a_joint_leaving_its_limit_keeps_the_face_plain():
    # Talos standing at t = 4.5 s (test/data/talos_face_limit_leaving.npz, the face of
    # its 14 sole points and 2 joint-limit rows): both limit rows carry no impulse and
    # separate at ~1e-7 of the scale, between OPEN_FACTOR and CLOSED_FACTOR. A joint
    # leaving its stop is closed from OPEN_FACTOR on, so the face stays plain (read from
    # w, certified by velocities and pyramids); the face's LCP and its verdict close
    # those rows too and give the same forces, bit for bit.
    from contact_lcp.contact.min_norm_kernel import (APPLIED, CLOSED_FACTOR, OPEN_FACTOR,
                                                    least_norm_face)

    from pathlib import Path

    data = np.load(Path(__file__).parent / "data" / "talos_face_limit_leaving.npz")
    names = ("G", "u", "bias", "J", "K", "mu", "f", "vel", "S", "l", "d", "angle", "vel_tol")
    a = [data[n] for n in names]
    a[9], a[10], a[12] = int(a[9]), int(a[10]), float(a[12])
    k, l = a[5].size, a[9]
    scale = 1.0 + np.abs(a[1]).max()
    w_limit = a[7][3 * k:] + a[2][k:]
    assert l == 2 and np.all(a[6][3 * k:] == 0.0)
    assert np.all((w_limit > 1e3 * OPEN_FACTOR * scale) & (w_limit < CLOSED_FACTOR * scale))
    fast_code, fast = least_norm_face(*a, OPEN_FACTOR)
    code, slow = least_norm_face(*a, -1.0)
    assert fast_code == code == APPLIED
    np.testing.assert_array_equal(fast, slow)
    assert np.all(fast[3 * k:] == 0.0)


def _plain(G, u, bias, J, K, mu, f, vel, S, l, d, angle, vel_tol):
    """Whether every row of the face (contacts ``S``, no limit row) is plainly open or
    closed and every contact plainly sticks or slides: the faces the kernel reads from
    ``w`` alone (its module notes), restated in numpy."""
    from contact_lcp.contact.min_norm_kernel import CLOSED_FACTOR, OPEN_FACTOR

    near = OPEN_FACTOR * (1.0 + np.abs(u).max())
    far = CLOSED_FACTOR * (1.0 + np.abs(u).max())
    if l:
        return False
    for i in S:
        theta = angle[i] + 2.0 * np.pi * np.arange(d) / d
        slip = np.cos(theta) * vel[3 * i + 1] + np.sin(theta) * vel[3 * i + 2]
        lam = max(0.0, -slip.min())
        edges = slip + lam
        if abs(vel[3 * i] + bias[i]) > near:
            return False
        if lam >= far:  # sliding: its slipping edges open, the others closed
            if not np.all((np.abs(edges) <= near) | (edges >= far)):
                return False
        elif lam > near or np.abs(edges).max() > near:
            return False
    return True
