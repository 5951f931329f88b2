"""Fast, tumbling and spinning bodies hitting stacks and piles, with the defaults (h = 10 ms).

What the bundled stack and pile scenes do not exercise, since they start at rest: a box
thrown into a tower, a tumbling box dropped on a box pyramid, a sphere shot into the
21-sphere pile, bodies spinning on the ground. Every contact model must dissipate: contact
is inelastic and friction opposes slip, and the integrator's own drift is negative (a
free fall loses g^2 h^2 / 2 per unit mass each step; torque-free rotation is integrated
exactly), so the mechanical energy may not rise over any step by more than round-off.
"""

import os

import numpy as np
import pytest
import yaml

from contact_lcp.sim import Simulator, scene_from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "config")


def _box(name, z, x=0.0, mass=1.0, size=0.1, **extra):
    return {"name": name, "shape": "box", "size": [size] * 3, "mass": mass,
            "pose": [x, 0.0, z, 0, 0, 0, 1], **extra}


def tower_hit():
    # config/tower_5.yaml's five 1 kg boxes; a sixth flies into the middle one at 6 m/s
    boxes = [_box(f"box{i}", 0.05 + 0.1 * i) for i in range(5)]
    bullet = _box("bullet", 0.25, x=-0.3, velocity=[6, 0, 0, 0, 0, 0])
    return {"ground": {"friction": 0.8}, "bodies": boxes + [bullet]}, 1.0


def pyramid_drop():
    # config/pyramid_3.yaml with a 2 kg box dropped, tilted and tumbling, on its top
    with open(os.path.join(CONFIG, "pyramid_3.yaml")) as f:
        data = yaml.safe_load(f)
    data["bodies"].append({"name": "drop", "shape": "box", "size": [0.1, 0.1, 0.1],
                           "mass": 2.0, "pose": [0.02, 0.01, 0.8, 0.1, 0.2, 0.0, 0.9747],
                           "velocity": [0, 0, -2, 3, -2, 5]})
    return data, 1.0


def pile_shot():
    # config/spheres_21.yaml (walled box, 21 spheres) with a 22nd shot in at 8 m/s
    with open(os.path.join(CONFIG, "spheres_21.yaml")) as f:
        data = yaml.safe_load(f)
    data["bodies"].append({"name": "shot", "shape": "sphere", "size": [0.05], "mass": 0.5,
                           "pose": [0, 0, 0.6, 0, 0, 0, 1],
                           "velocity": [0.3, 0.2, -8, 0, 0, 0]})
    return data, 0.3


def spinning():
    # a flat box spun at 20 rad/s while sliding, a ball with 30 rad/s of side spin, a tall
    # box spun at 40 rad/s about its long axis: friction must only take energy out
    return {"ground": {"friction": 0.5}, "bodies": [
        {"name": "top", "shape": "box", "size": [0.2, 0.1, 0.05], "mass": 1.0,
         "pose": [0, 0, 0.025, 0, 0, 0, 1], "velocity": [1, 0, 0, 0, 0, 20]},
        {"name": "ball", "shape": "sphere", "size": [0.05], "mass": 0.5,
         "pose": [1, 1, 0.05, 0, 0, 0, 1], "velocity": [0, 0, 0, 30, 0, 5]},
        {"name": "stick", "shape": "box", "size": [0.05, 0.05, 0.3], "mass": 0.5,
         "pose": [-1, 1, 0.15, 0, 0, 0, 1], "velocity": [0, 0, 0, 0, 0, 40]}]}, 1.0


SCENES = {"tower_hit": tower_hit, "pyramid_drop": pyramid_drop, "pile_shot": pile_shot,
          "spinning": spinning}


def run(name, model):
    """(simulator, energy before and after each step [J], each step's deepest
    penetration at its start [m], deepest penetration [m])."""
    data, duration = SCENES[name]()
    data = dict(data, time_step=0.01)
    if model is not None:
        data["contact"] = dict(data.get("contact") or {}, model=model)
    sim = Simulator(scene_from_dict(data, base_dir=CONFIG))
    energy, depth = [sum(sim.mechanical_energy())], []
    while sim.t < duration - 1e-9:
        info = sim.step()
        energy.append(sum(sim.mechanical_energy()))
        depth.append(info.max_penetration)
    return sim, np.array(energy), np.array(depth)


@pytest.mark.parametrize("model", [None, "relaxed", "viscous", "no_slip", "frictionless"])
@pytest.mark.parametrize("name", sorted(SCENES))
def test_impacts_and_spin_never_add_energy(name, model):
    sim, energy, depth = run(name, model)
    # The one source of energy is the drift correction: a step that starts d deep pushes
    # the bodies out by at most d per contact layer, so it may lift the N bodies of total
    # mass m by N d and move them at N d / h (the frictionless pyramid_drop's rises are
    # of this kind: 7.7e-6 J when a sliding box's corner started 0.4 um deep, i.e. 2 kg g
    # 0.4 um). Where nothing penetrates, 1e-9 J (a 1 kg box lifted 0.1 nm) is the bound:
    # round-off on E ~ 30 J is ~1e-14 J, and the certified impulses' residuals are far below.
    m = sum(b.mass for b in sim.scene.bodies)
    n = len(sim.scene.bodies)
    lift = n * depth
    allowed = m * 9.81 * lift + 0.5 * m * (lift / sim.h) ** 2 + 1e-9
    rise = np.diff(energy)
    worst = int(np.argmax(rise - allowed))
    assert np.all(rise <= allowed), (worst, rise[worst], depth[worst])
    assert energy[-1] <= energy[0] + 1e-9
    if name != "spinning" or model != "frictionless":  # (nothing to dissipate there)
        assert energy[-1] < energy[0] - 0.1
    s = sim.stats
    assert (s.lcp_failures, s.fallbacks, s.safe_stops, s.uncertified) == (0, 0, 0, 0)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_impacts_with_the_default_model_barely_penetrate(name):
    # A first-order step moves each body point along the tangent of its arc: a point at
    # r = 7 cm from the centre of a box turning at w = 20 rad/s leaves its arc by
    # w^2 r h^2 / 2 = 1.4 mm in a 10 ms step, so 1 mm (1 % of a box) is the scale of what
    # a linearized contact may leave; the default (pyramid) model stays well inside it
    # (0.19 mm measured on tower_hit, 0.01 mm on pyramid_drop, 0 on the others).
    _, _, depth = run(name, None)
    assert depth.max() < 1e-3


@pytest.mark.parametrize("name", sorted(SCENES))
def test_no_slip_impulses_stay_within_the_load(name):
    # No-slip contact has no friction bound, and a redundant face's tangential impulses
    # are not unique; but self-cancelling internal impulses far above what the bodies
    # carry are a defect (8 000 N.s under a 2 kg box resting tilted by 1e-4 rad on
    # another, which also lifted it). No contact's tangential impulse may exceed the
    # step's total normal impulse plus the momentum it could have to stop: sum over the
    # bodies of m (|v| + |w| R), R the body's bounding radius (measured: at most 0.19 of
    # the bound on these scenes with every direction of the rows held to 1e-10 and the
    # least-norm impulses of contact/no_slip.py; 5 600 and 8 100 times it on
    # pyramid_drop and tower_hit when FIND-INDICES kept rows down to 1e-10 without them).
    data, duration = SCENES[name]()
    data = dict(data, time_step=0.01, contact={"model": "no_slip"})
    sim = Simulator(scene_from_dict(data, base_dir=CONFIG))
    radius = {b["name"]: 0.5 * np.linalg.norm(b["size"]) if b["shape"] == "box" else b["size"][0]
              for b in data["bodies"]}
    mass = {b["name"]: b["mass"] for b in data["bodies"]}
    worst = 0.0
    while sim.t < duration - 1e-9:
        momentum = 0.0
        for b in radius:
            twist = sim.body_state(b).twist
            momentum += mass[b] * (np.linalg.norm(twist[:3]) + np.linalg.norm(twist[3:]) * radius[b])
        sim.step()
        views = sim.contacts()
        if not views:
            continue
        normal = sum(c.force_W @ c.n_W for c in views) * sim.h
        tangential = max(np.linalg.norm(c.force_W - (c.force_W @ c.n_W) * c.n_W)
                         for c in views) * sim.h
        worst = max(worst, tangential / (normal + momentum))
    assert worst <= 1.0


@pytest.mark.parametrize("model", [None, "viscous", "no_slip", "relaxed"])
def test_a_sliding_ball_ends_rolling_at_five_sevenths_of_its_speed(model):
    # A solid ball (I = 2/5 m r^2) launched at v0 without spin: friction and the normal
    # force act at the contact and gravity through it, so its angular momentum about the
    # contact line, m r v + I w, is kept whatever the friction law; once it rolls
    # (w = v / r), v = 5/7 v0, for Coulomb (pyramid), viscous and no-slip friction alike.
    # The relaxed model's sliding contact is pushed off at mu times its slip speed (its
    # known artefact), which costs it a little: 1.4307 against 1.4286 m/s measured.
    data = {"time_step": 0.01, "ground": {"friction": 0.5},
            "bodies": [{"name": "ball", "shape": "sphere", "size": [0.1], "mass": 1.0,
                        "pose": [0, 0, 0.1, 0, 0, 0, 1], "velocity": [2, 0, 0, 0, 0, 0]}]}
    if model is not None:
        data["contact"] = {"model": model}
    sim = Simulator(scene_from_dict(data))
    while sim.t < 1.5 - 1e-9:
        sim.step()
    twist = sim.body_state("ball").twist
    tol = 2e-3 if model == "relaxed" else 1e-4
    assert twist[0] == pytest.approx(2.0 * 5.0 / 7.0, rel=tol)
    assert twist[4] * 0.1 == pytest.approx(twist[0], rel=1e-6)  # rolling: no slip left
