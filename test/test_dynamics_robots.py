"""The bundled humanoid (urdf/humanoid.urdf) and, when installed, Talos from
example-robot-data (skipped cleanly when the wheel is absent)."""

from pathlib import Path

import coal
import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.collision import ContactDetector
from contact_lcp.dynamics import RobotSpec, World, talos_paths
from contact_lcp.exceptions import SceneError

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = str(ROOT / "urdf" / "humanoid.urdf")
STANDING_Z = 0.74  # documented in urdf/humanoid.urdf
JOINTS = ["waist_yaw", "neck_yaw"] + [
    f"{s}_{j}" for s in "lr" for j in ("shoulder_pitch", "shoulder_roll", "elbow", "hip_yaw",
                                       "hip_roll", "hip_pitch", "knee", "ankle_pitch",
                                       "ankle_roll")]


@pytest.fixture(scope="module")
def humanoid():
    return World([RobotSpec("humanoid", urdf=HUMANOID, base_pose=(0, 0, STANDING_Z, 0, 0, 0, 1))])


def test_humanoid_joints_mass_and_limits(humanoid):
    info = humanoid.robots[0]
    assert sorted(info.joint_names) == sorted(JOINTS)
    assert info.mass == pytest.approx(52.9)
    assert info.base_link == "base_link"
    assert np.all(info.lower < info.upper) and np.all(np.isfinite(info.lower))
    assert np.all(info.effort_limit > 0) and np.all(np.isfinite(info.effort_limit))
    assert np.all(info.velocity_limit > 0) and np.all(np.isfinite(info.velocity_limit))
    assert np.all((info.lower <= 0) & (info.upper >= 0))  # the zero posture is admissible


def test_humanoid_inertias_match_their_primitives():
    """Each link is a uniform solid: its inertia is its visual primitive's."""
    model = pin.buildModelFromUrdf(HUMANOID, pin.JointModelFreeFlyer())
    visual = pin.buildGeomFromUrdf(model, HUMANOID, pin.VISUAL)
    assert visual.ngeoms == 21  # every link but the massless soles
    for obj in visual.geometryObjects:
        g, got = obj.geometry, model.inertias[obj.parentJoint]
        if isinstance(g, coal.Box):
            expected = pin.Inertia.FromBox(got.mass, *(2 * np.asarray(g.halfSide)))
        elif isinstance(g, coal.Cylinder):
            expected = pin.Inertia.FromCylinder(got.mass, g.radius, 2 * g.halfLength)
        else:
            expected = pin.Inertia.FromSphere(got.mass, g.radius)
        expected = obj.placement.act(expected)  # placement is in the joint frame
        assert np.allclose(got.lever, expected.lever, atol=1e-12), obj.name
        assert np.allclose(got.inertia, expected.inertia, rtol=1e-5), obj.name


def test_humanoid_stands_with_flat_feet_on_the_ground(humanoid):
    humanoid.forward(humanoid.q0)
    for side in "lr":
        X = humanoid.frame_placement(f"{side}_sole")
        assert abs(X[2, 3]) < 1e-12 and np.allclose(X[:3, :3], np.eye(3))
    contacts = ContactDetector(humanoid, activation_distance=1e-3).detect(humanoid.q0)
    per_foot = {b: sum(c.body_b == b for c in contacts) for b in ("l_foot", "r_foot")}
    assert per_foot == {"l_foot": 4, "r_foot": 4} and len(contacts) == 8
    assert all(abs(c.distance) < 1e-12 and c.body_a == "ground" for c in contacts)


def test_humanoid_self_collision_pairs_skip_neighbours(humanoid):
    names = [o.name for o in humanoid.collision_model.geometryObjects]
    pairs = {frozenset((names[i][:-2], names[j][:-2])) for i, j in humanoid.self_pairs}
    assert frozenset(("torso", "l_upper_arm")) not in pairs  # via a geometry-less shoulder
    assert frozenset(("base_link", "l_thigh")) not in pairs  # via the hip links
    assert frozenset(("l_foot", "l_shank")) not in pairs
    assert frozenset(("torso", "l_forearm")) in pairs
    assert frozenset(("l_foot", "r_foot")) in pairs


# ----------------------------------------------------------------------------- Talos
def _talos_or_skip():
    try:
        return talos_paths()
    except SceneError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def talos():
    urdf, srdf, pkg = _talos_or_skip()
    return World([RobotSpec("talos", urdf=urdf, srdf=srdf, package_dirs=(pkg,),
                            reference_configuration="half_sitting",
                            base_pose=(0, 0, 1.01927, 0, 0, 0, 1))])


def test_talos_half_sitting_loads_with_convex_meshes(talos):
    info = talos.robots[0]
    assert len(info.joint_names) == 32 and info.mass == pytest.approx(90.27, abs=0.01)
    q_ref = talos.model.referenceConfigurations["half_sitting"]
    assert np.allclose(talos.q0[7:], q_ref[7:])
    geoms = [o.geometry for o in talos.collision_model.geometryObjects]
    assert len(geoms) == 53  # 52 of Talos + the ground
    assert not any(isinstance(g, coal.BVHModelBase) for g in geoms)
    assert sum(isinstance(g, coal.ConvexBase) for g in geoms) == 47  # + 4 cylinders, 1 box


def test_talos_feet_give_support_polygons(talos):
    det = ContactDetector(talos, activation_distance=1e-3, remove_interior=True)
    contacts = det.detect(talos.q0)
    for foot in ("leg_left_6_link", "leg_right_6_link"):
        pts = np.array([c.p_W for c in contacts if c.body_b == foot])
        assert len(pts) >= 3
        area = 0.5 * abs(np.cross(pts[1] - pts[0], pts[2] - pts[0])[2])
        assert np.ptp(pts[:, 0]) > 0.1 and np.ptp(pts[:, 1]) > 0.05, pts
        assert area > 0 and np.all(np.abs(pts[:, 2]) < 1e-3)


def test_talos_exact_meshes_stay_bvh():
    urdf, srdf, pkg = _talos_or_skip()
    world = World([RobotSpec("talos", urdf=urdf, package_dirs=(pkg,))], mesh_mode="exact")
    assert any(isinstance(o.geometry, coal.BVHModelBase)
               for o in world.collision_model.geometryObjects)


def test_talos_unknown_reference_configuration():
    urdf, srdf, pkg = _talos_or_skip()
    with pytest.raises(SceneError, match="half_sitting"):
        World([RobotSpec("talos", urdf=urdf, srdf=srdf, package_dirs=(pkg,),
                         reference_configuration="full_sitting")])
