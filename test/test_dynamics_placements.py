"""The compiled geometry placements (dynamics/placements.py) against Pinocchio's."""

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.dynamics.placements import tree_placements
from contact_lcp.sim import Simulator


def _random_q(model, rng):
    """A random configuration within +-3 of neutral (quaternions and unit complex numbers
    normalised by pin.randomConfiguration's own bounds do not reach this far)."""
    q = pin.neutral(model)
    v = rng.uniform(-3.0, 3.0, model.nv)
    return pin.integrate(model, q, v)


@pytest.mark.parametrize("path", ["config/humanoid_stand.yaml", "config/spheres_21.yaml",
                                  "config/hoist.yaml", "config/disks_21.yaml", "config/grasp.yaml"])
def test_placements_match_pinocchio_on_random_configurations(path):
    world = Simulator.from_file(path).world
    fk = tree_placements(world.model, world.collision_model)
    assert fk is not None  # free flyers, revolute (bounded or not) and prismatic joints
    data, gdata = world.model.createData(), pin.GeometryData(world.collision_model)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = _random_q(world.model, rng)
        pin.updateGeometryPlacements(world.model, data, world.collision_model, gdata, q)
        X = fk(q)
        for g in range(len(gdata.oMg)):
            # the same products in another order: round-off of a chain of 30 joints
            np.testing.assert_allclose(X[g], gdata.oMg[g].homogeneous, rtol=0, atol=1e-12)


def test_unaligned_axes_and_uncovered_joints():
    model = pin.Model()
    axis = np.array([0.0, 0.6, 0.8])
    j1 = model.addJoint(0, pin.JointModelRevoluteUnaligned(axis), pin.SE3.Random(), "r")
    j2 = model.addJoint(j1, pin.JointModelPrismaticUnaligned(axis[::-1].copy()), pin.SE3.Random(), "p")
    model.addJoint(j2, pin.JointModelRUBZ(), pin.SE3.Random(), "c")
    geom = pin.GeometryModel()
    import coal
    for j in range(1, 4):
        geom.addGeometryObject(pin.GeometryObject(f"g{j}", j, 0, pin.SE3.Random(), coal.Sphere(0.1)))
    fk = tree_placements(model, geom)
    data, gdata = model.createData(), pin.GeometryData(geom)
    q = _random_q(model, np.random.default_rng(0))
    pin.updateGeometryPlacements(model, data, geom, gdata, q)
    for g in range(3):
        np.testing.assert_allclose(fk(q)[g], gdata.oMg[g].homogeneous, rtol=0, atol=1e-12)
    model.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "s")
    assert tree_placements(model, geom) is None  # read from Pinocchio instead


@pytest.mark.parametrize("path", ["config/humanoid_stand.yaml", "config/disks_21.yaml"])
def test_world_frame_placements_match_pinocchio_s_frames(path):
    """``World.frame_placements`` (the recorder's links, compiled from ``q``) against
    Pinocchio's ``oMf`` of every body frame, at random configurations; the humanoid is
    one Pinocchio model, the disks a world split into groups."""
    world = Simulator.from_file(path).world
    assert world.geometry_fk is not None
    names = [f.name for f in world.model.frames if f.type == pin.FrameType.BODY]
    data = world.model.createData()
    rng = np.random.default_rng(5)
    for _ in range(10):
        q = _random_q(world.model, rng)
        world.forward(q)
        pin.framesForwardKinematics(world.model, data, q)
        X = world.frame_placements(names)
        for i, name in enumerate(names):
            ref = data.oMf[world.model.getFrameId(name)].homogeneous
            np.testing.assert_allclose(X[i], ref, rtol=0, atol=1e-12)
        assert np.array_equal(world.frame_placement(names[-1]), X[-1])
