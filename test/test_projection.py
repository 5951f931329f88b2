"""Deep penetrations are moved out at the start of a step (contact_lcp/sim/projection.py):
in one step, with no speed gained, whether the body rests, spins, sits in a stack or is
a robot placed too low; and the displacement is the smallest mass-weighted one."""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.optimize import minimize

from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.projection import PenetrationProjection

G = 9.81
CONFIG = Path(__file__).resolve().parents[1] / "config"


def deepest(sim):
    """The deepest penetration [m] of the simulator's current state (a full detection)."""
    d = sim.detector.detect(sim.q).distance
    return max(0.0, -float(d.min())) if d.size else 0.0


def box(name, z, quat=(0, 0, 0, 1), velocity=None, size=(0.2, 0.2, 0.1)):
    b = {"name": name, "shape": "box", "size": list(size), "mass": 1.0,
         "pose": [0, 0, z, *quat]}
    if velocity is not None:
        b["velocity"] = list(velocity)
    return b


def scene(bodies, h=1e-3, projection_depth=1e-3):
    return Simulator(scene_from_dict({
        "time_step": h, "gravity": [0, 0, -G], "ground": {"height": 0.0, "friction": 0.8},
        "bodies": bodies, "contact": {"projection_depth": projection_depth}}))


def cap(h):
    """The push-out's speed cap [m/s] at step h (ContactSettings.correction_speed)."""
    return 0.5 * G * h


@pytest.mark.parametrize("h", [1e-3, 1e-2])
def test_a_box_started_deep_comes_out_in_one_step_without_speed(h):
    # 5 mm deep. The push-out alone, capped at half a gravity per step, takes 1 s at
    # h = 1 ms (4.9 mm/s) and 10 steps at h = 10 ms.
    on, off = scene([box("b", 0.045)], h), scene([box("b", 0.045)], h, projection_depth=None)
    info = on.step()
    off.step()
    assert info.max_penetration == pytest.approx(5e-3, abs=1e-9)  # what the state had
    assert deepest(on) < 1e-6  # the push-out finishes what the projection leaves
    assert deepest(off) > 5e-3 - cap(h) * h - 1e-9
    assert (on.stats.projections, off.stats.projections) == (1, 0)
    for _ in range(20):
        on.step()
        # never launched: the push-out's speed at most, and back at rest
        assert abs(on.body_state("b").twist[2]) <= cap(h) + 1e-9
    assert deepest(on) < 1e-6


def test_a_spinning_sliding_box_with_a_deep_edge_loses_energy():
    # Tilted 0.3 rad about x with its lowest edge 5 mm deep, spinning at 20 rad/s about
    # the vertical and sliding at 1 m/s: the projection turns and lifts it; the step's
    # friction then takes energy out, and none comes in.
    a = 0.3
    low = 0.05 * math.cos(a) + 0.1 * math.sin(a)  # centre height of the lowest edge at 0
    quat = (math.sin(a / 2), 0, 0, math.cos(a / 2))
    sim = scene([box("b", low - 5e-3, quat, velocity=(1, 0, 0, 0, 0, 20))])
    kinetic = lambda s: s.mechanical_energy()[0]  # noqa: E731
    e0 = kinetic(sim)
    sim.step()
    assert deepest(sim) < 1e-6
    assert kinetic(sim) <= e0
    assert abs(sim.body_state("b").twist[5]) > 19.0  # still spinning


def test_a_stack_with_a_deep_interface_moves_out_together():
    # Three 1 kg boxes: the middle one 4 mm into the bottom one, the top one resting on
    # the middle one. Lifting the middle box alone would push it into the top one: every
    # contact found is kept from going deeper, so both go up.
    sim = scene([box("b0", 0.05), box("b1", 0.146), box("b2", 0.246)])
    sim.step()
    assert deepest(sim) < 1e-6
    for _ in range(50):
        sim.step()
        assert max(abs(sim.body_state(n).twist[2]) for n in ("b0", "b1", "b2")) <= cap(1e-3) + 1e-9
    assert deepest(sim) < 1e-6
    # resting: the ground carries the stack's weight
    ground = sum(c.force_W[2] for c in sim.contacts() if "ground" in (c.body_a, c.body_b))
    assert ground == pytest.approx(3 * G, rel=1e-3)


def test_a_humanoid_placed_too_low_stands_on_its_soles_after_one_step():
    # The bundled humanoid with its base 5 mm lower than its soles allow: the four
    # corners of each sole 5 mm into the ground.
    data = yaml.safe_load((CONFIG / "humanoid_stand.yaml").read_text())
    data["robots"][0]["base_pose"][2] -= 5e-3
    sim = Simulator(scene_from_dict(data, base_dir=CONFIG))
    info = sim.step()
    assert info.max_penetration == pytest.approx(5e-3, abs=1e-6)
    assert deepest(sim) < 1e-6
    assert np.abs(sim.v).max() < 0.05  # moved, not pushed
    for _ in range(200):
        sim.step()
    assert deepest(sim) < 1e-4
    assert sim.contact_force_total()[2] == pytest.approx(sim.robot_mass() * G, rel=2e-2)


def test_the_displacement_is_the_smallest_mass_weighted_one():
    # Against a general-purpose QP: min 1/2 dq' K^-1 dq  s.t.  phi + J dq >= -target.
    rng = np.random.default_rng(3)
    for trial in range(5):
        nv, k = 6, 4
        A = rng.normal(size=(nv, nv))
        K = np.linalg.inv(A @ A.T + nv * np.eye(nv))
        J = np.zeros((3 * k, nv))
        J[0::3] = rng.normal(size=(k, nv))
        phi = rng.uniform(-5e-3, 2e-3, size=k)
        proj = PenetrationProjection(1e-3, 1e-5)
        p = proj(phi, J, K)
        assert p.certified
        Kinv = np.linalg.inv(K)
        ref = minimize(lambda x: 0.5 * x @ Kinv @ x, np.zeros(nv), jac=lambda x: Kinv @ x,
                       constraints={"type": "ineq", "fun": lambda x: phi + J[0::3] @ x + 1e-5,
                                    "jac": lambda x: J[0::3]},
                       method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
        assert ref.success
        assert np.all(phi + J[0::3] @ p.dq >= -1e-5 - 1e-12)
        assert 0.5 * p.dq @ Kinv @ p.dq == pytest.approx(ref.fun, rel=1e-6, abs=1e-15)
        assert p.depth_after <= 1e-5 + 1e-12


def test_a_projection_is_counted_as_an_lcp_solve():
    from contact_lcp.sim.projection import Projection
    from contact_lcp.sim.stats import SimStats

    s = SimStats()
    s.add_projection(Projection(np.zeros(6), 5e-3, 0.0, 7, True))
    s.add_projection(Projection(np.zeros(6), 5e-3, 5e-3, 40, False))  # not applied
    assert (s.projections, s.solves, s.pivots_total, s.lcp_failures) == (1, 2, 47, 1)


def test_the_projection_starts_only_past_its_depth_and_never_from_nan():
    # ContactSet.deepest is numpy's min (NaN when a gap is, inf without contacts); the
    # projection starts only when the deepest gap is deeper than its depth.
    from contact_lcp.collision.contact_set import ContactSet

    def gaps(*d):
        k = len(d)
        i = np.zeros(k, dtype=int)
        return ContactSet(("ground", "box"), i, i + 1, i, i, np.zeros((k, 3)),
                          np.tile(np.eye(3), (k, 1, 1)), np.array(d, dtype=float), np.ones(k))

    assert gaps().deepest == math.inf
    assert gaps(0.01, -0.002, 0.0).deepest == -0.002
    assert math.isnan(gaps(0.0, math.nan, -1.0).deepest)
    p = PenetrationProjection(depth=0.005, target=0.001)
    assert not p.needed(gaps().deepest) and not p.needed(gaps(-0.004).deepest)
    assert p.needed(gaps(0.0, -0.006).deepest)
    assert not p.needed(gaps(math.nan, -0.006).deepest)  # NaN: the step's checks say why
    assert not PenetrationProjection(None, 0.001).needed(gaps(-1.0).deepest)
