"""The bundled humanoid standing and squatting: forces add up, no drift, no failures."""

import dataclasses

import numpy as np
import pytest

from contact_lcp.sim import Simulator, default_scene_path, load_scene
from contact_lcp.sim.scene import ControllerSpec


def prescribed_stand():
    scene = load_scene(default_scene_path())
    r = scene.robots[0]
    r = dataclasses.replace(r, controller=ControllerSpec(kind="prescribed"))
    return Simulator(scene.replace(robots=(r,)))


@pytest.mark.slow
def test_prescribed_stand_forces_sum_to_m_g_without_drift_or_failures():
    sim = prescribed_stand()
    mg = sim.robot_mass() * 9.81
    base0 = sim.base_state().pose[:3]
    fz, statuses = [], set()
    for _ in range(5000):  # 5 s at 1 ms
        info = sim.step()
        statuses.add(info.lcp_status)
        fz.append(sum(sim.link_wrench(l)[2] for l in ("l_foot", "r_foot")))
    assert statuses == {"SOLVED"}
    assert sim.stats.lcp_failures == 0 and sim.stats.fallbacks == 0
    assert np.mean(fz) == pytest.approx(mg, rel=0.01)
    drift = np.linalg.norm(sim.base_state().pose[:3] - base0)
    assert drift < 1e-3


def test_pd_stand_feet_share_the_weight_without_jitter():
    # Implicit servos: the per-foot vertical force is steady step to step (no period-2
    # chatter) and, by symmetry, each foot carries half the weight.
    sim = Simulator.from_file(default_scene_path())
    mg = sim.robot_mass() * 9.81
    for _ in range(300):
        sim.step()
    left, right = [], []
    for _ in range(200):
        sim.step()
        left.append(sim.link_wrench("l_foot")[2])
        right.append(sim.link_wrench("r_foot")[2])
    assert np.mean(left) + np.mean(right) == pytest.approx(mg, rel=0.01)
    assert np.mean(left) == pytest.approx(mg / 2, rel=0.01)
    assert np.std(left) < 0.005 * mg and np.std(right) < 0.005 * mg


def test_wrench_links_must_exist():
    from contact_lcp.exceptions import FrameNotFound

    scene = load_scene(default_scene_path())
    bad = scene.replace(output=dataclasses.replace(scene.output, wrench_links=("l_fot",)))
    with pytest.raises(FrameNotFound, match="l_fot.*l_foot"):
        Simulator(bad)


def test_joint_limit_holds_against_an_effort():
    # l_elbow's range is [-2.5, 0]; 10 N.m towards +q must stop at the limit, not past it.
    sim = Simulator.from_file(default_scene_path())
    i = sim.joint_names.index("l_elbow")
    upper = sim.world.robots[0].upper[i]
    sim.set_command("effort", [10.0], joints=["l_elbow"])
    for _ in range(800):
        sim.step()
        assert sim.joint_state().position[i] <= upper + 1e-6
    assert sim.joint_state().position[i] == pytest.approx(upper, abs=1e-4)
    assert sim._last.limit_impulse.max() > 0  # the limit row carries the torque
