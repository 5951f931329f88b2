"""A world split into several Pinocchio models (contact_lcp.dynamics.groups) computes what
the whole world computes.

The trees hanging from the universe share no mass-matrix entry, so splitting them into
groups changes no arithmetic: every quantity below is compared with the whole world's to
round-off (most come out bit-identical). The split is forced on small worlds by lowering
the size thresholds; the 200-sphere pour is split by the defaults.
"""

import resource
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from test_dynamics_world import mixed_world  # (a humanoid, a fixed arm, three bodies)

from contact_lcp.collision import ContactPoint
from contact_lcp.dynamics import groups
from contact_lcp.dynamics.reduced import FreeMotion
from contact_lcp.exceptions import SceneError
from contact_lcp.sim.scene_loader import load_scene
from contact_lcp.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parents[1]
# round-off of the same sums taken in another order (frame velocities: Pinocchio's
# getFrameVelocity against our joint-to-frame transform)
TOL = 1e-12


@pytest.fixture
def force_split(monkeypatch):
    """Split every world with two trees or more into groups of one tree each."""
    monkeypatch.setattr(groups, "SINGLE_MODEL_BYTES", 0.0)
    monkeypatch.setattr(groups, "SPLIT_BUDGET_BYTES", 1.0)


def test_groups_cover_the_world_in_order(force_split):
    world = mixed_world(False)
    g = world.groups
    assert len(g) == 5  # humanoid, arm, three bodies
    assert g[0].j0 == 1 and g[-1].j1 == world.model.njoints
    for a, b in zip(g, g[1:]):
        assert a.j1 == b.j0 and a.qs.stop == b.qs.start and a.vs.stop == b.vs.start
    assert sum(x.model.nv for x in g) == world.model.nv
    assert len(mixed_world(True).groups) == 1


def test_split_world_computes_what_the_whole_world_computes(force_split):
    split, whole = mixed_world(False), mixed_world(True)
    rng = np.random.default_rng(7)
    nv = whole.model.nv
    for _ in range(3):
        q = whole.integrate(whole.q0, rng.uniform(-0.5, 0.5, nv), 1.0)
        v, tau = rng.standard_normal(nv), rng.standard_normal(nv)
        for w in (split, whole):
            w.forward(q, v)
        assert np.array_equal(split.joint_jacobians, whole.joint_jacobians)
        assert np.allclose(split.geometry_placements(), whole.geometry_placements(),
                           rtol=0, atol=TOL)
        for name in ("box", "ball", "l_sole", "r_hand", "link2", "tool"):
            if not whole.model.existFrame(name):
                continue
            assert np.allclose(split.frame_placement(name), whole.frame_placement(name),
                               rtol=0, atol=TOL)
            assert np.allclose(split.frame_velocity(name), whole.frame_velocity(name),
                               rtol=0, atol=TOL)
        assert np.array_equal(split.minverse(q), whole.minverse(q))
        assert np.allclose(split.free_acceleration(q, v, tau),
                           whole.free_acceleration(q, v, tau), rtol=0, atol=TOL)
        assert np.allclose(split.mechanical_energy(q, v), whole.mechanical_energy(q, v),
                           rtol=1e-14)
        contacts = [ContactPoint("ground", "box", 0, split.joint_of_link("box"),
                                 np.array([2.0, 0.1, 0.0]), np.array([0, 0, 1.0]), -1e-3, 0.5),
                    ContactPoint("box", "ball", split.joint_of_link("box"),
                                 split.joint_of_link("ball"), np.array([2.5, 0.1, 0.1]),
                                 np.array([1.0, 0, 0]), 0.0, 0.5)]
        assert np.array_equal(split.contact_jacobian(q, contacts),
                              whole.contact_jacobian(q, contacts))


def test_split_free_motion_matches_with_servos_and_prescribed_joints(force_split):
    split, whole = mixed_world(False), mixed_world(True)
    fs, fw = FreeMotion(split), FreeMotion(whole)
    rng = np.random.default_rng(3)
    nv = whole.model.nv
    q = whole.integrate(whole.q0, rng.uniform(-0.3, 0.3, nv), 1.0)
    v, tau = rng.standard_normal(nv), rng.standard_normal(nv)
    arm = np.zeros(nv)
    arm[6:20] = rng.uniform(0.1, 2.0, 14)  # implicit servos on some humanoid joints
    P = np.arange(10, 16)
    for kwargs in ({}, {"armature": arm},
                   {"prescribed": P, "v_prescribed": rng.standard_normal(P.size)}):
        (a, Ka), (b, Kb) = fs(q, v, tau, 0.01, **kwargs), fw(q, v, tau, 0.01, **kwargs)
        assert np.allclose(a, b, rtol=0, atol=TOL) and np.allclose(Ka, Kb, rtol=0, atol=TOL)
    assert np.allclose(fs.gravity(q), fw.gravity(q), rtol=0, atol=TOL)


def test_a_split_tower_steps_as_the_whole_one(force_split):
    # five boxes stacked: contact between bodies of different groups
    a = Simulator(load_scene(ROOT / "config" / "tower_5.yaml"))
    assert len(a.world.groups) == 5
    for _ in range(60):
        a.step()
    groups.SINGLE_MODEL_BYTES = 1e9
    b = Simulator(load_scene(ROOT / "config" / "tower_5.yaml"))
    assert len(b.world.groups) == 1
    for _ in range(60):
        b.step()
    assert np.allclose(a.q, b.q, rtol=0, atol=1e-9) and np.allclose(a.v, b.v, rtol=0, atol=1e-9)
    assert a.stats.lcp_failures == b.stats.lcp_failures == 0


def test_loop_closures_keep_the_world_whole(force_split):
    sim = Simulator(load_scene(ROOT / "config" / "net.yaml"))
    assert len(sim.world.groups) == 1 and sim.loops is not None


def test_one_tree_too_large_for_pinocchio_data_is_refused_with_the_numbers():
    # a single chain of 400 revolute joints cannot be split: its Data would take ~11 GB
    model = pin.Model()
    for i in range(400):
        model.addJoint(i, pin.JointModelRY(), pin.SE3.Identity(), f"j{i}")
    with pytest.raises(SceneError, match=r"nv = 400 .*GB.*nv\^3"):
        groups.split_world(model)
    groups.split_world(_disks(201))  # 201 planar disks (nv = 603): split, accepted


def _disks(n):
    m = pin.Model()
    for i in range(3 * n):
        kind = (pin.JointModelPX, pin.JointModelPZ, pin.JointModelRY)[i % 3]()
        m.addJoint(0 if i % 3 == 0 else m.njoints - 1, kind, pin.SE3.Identity(), f"j{i}")
    return m


def test_split_groups_stay_within_the_memory_budget():
    model = _disks(201)
    parts = groups.split_world(model)
    assert len(parts) > 1
    total = sum(groups.data_bytes(g.model.nv) for g in parts)
    assert total <= groups.SPLIT_BUDGET_BYTES
    for g in parts:  # whole disks only
        assert g.model.nv % 3 == 0


@pytest.mark.slow
def test_two_hundred_spheres_load_and_fall_within_memory():
    # The pour used to need ~60 GB per Data (nv = 1200) and was refused; now its groups'
    # Data take ~1 GB in all. Before the first landing every sphere falls freely.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    sim = Simulator(load_scene(ROOT / "config" / "spheres_200.yaml"))
    assert len(sim.world.bodies) == 200 and len(sim.world.groups) > 1
    for _ in range(10):
        info = sim.step()
    assert info.num_contacts == 0
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0 - before
    assert grown < 3e9
    vz = sim.v.reshape(-1, 6)[:, 2]  # (body frames unrotated: no spin, no contact)
    assert np.allclose(vz, -9.81 * 0.1, rtol=1e-12)
