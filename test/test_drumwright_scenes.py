"""S4's experiments as bundled scenes: the grasp (config/grasp.yaml) and the standing
humanoid (config/legged_no_slip.yaml), their contact model switchable."""

import numpy as np
import pytest

from contact_lcp.cli import main
from contact_lcp.sim import Simulator


def loaded_tangential_speed(sim):
    """Largest relative tangential speed [m/s] after the last step at loaded contacts."""
    rec = sim._last
    k = len(rec.contacts)
    v_C = (rec.problem.J[: 3 * k] @ rec.v_step).reshape(k, 3)
    loaded = rec.impulse_C[:, 0] > 0.0
    return float(np.abs(v_C[loaded, 1:]).max()) if loaded.any() else 0.0


def test_grasp_holds_two_boxes_without_slip_in_few_pivots():
    """36 contacts (2 pads x 16 points + 4 between the boxes, as S4's 3 x 12). No-slip holds
    the boxes against gravity: they do not sink (1 um), no loaded contact slips (1e-9 m/s)
    and the PPM needs few pivots (S4: 5.5 on average, 7 at most)."""
    sim = Simulator.from_file("config/grasp.yaml")
    assert sim.model.name == "no_slip" and sim.model.method == "ppm"
    z0 = np.array([sim.q[b.q_slice][2] for b in sim.world.bodies])
    pivots = []
    for _ in range(100):
        info = sim.step()
        assert info.report.outcome.name == "SOLVED" and info.report.applied == "no_slip"
        assert "solver_fallback" not in info.report.info
        assert info.num_contacts == 36
        assert loaded_tangential_speed(sim) <= 1e-9
        pivots.append(info.report.pivots)
    z = np.array([sim.q[b.q_slice][2] for b in sim.world.bodies])
    np.testing.assert_allclose(z, z0, atol=1e-6)
    assert np.mean(pivots) <= 7
    # The fingers carry the boxes' weight (2 x 0.2 kg): the vertical contact forces on the
    # two pads sum to m g (1e-3: the servo transient has settled by 0.1 s).
    fz = sum(sim.link_wrench(link)[2] for link in ("left_finger", "right_finger"))
    assert -fz == pytest.approx(0.4 * 9.81, rel=1e-3)


def test_humanoid_stands_on_no_slip_feet():
    sim = Simulator.from_file("config/legged_no_slip.yaml")
    for _ in range(200):
        info = sim.step()
        assert info.report.outcome.name == "SOLVED" and info.report.applied == "no_slip"
        assert loaded_tangential_speed(sim) <= 1e-9
    assert sim.q[2] > 0.70  # the pelvis stays up (0.728 m at the start)
    fz = sum(sim.link_wrench(f)[2] for f in ("l_foot", "r_foot"))
    assert fz == pytest.approx(52.9 * 9.81, rel=0.05)  # feet carry the weight (servo sway)


@pytest.mark.parametrize("scene", ["config/grasp.yaml", "config/legged_no_slip.yaml"])
@pytest.mark.parametrize("model", ["viscous", "no_slip", "pyramid"])
def test_model_is_switchable_from_the_cli(scene, model, tmp_path):
    out = tmp_path / "run.npz"
    assert main(["simulate", scene, "--model", model, "--duration", "0.005",
                 "--output", str(out)]) == 0
    with np.load(out) as f:
        assert set(f["lcp_status"]) <= {"SOLVED"}
