"""ContactDetector on free bodies and the humanoid: counts, positions, distances, activation."""

from pathlib import Path

import coal
import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.collision import ContactDetector
from contact_lcp.collision.contact_point import tangent_basis
from contact_lcp.dynamics import BodySpec, RobotSpec, World
from contact_lcp.exceptions import SceneError

ROOT = Path(__file__).resolve().parents[1]
Z = np.array([0.0, 0.0, 1.0])


def quat_y(angle):
    """[qx qy qz qw] of a rotation about y."""
    return (0.0, np.sin(angle / 2), 0.0, np.cos(angle / 2))


def detect(bodies, eps, **kw):
    world = World([], bodies)
    return world, ContactDetector(world, activation_distance=eps, **kw).detect(world.q0)


def box(name="box", size=(0.4, 0.3, 0.2), pose=(0, 0, 0.1, 0, 0, 0, 1), **kw):
    return BodySpec(name, "box", size, 1.0, pose, **kw)


def test_box_resting_flat_gives_its_four_bottom_corners():
    world, contacts = detect([box()], 1e-3)
    assert len(contacts) == 4
    corners = {(x, y) for x in (-0.2, 0.2) for y in (-0.15, 0.15)}
    assert {tuple(np.round(c.p_W[:2], 9)) for c in contacts} == corners
    for c in contacts:
        assert (c.body_a, c.body_b, c.joint_a, c.joint_b) == ("ground", "box", 0, 1)
        assert np.array_equal(c.n_W, Z) and abs(c.distance) < 1e-12 and abs(c.p_W[2]) < 1e-12
        assert np.array_equal(c.frame(), np.eye(3)[:, [2, 0, 1]])  # (n, t1, t2) = (z, x, y)


@pytest.mark.parametrize("eps, expected", [(5e-3, 0), (2e-2, 4)])
def test_activation_distance_for_a_box_one_centimetre_up(eps, expected):
    _, contacts = detect([box(pose=(0, 0, 0.11, 0, 0, 0, 1))], eps)
    assert len(contacts) == expected
    for c in contacts:
        assert c.distance == pytest.approx(0.01) and c.p_W[2] == pytest.approx(0.005)


def test_tilted_box_reports_each_corner_with_its_own_distance():
    a = 0.05  # turning about +y lowers +x: the -x bottom edge is 2 cm above the +x one
    z = 0.2 * np.sin(a) + 0.1 * np.cos(a) + 0.002
    _, contacts = detect([box(pose=(0, 0, z) + quat_y(a))], 5e-3)
    assert len(contacts) == 2  # only the low edge is within 5 mm
    for c in contacts:
        assert c.distance == pytest.approx(0.002)
        assert c.p_W[0] == pytest.approx(0.2 * np.cos(a) - 0.1 * np.sin(a))
    _, contacts = detect([box(pose=(0, 0, z) + quat_y(a))], 3e-2)
    assert sorted(c.distance for c in contacts) == pytest.approx(
        [0.002, 0.002, 0.002 + 0.4 * np.sin(a), 0.002 + 0.4 * np.sin(a)])


def test_penetrating_box_has_negative_distances():
    _, contacts = detect([box(pose=(0, 0, 0.097, 0, 0, 0, 1))], 1e-3)
    assert len(contacts) == 4 and all(c.distance == pytest.approx(-0.003) for c in contacts)


def test_sphere_gives_one_point_below_its_centre():
    _, contacts = detect([BodySpec("ball", "sphere", (0.1,), 1.0, (0.3, -0.2, 0.104, 0, 0, 0, 1))],
                         5e-3)
    assert len(contacts) == 1
    c = contacts[0]
    assert c.distance == pytest.approx(0.004) and np.allclose(c.p_W, (0.3, -0.2, 0.002))


def test_cylinder_standing_gives_a_polygon_and_lying_gives_a_line():
    upright = (0, 0, 0.15, 0, 0, 0, 1)
    _, standing = detect([BodySpec("c", "cylinder", (0.1, 0.3), 1.0, upright)], 1e-3)
    assert len(standing) == 8  # the default 8 rim samples
    assert np.allclose([np.hypot(*c.p_W[:2]) for c in standing], 0.1)
    lying_pose = (0, 0, 0.1) + quat_y(np.pi / 2)
    _, lying = detect([BodySpec("c", "cylinder", (0.1, 0.3), 1.0, lying_pose)], 1e-3)
    assert sorted(np.round([c.p_W[0] for c in lying], 9)) == [-0.15, 0.15]
    assert all(abs(c.distance) < 1e-12 for c in lying)


def test_capsule_lying_gives_its_two_end_points():
    pose = (0, 0, 0.05) + quat_y(np.pi / 2)
    _, contacts = detect([BodySpec("p", "capsule", (0.05, 0.3), 1.0, pose)], 1e-3)
    assert sorted(np.round([c.p_W[0] for c in contacts], 9)) == [-0.15, 0.15]


def test_ellipsoid_support_point():
    _, contacts = detect([BodySpec("e", "ellipsoid", (0.1, 0.2, 0.3), 1.0,
                                   (1, 2, 0.303, 0, 0, 0, 1))], 5e-3)
    assert len(contacts) == 1 and contacts[0].distance == pytest.approx(0.003)
    assert np.allclose(contacts[0].p_W, (1, 2, 0.0015))


def test_stacked_boxes_give_a_patch_between_them():
    lower = box("lower", (0.4, 0.4, 0.2), (0, 0, 0.1, 0, 0, 0, 1))
    upper = box("upper", (0.2, 0.2, 0.2), (0.05, 0.02, 0.303, 0, 0, 0, 1))
    _, contacts = detect([lower, upper], 5e-3)
    between = [c for c in contacts if c.body_a == "lower"]
    assert len(between) == 4 and all(c.body_b == "upper" for c in between)
    for c in between:
        assert np.allclose(c.n_W, Z, atol=1e-9) and c.distance == pytest.approx(0.003)
        assert c.p_W[2] == pytest.approx(0.2015)
    assert {tuple(np.round(c.p_W[:2], 6)) for c in between} == {
        (x, y) for x in (-0.05, 0.15) for y in (-0.08, 0.12)}
    assert sum(c.body_a == "ground" for c in contacts) == 4  # the upper box is off the ground


def test_tilted_box_on_box_measures_each_patch_point():
    a = 0.02
    z = 0.2 + 0.1 * np.cos(a) + 0.1 * np.sin(a) + 0.001
    lower = box("lower", (0.6, 0.6, 0.2), (0, 0, 0.1, 0, 0, 0, 1))
    upper = box("upper", (0.2, 0.2, 0.2), (0, 0, z) + quat_y(a))
    world = World([], [lower, upper])
    det = ContactDetector(world, activation_distance=1e-2)
    between = [c for c in det.detect(world.q0) if c.body_a == "lower"]
    assert len(between) == 4
    high = 0.001 + 0.2 * np.sin(a)
    distances = sorted(c.distance for c in between)
    assert distances == pytest.approx([0.001, 0.001, high, high], abs=1e-9)
    det = ContactDetector(world, activation_distance=2e-3)
    between = [c for c in det.detect(world.q0) if c.body_a == "lower"]
    assert len(between) == 2 and all(c.distance == pytest.approx(0.001) for c in between)


def test_separated_bodies_beyond_activation_give_nothing():
    lower = box("lower", (0.4, 0.4, 0.2), (0, 0, 0.1, 0, 0, 0, 1))
    ball = BodySpec("ball", "sphere", (0.05,), 1.0, (0, 0, 0.26, 0, 0, 0, 1))
    _, contacts = detect([lower, ball], 5e-3)
    assert not [c for c in contacts if c.body_b == "ball"]
    _, contacts = detect([lower, ball], 2e-2)
    (c,) = [c for c in contacts if c.body_b == "ball"]
    assert c.distance == pytest.approx(0.01) and np.allclose(c.p_W, (0, 0, 0.205))


def test_reduction_merges_points_closer_than_a_millimetre():
    tiny = box("tiny", (5e-4, 5e-4, 5e-4), (0, 0, 2.5e-4, 0, 0, 0, 1))
    assert len(detect([tiny], 1e-4)[1]) == 1  # 4 bottom corners 0.5 mm apart
    assert len(detect([tiny], 1e-4, reduction_distance=1e-4)[1]) == 4


def test_remove_interior_keeps_the_hull_of_a_standing_cylinder_rim():
    spec = BodySpec("c", "cylinder", (0.1, 0.3), 1.0, (0, 0, 0.15, 0, 0, 0, 1))
    assert len(detect([spec], 1e-3, remove_interior=True)[1]) == 8  # all on the hull


def sole_robot(mesh_mode):
    mesh = ROOT / "test" / "data" / "flat_sole.obj"
    urdf = f"""<robot name="sole"><link name="sole">
      <inertial><mass value="1"/>
        <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial>
      <collision><geometry><mesh filename="{mesh}"/></geometry></collision>
    </link></robot>"""
    return World([RobotSpec("sole", urdf_string=urdf)], mesh_mode=mesh_mode)


def test_remove_interior_drops_the_centre_of_a_mesh_sole():
    world = sole_robot("exact")
    centre = [0.0, 0.0, 0.0]
    all_points = ContactDetector(world, activation_distance=1e-3).detect(world.q0)
    assert len(all_points) == 5 and any(np.allclose(c.p_W, centre) for c in all_points)
    hull = ContactDetector(world, activation_distance=1e-3, remove_interior=True).detect(world.q0)
    assert len(hull) == 4 and not any(np.allclose(c.p_W, centre) for c in hull)
    # qhull drops the coplanar centre vertex of the convex hull by itself
    world = sole_robot("convex")
    assert len(ContactDetector(world, activation_distance=1e-3).detect(world.q0)) == 4


def test_friction_is_combined_per_pair():
    bodies = [box(friction=0.5), BodySpec("ball", "sphere", (0.1,), 1.0, (1, 0, 0.1, 0, 0, 0, 1))]
    world = World([], bodies)
    contacts = ContactDetector(world, activation_distance=1e-3, ground_friction=1.0,
                               default_friction=0.3).detect(world.q0)
    mu = {c.body_b: c.mu for c in contacts}
    assert mu["box"] == pytest.approx(2 * 0.5 / 1.5) and mu["ball"] == pytest.approx(0.6 / 1.3)
    det = ContactDetector(world, activation_distance=1e-3, friction_of={"ball": 1.0})
    assert {c.body_b: c.mu for c in det.detect(world.q0)}["ball"] == pytest.approx(0.8 * 2 / 1.8)
    det = ContactDetector(world, activation_distance=1e-3, friction_of=lambda name: 0.0)
    assert all(c.mu == 0.0 for c in det.detect(world.q0))
    with pytest.raises(SceneError, match="friction"):
        ContactDetector(world, activation_distance=1e-3, friction_of={"ground": -1.0})


def test_no_ground_no_ground_contacts():
    world = World([], [box()], ground_height=None)
    assert len(ContactDetector(world, activation_distance=1e-2).detect(world.q0)) == 0


def test_ground_height():
    world = World([], [box(pose=(0, 0, 0.6, 0, 0, 0, 1))], ground_height=0.5)
    contacts = ContactDetector(world, activation_distance=1e-3).detect(world.q0)
    assert len(contacts) == 4 and all(abs(c.distance) < 1e-12 for c in contacts)


def test_detection_is_deterministic_and_follows_q():
    world = World([], [box(), BodySpec("ball", "sphere", (0.1,), 1.0, (1, 0, 0.1, 0, 0, 0, 1))])
    det = ContactDetector(world, activation_distance=1e-3)
    first = det.detect(world.q0)
    world.forward(world.q0 + 1.0)  # someone else moved the kinematics
    again = det.detect(world.q0)
    assert [(c.body_b, tuple(c.p_W), c.distance) for c in first] == [
        (c.body_b, tuple(c.p_W), c.distance) for c in again]
    q = world.q0.copy()
    q[2] += 0.5  # lift the box
    assert [c.body_b for c in det.detect(q)] == ["ball"]


def test_humanoid_self_collision_is_opt_in():
    world = World([RobotSpec("h", urdf=str(ROOT / "urdf" / "humanoid.urdf"),
                             base_pose=(0, 0, 0.74, 0, 0, 0, 1),
                             initial_joints={"l_shoulder_roll": -0.6})])
    off = ContactDetector(world, activation_distance=1e-3).detect(world.q0)
    assert all(c.body_a == "ground" for c in off) and len(off) == 8
    on = ContactDetector(world, activation_distance=1e-3, self_collision=True).detect(world.q0)
    self_pairs = {(c.body_a, c.body_b) for c in on if c.body_a != "ground"}
    assert ("torso", "l_forearm") in self_pairs
    assert not any("l_upper_arm" in p and "torso" in p for p in self_pairs)  # adjacent


@pytest.mark.parametrize("scene", ["config/humanoid_stand.yaml", "config/box_stack.yaml",
                                   "config/legged_frame.yaml"])
def test_compiled_ground_path_matches_the_general_one(scene):
    # Feet and boxes go through the compiled polytope-ground pass; forcing the general
    # per-pair path must give the same points, frames and distances, also tilted.
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(scene)
    det, rng = sim.detector, np.random.default_rng(1)
    for trial in range(6):
        for _ in range(3):
            sim.step()
        q = sim.q
        if trial % 2:
            q[3:7] += 0.02 * rng.standard_normal(4)
            q[3:7] /= np.linalg.norm(q[3:7])
        sim.world.forward(q)
        fast = det.detect(q)
        det._compiled_ground = lambda *args: (np.zeros(0, dtype=np.int64), None)
        slow = det.detect(q)
        del det._compiled_ground
        assert len(fast) == len(slow) > 0
        for f in ("body_a", "body_b", "joint_a", "joint_b", "p_W", "R_WC", "distance", "mu"):
            np.testing.assert_allclose(getattr(fast, f), getattr(slow, f), atol=1e-12, err_msg=f)


def test_equal_boxes_stacked_edge_to_edge_give_their_face_patch():
    # Two equal boxes exactly on top of each other touch along coincident edges too; the
    # closest-point normal is then arbitrary and coal's patch came back with 1 to 8 points
    # from step to step. The face clip gives the 4 corners at gap 0, normal +z.
    world, contacts = detect([BodySpec("a", "box", (0.1, 0.1, 0.1), 1.0, (0, 0, 0.05, 0, 0, 0, 1)),
                              BodySpec("b", "box", (0.1, 0.1, 0.1), 1.0, (0, 0, 0.15, 0, 0, 0, 1))],
                             1e-3)
    between = [c for c in contacts if c.body_a == "a" and c.body_b == "b"]
    assert len(between) == 4
    for c in between:
        np.testing.assert_allclose(c.n_W, Z, atol=1e-12)
        assert abs(c.distance) < 1e-12 and c.p_W[2] == pytest.approx(0.1)
    # the corners, pulled 1e-7 of their distance to the centre (5 nm) inwards
    np.testing.assert_allclose([np.abs(c.p_W[:2]) for c in between], 0.05, atol=1e-8)


@pytest.mark.parametrize("scene,skips", [("config/box_stack.yaml", False),
                                         ("config/ball_drop.yaml", True),
                                         ("config/humanoid_stand.yaml", True)])
def test_sleeping_broad_phase_finds_what_a_full_reading_finds(scene, skips):
    # The detector reads placements only of geometries whose sphere, grown by the bound
    # on their motion since the last reading, may reach something. Over falling, landing
    # and standing steps that must give exactly the contacts of reading every placement.
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(scene)
    det = sim.detector
    # the reading path of worlds whose placements are not computed from q (joints the
    # compiled recursion of dynamics/placements.py does not cover)
    det._fk = None
    moving = int(det._is_moving.sum())
    skipped = 0
    for _ in range(300):
        sim.step()
        q = sim.q
        la = det.lookahead(sim.v, sim.h, sim.stepper.max_lookahead)
        drift = det._drift.copy()
        sleep = det.detect(q, la)
        skipped += int(np.count_nonzero(det._drift[det._is_moving] > 0.0) > 0)
        det._expect_q = None  # forget every reading: read all placements
        full = det.detect(q, la)
        det._drift[:] = drift  # keep the accumulated bound (larger than needed: safe)
        assert len(sleep) == len(full)
        for f in ("body_a", "body_b", "p_W", "R_WC", "distance"):
            np.testing.assert_array_equal(getattr(sleep, f), getattr(full, f), err_msg=f)
    # the falling ball far from the ground and the humanoid's upper body are not read
    assert (skipped > 0) == skips, (skipped, moving)


def test_sphere_closed_forms_match_the_general_path():
    # Spheres against the ground, each other and boxes (the walls) have closed forms;
    # they must give the points, frames and gaps of the coal path (collision, patch,
    # re-measurement along the normal), in the same order, as the pile settles and
    # with random displacements of the spheres (edge and corner contacts with walls).
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file("config/spheres_21.yaml")
    det, rng = sim.detector, np.random.default_rng(3)
    assert (det._sphere_kind > 0).sum() > 200  # the pile's pairs go the compiled way
    for trial in range(8):
        for _ in range(5):
            sim.step()
        q = sim.q
        if trial % 2:
            spheres = [b for b in sim.world.bodies]
            for b in spheres:
                q[b.q_slice][:3] += 0.01 * rng.standard_normal(3)
        la = np.full(len(det._shapes), 0.002)
        sim.world.forward(q)
        fast = det.detect(q, la)
        kind = det._sphere_kind
        det._sphere_kind = np.zeros_like(kind)
        slow = det.detect(q, la)
        det._sphere_kind = kind
        assert len(fast) == len(slow) > 20
        for f in ("body_a", "body_b", "joint_a", "joint_b", "mu"):
            np.testing.assert_array_equal(getattr(fast, f), getattr(slow, f), err_msg=f)
        for f in ("p_W", "R_WC", "distance"):
            np.testing.assert_allclose(getattr(fast, f), getattr(slow, f), atol=1e-9, err_msg=f)


@pytest.mark.parametrize("remove_interior", [True, False])
def test_face_patch_reduction_compiled_matches_the_general_one(remove_interior):
    # A patch whose points share one normal (two polytopes' clipped faces) is reduced in
    # one compiled call in its plane; the per-point general reduction must keep the same
    # points, frames and gaps, for random tilted patches with flat and uneven gaps.
    world = World([], [BodySpec("b", "box", (0.1, 0.1, 0.1), 1.0, (0, 0, 0.05, 0, 0, 0, 1))])
    det = ContactDetector(world, activation_distance=0.002, reduction_distance=0.005,
                          remove_interior=remove_interior, flat_tolerance=0.0005,
                          max_points_per_pair=8)
    rng = np.random.default_rng(5)
    for trial in range(40):
        n = rng.standard_normal(3)
        n /= np.linalg.norm(n)
        R = tangent_basis(n)
        m = int(rng.integers(1, 30))
        xy = rng.uniform(-0.1, 0.1, size=(m, 2))
        d = rng.choice([0.0, 0.0002, 0.0008, 0.0015], size=m) + (trial % 3) * 1e-4
        P = np.column_stack([xy, np.zeros(m)]) @ R[:, [1, 2, 0]].T + rng.standard_normal(3)
        N = np.tile(n, (m, 1))
        Pf, Rf, df = det._reduce_face(P, n, d)
        Pg, Rg, dg = det._reduce_points(P, N, d)
        order_f, order_g = np.lexsort(Pf.T), np.lexsort(Pg.T)
        np.testing.assert_allclose(Pf[order_f], Pg[order_g], atol=1e-14)
        np.testing.assert_allclose(df[order_f], dg[order_g], atol=1e-15)
        np.testing.assert_allclose(Rf, np.repeat(R[None], len(df), axis=0), atol=1e-14)
        assert len(df) <= 8 and df.min() == d.min()  # the deepest point is never dropped
