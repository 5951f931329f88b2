"""The pyramid model's last basis carries a resting contact from step to step.

A box sticking on the 25-degree incline (``config/incline.yaml``) with friction 0.8
against the ground's 0.5 (the pair's 0.615 > tan 25 deg = 0.466) rests on three loaded
corners; the pivoting puts one of them at its friction limit (the impulses of redundant
contact are not unique), so the basis that solves a step has degenerate variables
(basic at zero). The next step must start from that basis, degenerate variables
included: the basis read off ``z > 0`` leaves them out and misses the next step, and the
search then ran on every other step.
"""

import os

import numpy as np
import pytest
import yaml

from contact_lcp.sim import Simulator
from contact_lcp.sim.scene_loader import scene_from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLINE = os.path.join(ROOT, "config", "incline.yaml")


def incline(friction):
    data = yaml.safe_load(open(INCLINE))
    data["bodies"][0]["friction"] = friction
    return Simulator(scene_from_dict(data, base_dir=os.path.dirname(INCLINE), path=INCLINE))


@pytest.mark.parametrize("friction", [0.6, 0.8])
def test_a_box_sticking_on_an_incline_is_solved_by_the_last_basis(friction):
    sim = incline(friction)
    for _ in range(100):  # settling onto the incline
        sim.step()
    start = sim.body_state("block").pose[:3].copy()
    misses = [sim.stats.steps for _ in range(400) if not sim.step().report.last_basis_only]
    assert misses == []
    # and it sticks: the corner at its friction limit does not slide
    moved = np.linalg.norm(sim.body_state("block").pose[:3] - start)
    assert moved < 1e-9, moved
    assert sim.stats.lcp_failures == 0
