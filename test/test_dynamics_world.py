"""Physics identities of contact_lcp.dynamics.World (mass matrix, ABA, Jacobians, Delassus).

Worlds mix a floating humanoid, a fixed-base arm with revolute, continuous and prismatic
joints (test/data/two_link_arm.urdf) and free bodies, at seeded random configurations.
"""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.collision import ContactPoint
from contact_lcp.dynamics import BodySpec, RobotSpec, World
from contact_lcp.exceptions import FrameNotFound, InvalidProblem, SceneError

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = str(ROOT / "urdf" / "humanoid.urdf")
ARM = str(ROOT / "test" / "data" / "two_link_arm.urdf")
MALFORMED = str(ROOT / "test" / "data" / "malformed.urdf")


def mixed_world(whole=False):
    """The worlds of this file (``whole``: one Pinocchio model whatever its size)."""
    return World(
        [RobotSpec("humanoid", urdf=HUMANOID, base_pose=(0, 0, 0.74, 0, 0, 0, 1)),
         RobotSpec("arm", urdf=ARM, floating_base=False, base_pose=(1, 0, 0, 0, 0, 0, 1))],
        [BodySpec("box", "box", (0.3, 0.2, 0.1), 2.0, (2, 0, 0.05, 0, 0, 0.3826834, 0.9238795)),
         BodySpec("ball", "sphere", (0.1,), 0.5, (3, 0, 0.1, 0, 0, 0, 1)),
         BodySpec("pill", "capsule", (0.05, 0.2), 0.4, (4, 0, 0.3, 0, 0, 0, 1))],
        whole=whole)


@pytest.fixture(scope="module")
def world():
    return mixed_world()


def random_state(world, seed):
    rng = np.random.default_rng(seed)
    q = world.integrate(world.q0, rng.uniform(-0.5, 0.5, world.model.nv), 1.0)
    return q, rng.standard_normal(world.model.nv), rng.standard_normal(world.model.nv)


def mass_matrix(world, q):
    M = pin.crba(world.model, world.model.createData(), q)
    return np.triu(M) + np.triu(M, 1).T


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mass_matrix_symmetric_positive_definite(world, seed):
    q, _, _ = random_state(world, seed)
    M = mass_matrix(world, q)
    assert np.allclose(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minverse_inverts_crba(world, seed):
    q, _, _ = random_state(world, seed)
    Minv = world.minverse(q)
    assert np.array_equal(Minv, Minv.T)
    assert np.allclose(Minv @ mass_matrix(world, q), np.eye(world.model.nv), atol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_free_acceleration_is_Minv_of_tau_minus_b(world, seed):
    q, v, tau = random_state(world, seed)
    b = pin.nle(world.model, world.model.createData(), q, v)
    expected = np.linalg.solve(mass_matrix(world, q), tau - b)
    assert np.allclose(world.free_acceleration(q, v, tau), expected, atol=1e-8)


def test_free_body_falls_with_gravity():
    world = World([], [BodySpec("b", "box", (0.1, 0.2, 0.3), 3.0, (0, 0, 1, 0.2, 0.1, 0.3, 0.9))],
                  gravity=(0.5, -1.0, -9.81))
    q, v = world.q0, np.zeros(6)
    a = world.free_acceleration(q, v, np.zeros(6))
    R_WB = pin.Quaternion(q[6], *q[3:6]).normalized().toRotationMatrix()
    assert np.allclose(R_WB @ a[:3], (0.5, -1.0, -9.81))  # free-flyer v is in the body frame
    assert np.allclose(a[3:], 0)


def test_body_velocity_is_given_in_world():
    spec_v = np.array([0.3, -0.2, 0.1, 0.5, 0.0, -1.0])
    pose = (0, 0, 1, 0, 0, 0.3826834, 0.9238795)
    w = World([], [BodySpec("b", "box", (0.1, 0.2, 0.3), 1.0, pose, velocity=tuple(spec_v))])
    w.forward(w.q0, w.v0)
    v_W = pin.getFrameVelocity(w.model, w.data, w.frame_id("b"), pin.LOCAL_WORLD_ALIGNED)
    assert np.allclose(v_W.linear, spec_v[:3]) and np.allclose(v_W.angular, spec_v[3:])


def _random_contacts(world, rng):
    """Contacts between pairs of moving links/bodies, or with the ground, at random points."""
    links = ["l_foot", "r_forearm", "head", "fore", "tool", "box", "ball", "pill"]
    contacts = []
    for _ in range(6):
        b = rng.choice(links)
        a = rng.choice(["ground"] + [x for x in links if x != b])
        n = rng.standard_normal(3)
        contacts.append(ContactPoint(
            a, b, 0 if a == "ground" else world.joint_of_link(a), world.joint_of_link(b),
            rng.uniform(-1, 3, 3), n / np.linalg.norm(n), 0.0, 0.5))
    return contacts


@pytest.mark.parametrize("seed", [0, 1])
def test_contact_jacobian_matches_finite_differences(world, seed):
    """Row block i of J times e_k = d/de of (p_B - p_A) along (n, t1, t2), where p_A and
    p_B are the contact point carried by A and by B as q moves along direction k."""
    rng = np.random.default_rng(seed)
    q, _, _ = random_state(world, seed)
    contacts = _random_contacts(world, rng)
    world.forward(q)
    J = world.contact_jacobian(q, contacts)
    assert J.shape == (3 * len(contacts), world.model.nv)

    def carried(joint, p_local):
        if joint == 0:
            return p_local
        X = world.data.oMi[joint]
        return X.rotation @ p_local + X.translation

    local = []
    for c in contacts:
        pair = []
        for joint in (c.joint_a, c.joint_b):
            X = world.data.oMi[joint] if joint else pin.SE3.Identity()
            pair.append(X.rotation.T @ (c.p_W - X.translation))
        local.append(pair)
    eps = 1e-6
    J_fd = np.zeros_like(J)
    for k in range(world.model.nv):
        moved = []
        for sign in (1.0, -1.0):
            dq = np.zeros(world.model.nv)
            dq[k] = sign * eps
            world.forward(world.integrate(q, dq, 1.0))
            moved.append([carried(c.joint_b, pb) - carried(c.joint_a, pa)
                          for c, (pa, pb) in zip(contacts, local)])
        for i, c in enumerate(contacts):
            J_fd[3 * i : 3 * i + 3, k] = c.frame().T @ (moved[0][i] - moved[1][i]) / (2 * eps)
    assert np.allclose(J, J_fd, atol=1e-6), np.abs(J - J_fd).max()


@pytest.mark.parametrize("seed", [0, 1])
def test_delassus_is_J_Minv_JT_symmetric_psd(world, seed):
    rng = np.random.default_rng(seed)
    q, _, _ = random_state(world, seed)
    J = np.vstack([world.contact_jacobian(q, _random_contacts(world, rng)),
                   np.eye(world.model.nv)[[7, 9]]])  # plus two joint-limit rows
    G = world.delassus(q, J)
    assert np.array_equal(G, G.T)
    assert np.allclose(G, J @ np.linalg.solve(mass_matrix(world, q), J.T), atol=1e-9)
    assert np.linalg.eigvalsh(G).min() > -1e-10


def test_free_box_delassus_at_four_corners_has_rank_six():
    world = World([], [BodySpec("b", "box", (0.4, 0.3, 0.2), 2.0, (0, 0, 0.1, 0, 0, 0, 1))])
    q = world.q0
    world.forward(q)
    corners = [(x, y, 0.0) for x in (-0.2, 0.2) for y in (-0.15, 0.15)]
    contacts = [ContactPoint("ground", "b", 0, world.bodies[0].joint, np.array(p),
                             np.array([0.0, 0.0, 1.0]), 0.0, 0.5) for p in corners]
    G = world.delassus(q, world.contact_jacobian(q, contacts))
    s = np.linalg.svd(G, compute_uv=False)
    assert G.shape == (12, 12)
    assert np.sum(s > 1e-9 * s[0]) == 6
    # Pure vertical impulse 1 N.s shared by the 4 corners: dv_z = 1/m at every corner.
    f = np.zeros(12)
    f[0::3] = 0.25
    assert np.allclose((G @ f)[0::3], 1 / 2.0)


def test_integrate_keeps_unit_quaternions(world):
    q, v, _ = random_state(world, 3)
    q_next = world.integrate(q, 50 * v, 0.1)
    for j in [world.robots[0].root_joint] + [b.joint for b in world.bodies]:
        i = world.model.idx_qs[j]
        assert abs(np.linalg.norm(q_next[i + 3 : i + 7]) - 1.0) < 1e-12


def test_layout_names_slices_and_limits(world):
    hum, arm = world.robots
    assert len(hum.joint_names) == 20 and "l_knee" in hum.joint_names  # no prefix needed
    assert arm.joint_names == ["shoulder", "elbow", "wrist"]
    assert (hum.q_slice, hum.v_slice) == (slice(0, 27), slice(0, 26))
    assert arm.q_slice == slice(27, 31) and arm.root_joint == 0 and hum.root_joint == 1
    assert np.array_equal(arm.lower, [-1.5, -np.inf, 0.0])
    assert np.array_equal(arm.upper, [1.5, np.inf, 0.05])
    assert np.array_equal(arm.effort_limit, [20.0, np.inf, np.inf])  # absent and 0 -> inf
    assert arm.mass == pytest.approx(3.7)
    assert [b.name for b in world.bodies] == ["box", "ball", "pill"]
    assert world.bodies[0].q_slice == slice(31, 38)
    assert world.q0.shape == (world.model.nq,) and world.v0.shape == (world.model.nv,)
    for info in world.robots:
        for name, iq, iv in zip(info.joint_names, info.idx_q, info.idx_v):
            j = world.model.getJointId(name)
            assert (world.model.idx_qs[j], world.model.idx_vs[j]) == (iq, iv)


def test_free_bodies_join_the_world_as_append_model_would_join_them():
    """Free bodies are added to the world model in place (``append_free_body``), robots by
    ``pin.appendModel``: the model is the one appendModel gives for the same parts (tree,
    names, frames, inertias, limits, geometries, and so its mass matrix), and the world's
    GeometryModel holds no collision pairs (its own list ``pairs`` has them)."""
    from contact_lcp.dynamics.loading import load_body, load_robot

    robots = [RobotSpec("humanoid", urdf=HUMANOID, base_pose=(0, 0, 0.74, 0, 0, 0, 1)),
              RobotSpec("arm", urdf=ARM, floating_base=False, base_pose=(1, 0, 0, 0, 0, 0, 1))]
    bodies = [BodySpec("box", "box", (0.3, 0.2, 0.1), 2.0, (2, 0, 0.05, 0, 0, 0.38, 0.92)),
              BodySpec("ball", "sphere", (0.1,), 0.5, (3, 0, 0.1, 0, 0, 0, 1)),
              BodySpec("pill", "capsule", (0.05, 0.2), 0.4, (4, 0, 0.3, 0, 0, 0, 1))]
    world = World(robots, bodies, ground_height=None)
    model, geom = pin.Model(), pin.GeometryModel()
    poses = [pin.SE3.Identity(), pin.XYZQUATToSE3(np.array(robots[1].base_pose, dtype=float))]
    for part, pose in zip([load_robot(r) for r in robots] + [load_body(b) for b in bodies],
                          poses + [pin.SE3.Identity()] * 3):
        model, geom = pin.appendModel(model, part.model, geom, part.geom, 0, pose)
    m = world.model
    assert list(m.names) == list(model.names) and (m.nq, m.nv) == (model.nq, model.nv)
    for tree in ("parents", "idx_qs", "idx_vs"):
        assert list(getattr(m, tree)) == list(getattr(model, tree)), tree
    for tree in ("supports", "subtrees", "children"):
        assert [list(x) for x in getattr(m, tree)] == [list(x) for x in getattr(model, tree)]

    # frames by name (appendModel moves the frames on the universe, a fixed base's, to
    # the front at every append; their order is not part of the world's contract)
    def frames(mod):
        return {f.name: (f.parentJoint, mod.frames[f.parentFrame].name, f.type,
                         f.placement.homogeneous.tolist(), f.inertia.mass) for f in mod.frames}

    def objects(mod, gm):
        return {o.name: (o.parentJoint, mod.frames[o.parentFrame].name,
                         o.placement.homogeneous.tolist(), type(o.geometry).__name__,
                         o.meshScale.tolist()) for o in gm.geometryObjects}

    assert m.nframes == model.nframes and frames(m) == frames(model)
    assert all(a == b for a, b in zip(m.inertias, model.inertias))
    assert all(a == b for a, b in zip(m.jointPlacements, model.jointPlacements))
    for limit in ("effortLimit", "velocityLimit", "lowerPositionLimit", "upperPositionLimit"):
        assert np.array_equal(getattr(m, limit), getattr(model, limit)), limit
    assert objects(m, world.collision_model) == objects(model, geom)
    # ... and each geometry's owner is its robot's or body's (appendModel moves the
    # geometries on the universe, a fixed base's, to the front at every append)
    owned = {}
    for obj, owner in zip(world.collision_model.geometryObjects, world.geometry_owner):
        owned.setdefault(owner, set()).add(obj.name)
    assert owned == {**{r.name: {o.name for o in load_robot(r).geom.geometryObjects}
                        for r in robots}, **{b.name: {b.name} for b in bodies}}
    assert len(world.collision_model.collisionPairs) == 0 and len(geom.collisionPairs) > 0
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    assert np.array_equal(pin.crba(m, m.createData(), q), pin.crba(model, model.createData(), q))


def test_geometry_owners_and_self_pairs_follow_names_after_a_fixed_base_robot():
    """A fixed-base robot between two others: appendModel moves its base geometry to the
    front when the third is appended; owners and self-collision pairs still name each
    robot's own geometries."""
    world = World([RobotSpec("h", urdf=HUMANOID, base_pose=(0, 0, 0.74, 0, 0, 0, 1)),
                   RobotSpec("a", urdf=ARM, floating_base=False, base_pose=(1, 0, 0, 0, 0, 0, 1)),
                   RobotSpec("b", urdf=ARM, base_pose=(2, 0, 0.5, 0, 0, 0, 1))])
    objs = world.collision_model.geometryObjects
    assert objs[0].name == "a/arm_base_0"  # (moved to the front)
    for obj, owner in zip(objs, world.geometry_owner):  # (every name prefixed: clashes)
        assert obj.name.startswith(f"{owner}/") or obj.name == owner == "ground", obj.name
    assert world.self_pairs and all(world.geometry_owner[i] == world.geometry_owner[j]
                                    for i, j in world.self_pairs)


def test_fixed_base_is_welded_at_base_pose(world):
    world.forward(world.q0)
    X = world.frame_placement("arm_base")
    assert np.allclose(X[:3, 3], (1, 0, 0)) and np.allclose(X[:3, :3], np.eye(3))
    assert world.joint_of_link("arm_base") == 0


def test_two_robots_with_the_same_names_are_prefixed():
    specs = [RobotSpec("a", urdf=ARM, floating_base=False),
             RobotSpec("b", urdf=ARM, base_pose=(1, 0, 0, 0, 0, 0, 1))]
    world = World(specs)
    assert world.robots[0].joint_names == ["a/shoulder", "a/elbow", "a/wrist"]
    assert world.robots[1].joint_names == ["b/shoulder", "b/elbow", "b/wrist"]
    assert world.robots[1].base_link == "b/arm_base"
    world.forward(world.q0)
    assert np.allclose(world.frame_placement("b/arm_base")[:3, 3], (1, 0, 0))


def test_a_link_and_a_joint_of_the_same_name_load():
    # ANYmal C names its links and joints alike (LF_HAA ...): Pinocchio then finds two
    # frames for the name and could not append the robot to the world model.
    urdf = """<robot name="leg">
      <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
        ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="HAA"><inertial><origin xyz="0 0 -0.1"/><mass value="1"/><inertia
        ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="HAA" type="revolute"><parent link="base"/><child link="HAA"/>
        <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
    </robot>"""
    world = World([RobotSpec("leg", urdf_string=urdf, floating_base=False,
                             initial_joints={"HAA": 0.3})])
    assert world.robots[0].joint_names == ["HAA"]
    world.forward(world.q0)
    X = world.frame_placement("HAA")  # the link, turned by its joint
    assert np.allclose(X[:3, :3], pin.rpy.rpyToMatrix(0.3, 0, 0))
    assert world.joint_of_link("HAA") == 1
    two = World([RobotSpec("a", urdf_string=urdf, floating_base=False),
                 RobotSpec("b", urdf_string=urdf, floating_base=False)])
    assert [r.joint_names for r in two.robots] == [["a/HAA"], ["b/HAA"]]


def test_initial_joints_and_unknown_joint():
    world = World([RobotSpec("arm", urdf=ARM, floating_base=False,
                             initial_joints={"shoulder": 0.3, "elbow": 2.0, "wrist": 0.01})])
    q = world.q0
    assert q[0] == 0.3 and q[3] == 0.01
    assert np.allclose(q[1:3], (np.cos(2.0), np.sin(2.0)))
    with pytest.raises(FrameNotFound, match="shoulder"):
        World([RobotSpec("arm", urdf=ARM, floating_base=False, initial_joints={"nope": 1.0})])


def test_unknown_frame_lists_the_links(world):
    world.forward(world.q0)
    with pytest.raises(FrameNotFound) as err:
        world.frame_placement("l_fot")
    assert "l_foot" in str(err.value) and "box" in err.value.frames
    with pytest.raises(FrameNotFound):
        world.joint_of_link("nowhere")


def test_malformed_or_missing_urdf_raises_scene_error():
    with pytest.raises(SceneError, match="malformed.urdf"):
        World([RobotSpec("bad", urdf=MALFORMED)])
    with pytest.raises(SceneError, match="does not exist"):
        World([RobotSpec("bad", urdf=str(ROOT / "test" / "data" / "absent.urdf"))])
    with pytest.raises(SceneError, match="urdf_string"):
        World([RobotSpec("bad", urdf_string="<robot name='x'><link></robot>")])


def test_bad_specs_raise_scene_error():
    with pytest.raises(SceneError, match="shape"):
        World([], [BodySpec("b", "torus", (1.0,), 1.0)])
    with pytest.raises(SceneError, match="positive sizes"):
        World([], [BodySpec("b", "box", (1.0, 0.0, 1.0), 1.0)])
    with pytest.raises(SceneError, match="unique"):
        World([], [BodySpec("b", "sphere", (1.0,), 1.0), BodySpec("b", "sphere", (1.0,), 1.0)])
    with pytest.raises(SceneError, match="quaternion"):
        World([], [BodySpec("b", "sphere", (1.0,), 1.0, (0, 0, 0, 0, 0, 0, 0))])


def test_wrong_vectors_raise_invalid_problem(world):
    nq, nv = world.model.nq, world.model.nv
    with pytest.raises(InvalidProblem, match=f"q must be a finite \\({nq},\\)"):
        world.forward(np.zeros(nq - 1))
    with pytest.raises(InvalidProblem, match="NaN"):
        world.minverse(np.full(nq, np.nan))
    with pytest.raises(InvalidProblem, match="tau"):
        world.free_acceleration(world.q0, np.zeros(nv), np.zeros(nv + 1))
    with pytest.raises(InvalidProblem, match="J must have shape"):
        world.delassus(world.q0, np.zeros((3, nv + 1)))


@pytest.mark.parametrize("whole", [True, False])
def test_geometry_placements_before_any_forward_are_those_at_q0(whole):
    """Read before the first forward pass (the collision detector's set-up), Pinocchio's
    geometry placements were uninitialized memory: now and then NaN or 1e308 (a
    RuntimeWarning in the detector, and a broad phase built on garbage)."""
    fresh = mixed_world(whole)
    X = fresh.geometry_placements()
    assert np.all(np.isfinite(X))
    later = mixed_world(whole)
    later.forward(later.q0)
    np.testing.assert_array_equal(X, later.geometry_placements())


@pytest.mark.parametrize("whole", [True, False])
def test_frame_placements_read_before_data_are_the_ones_data_gets(whole):
    """Read before ``data`` (the run recorder's links each step), a frame's placement is
    computed with the joints' alone; ``data`` then still gets every placement and the
    velocities of the last forward pass, and the next pass's placements are new."""
    w, ref = mixed_world(whole), mixed_world(whole)
    links = ["l_foot", "r_foot", "fore", "box"]
    for seed in (0, 1):
        q, v, _ = random_state(w, seed)
        w.forward(q, v)
        X = w.frame_placements(links)
        np.testing.assert_array_equal(X[1], w.frame_placement("r_foot"))
        ref.forward(q, v)
        for name, X_i in zip(links, X):
            np.testing.assert_array_equal(X_i, ref.frame_placement(name))
            np.testing.assert_array_equal(w.frame_velocity(name), ref.frame_velocity(name))
        np.testing.assert_array_equal(w.geometry_placements(), ref.geometry_placements())
