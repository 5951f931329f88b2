"""Legged robots of example-robot-data (optional wheel; skipped without it) loaded as a
new user would: URDF, SRDF standing posture, floating base, PD servos, default contact
settings. Each stands: no failure or fallback, its weight on the ground, no penetration
after the first step (their SRDF postures put the feet up to 14 mm into the ground)."""

import numpy as np
import pytest

from contact_lcp.dynamics.robot_data import robot_data_share
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

G = 9.81
# name: (URDF, SRDF, reference configuration, how deep the SRDF posture starts [mm])
ROBOTS = {
    "go1": ("go1_description/urdf/go1.urdf", "go1_description/srdf/go1.srdf", "standing", 13.8),
    "a1": ("a1_description/urdf/a1.urdf", "a1_description/srdf/a1.srdf", "standing", 5.7),
    # links and joints named alike (LF_HAA ...)
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf",
                 "anymal_c_simple_description/srdf/anymal.srdf", "standing", 12.6),
    "solo12": ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf",
               "standing", 0.0),
}


MASS = {"go1": 13.1, "a1": 13.7, "anymal_c": 52.1, "solo12": 2.5}  # [kg], rounded


def robot_scene(name):
    urdf, srdf, ref, _ = ROBOTS[name]
    try:
        robot_data_share()
    except SceneError as e:  # the optional wheel is not installed
        pytest.skip(str(e))
    gains = {"kp": 10.0 * MASS[name], "kd": 0.5 * MASS[name]}  # ~10 N.m/rad per kg
    return scene_from_dict({
        "time_step": 1e-3, "ground": {"height": 0.0, "friction": 0.8},
        "robots": [{"name": name, "urdf": "example-robot-data://" + urdf,
                    "srdf": "example-robot-data://" + srdf,
                    "package_dirs": ["example-robot-data://"], "floating_base": True,
                    "reference_configuration": ref,
                    "controller": {"type": "pd", "gravity_compensation": True, **gains}}]})


def _deepest(sim):
    d = sim.detector.detect(sim.q).distance
    return max(0.0, -float(d.min())) if d.size else 0.0


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_a_legged_robot_from_its_srdf_stands_with_defaults(name):
    sim = Simulator(robot_scene(name))
    first = sim.step()
    assert first.max_penetration == pytest.approx(1e-3 * ROBOTS[name][3], abs=1e-4)
    assert _deepest(sim) < 1e-5
    forces = []
    for k in range(500):
        sim.step()
        if k >= 300:
            forces.append(sim.contact_force_total()[2])
    s = sim.stats
    assert (s.lcp_failures, s.fallbacks, s.safe_stops, s.uncertified) == (0, 0, 0, 0)
    assert s.projections == (1 if ROBOTS[name][3] > 1.0 else 0)
    assert _deepest(sim) < 1e-4
    # resting on its feet: the ground carries its weight (mean over 0.2 s: the servos
    # are soft, so the body still sways by a little)
    assert np.mean(forces) == pytest.approx(sim.robot_mass() * G, rel=1e-2)
