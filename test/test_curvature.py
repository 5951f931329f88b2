"""Contacts whose points' paths curve into each other over a step (contact_lcp.sim.curvature)."""

import os

import numpy as np
import pytest

from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.curvature import curvature_defects

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _spinning_box(w, h):
    sim = Simulator(scene_from_dict({
        "time_step": h, "gravity": [0, 0, 0], "ground": {"height": -5.0},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.2], "mass": 1.0,
                    "pose": [0, 0, 1, 0, 0, 0, 1], "velocity": [0.3, 0, 0, w, 0, 0]}]}))
    return sim


def _contact_on(sim, p, n):
    """A one-point ContactSet: the box (B) against a fixed surface (A) at p, normal n."""
    names = sim.stepper.detector.surface_names
    g = names.index("box")
    R = np.eye(3)
    R[:, 0] = n
    R[:, 1] = np.cross([0.0, 1.0, 0.0], n) if abs(n[1]) < 0.9 else [1.0, 0.0, 0.0]
    R[:, 1] /= np.linalg.norm(R[:, 1])
    R[:, 2] = np.cross(R[:, 0], R[:, 1])
    z = np.zeros(1, dtype=np.int64)
    return ContactSet(tuple(names), z + names.index("ground"), z + g, z, z + 1, np.array([p], dtype=float),
                      R[None], np.zeros(1), np.full(1, 0.5))


def test_a_turning_box_point_leaves_its_tangent_by_the_arc():
    # A free box turns about x through its centre at w (integrated exactly): its point
    # 10 cm below the centre rises by a (1 - cos(w h)) while its velocity has no vertical
    # part, so the defect along +z is exactly that (an arc curving away from a floor);
    # along -z (a surface above that point, the body wrapped around it: a hook on a peg)
    # it is the same amount negative. Linear motion adds nothing.
    a, w, h = 0.1, 20.0, 0.01
    sim = _spinning_box(w, h)
    q, v = sim.q.copy(), sim.v.copy()
    p = np.array([0.0, 0.0, 1.0 - a])
    up = curvature_defects(sim.world, q, _contact_on(sim, p, np.array([0.0, 0.0, 1.0])), v, h)
    down = curvature_defects(sim.world, q, _contact_on(sim, p, np.array([0.0, 0.0, -1.0])), v, h)
    expected = a * (1.0 - np.cos(w * h))  # 2.0e-3 m
    assert up[0] == pytest.approx(expected, rel=2e-3)  # (the h/1000 linear part: 1e-3)
    assert down[0] == pytest.approx(-expected, rel=2e-3)
    still = curvature_defects(sim.world, q, _contact_on(sim, p, np.array([0.0, 0.0, 1.0])),
                              np.array([0.3, 0, 0, 0, 0, 0.0]), h)
    assert abs(still[0]) < 1e-15


def test_the_check_skips_bodies_that_cannot_curve_by_the_tolerance():
    # A standing robot's step: the bound h W reach / 2 is far below the push-out per step,
    # so the two tree passes are not run.
    sim = Simulator.from_file(os.path.join(ROOT, "config", "humanoid_stand.yaml"))
    for _ in range(20):
        sim.step()
    rec = sim.stepper.curvature
    calls = []
    import contact_lcp.sim.curvature as curvature

    real = curvature.curvature_defects
    curvature.curvature_defects = lambda *a: calls.append(a) or real(*a)
    try:
        for _ in range(50):
            sim.step()
    finally:
        curvature.curvature_defects = real
    assert rec.enabled and calls == []


def test_interlocked_rings_do_not_sink_after_landing():
    # config/ring.yaml (S1's ring: chain links through each other, non-convex rings of
    # cylinder segments). A ring hanging on another is a hook on a peg: its points turn
    # about axes beyond the contact, their arcs curve into the other ring, and the linear
    # row does not see it. Uncorrected, wire_2's ring sank 0.01 mm a step from t = 0.66 s
    # to 2.9 mm at 0.8 s while its row held it separating at the push-out cap. With the
    # defect in the rows, the landing's 1.5 mm is pushed out (4.9 mm/s at h = 1 ms) and
    # nothing sinks again. After the landing the rings settle through a push-out
    # transient (about 0.1 mm over 0.7-0.8 s, its size and length set by which of the
    # equally valid impulses of the redundant contact the pivoting takes: it has ended by
    # 0.9 or by 1.0 s) and then rest at a few um.
    sim = Simulator.from_file(os.path.join(ROOT, "config", "ring.yaml"))
    late, settled = 0.0, 0.0
    while sim.t < 1.2 - 1e-9:
        info = sim.step()
        if sim.t > 0.7:
            late = max(late, info.max_penetration)
        if sim.t > 1.0:
            settled = max(settled, info.max_penetration)
    assert late < 0.2e-3  # the sinking ring reached 2.9 mm
    assert settled < 0.02e-3
    assert sim.stats.lcp_failures == 0 and sim.stats.fallbacks == 0


def test_a_limp_talos_collapses_without_sinking():
    # Talos with zero torques falls over; its links roll on the ground while its base and
    # arms turn. Its deepest penetration stays the half_sitting start's 0.454 mm (the SRDF
    # places the soles that deep). It was 2.48 mm when the contact reduction dropped a
    # turning foot's toe edge, then 0.72 mm from a gripper sinking 27 um a step along a
    # curving path.
    from contact_lcp.dynamics import talos_paths
    from contact_lcp.exceptions import SceneError

    try:
        talos_paths()
    except SceneError as e:
        pytest.skip(str(e))
    import yaml

    with open(os.path.join(ROOT, "config", "talos_stand.yaml")) as f:
        data = yaml.safe_load(f)
    data["robots"][0]["controller"] = {"type": "effort"}
    sim = Simulator(scene_from_dict(data, base_dir=os.path.join(ROOT, "config")))
    start = deepest = 0.0
    while sim.t < 2.0 - 1e-9:
        info = sim.step()
        if sim.t < 0.002:
            start = info.max_penetration
        deepest = max(deepest, info.max_penetration)
    assert start == pytest.approx(0.454e-3, abs=0.01e-3)
    assert deepest <= start + 0.05e-3
    assert sim.stats.lcp_failures == 0 and sim.stats.fallbacks == 0
