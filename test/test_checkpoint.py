"""A saved state resumes to the pivot: q, v and the solves' pivots equal an uninterrupted run."""

import dataclasses
import json
import os

import numpy as np
import pytest

from contact_lcp.contact.models import model_names
from contact_lcp.sim import Simulator
from contact_lcp.sim.checkpoint import SCHEMA, VERSION, CheckpointError
from contact_lcp.sim.state_codec import decode, encode

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")


def _scene(name):
    return os.path.join(CONFIG, name)


def _run(sim, steps):
    """(q, v, pivots, status) after each of ``steps`` steps."""
    out = []
    for _ in range(steps):
        info = sim.step()
        out.append((sim.q, sim.v, info.pivots, info.lcp_status))
    return out


def _same(a, b):
    assert len(a) == len(b)
    for k, ((qa, va, pa, sa), (qb, vb, pb, sb)) in enumerate(zip(a, b)):
        assert np.array_equal(qa, qb) and np.array_equal(va, vb), f"step {k}: state differs"
        assert (pa, sa) == (pb, sb), f"step {k}: solve differs"


# (scene, contact model or None for the scene's, steps before the save, steps after):
# a settling sphere pile (warm starts from the last basis, which the guess carries),
# a box tower, a closed loop, a box over a crack (facet sets), the relaxed and no-slip
# models, and a humanoid whose joints hold a command
CASES = [
    ("spheres_21.yaml", None, 40, 25),
    ("tower_5.yaml", None, 30, 20),
    ("hoist.yaml", None, 30, 20),
    ("cracked_ramp.yaml", None, 30, 20),
    ("spheres_21.yaml", "relaxed", 30, 15),
    ("legged_no_slip.yaml", None, 20, 15),
    ("spheres_21.yaml", "viscous", 30, 15),
]


@pytest.mark.parametrize("scene,model,before,after", CASES)
def test_a_resumed_run_steps_as_the_uninterrupted_one(tmp_path, scene, model, before, after):
    a = Simulator.from_file(_scene(scene), contact_model=model)
    _run(a, before)
    path = tmp_path / "state.npz"
    a.save_state(path)
    straight = _run(a, after)

    b = Simulator.from_file(_scene(scene), contact_model=model)
    b.load_state(path)
    assert b.t == pytest.approx(before * b.h)
    assert b.stats.steps == before
    resumed = _run(b, after)
    _same(straight, resumed)
    assert b.stats == a.stats  # the counters carry on too


def test_a_command_and_the_last_contacts_are_part_of_the_state(tmp_path):
    a = Simulator.from_file(_scene("humanoid_stand.yaml"))
    _run(a, 5)
    joint = a.joint_names[0]
    a.set_command("effort", [3.0], joints=[joint])
    _run(a, 2)
    a.save_state(tmp_path / "s.npz")
    wrench_a = a.contacts()
    straight = _run(a, 5)

    b = Simulator.from_file(_scene("humanoid_stand.yaml"))
    b.load_state(tmp_path / "s.npz")
    wrench_b = b.contacts()  # the last step's contacts, before any step of b
    assert len(wrench_a) == len(wrench_b) > 0
    assert np.array_equal(wrench_a[0].force_W, wrench_b[0].force_W)
    _same(straight, _run(b, 5))  # the effort command still acts (else the joint moves otherwise)

    c = Simulator.from_file(_scene("humanoid_stand.yaml"))
    c.load_state(tmp_path / "s.npz")
    # the fields a state file saves are every field that clear_commands sets
    ctrl = c.controls[0]
    for field in ctrl.COMMAND_FIELDS:
        delattr(ctrl, field)
    others = set(vars(ctrl))
    ctrl.clear_commands()
    assert set(vars(ctrl)) - others == set(ctrl.COMMAND_FIELDS)
    c.reset()  # and a reset forgets it like any command
    assert c.t == 0.0 and not any(ctrl.commanded for ctrl in c.controls)


def test_every_contact_model_keeps_nothing_between_solves():
    # What a model carries to the next step is the guess it returns, never an attribute:
    # a model that has solved many steps answers a problem exactly as a new one does
    # given the same guess.
    from contact_lcp.contact.models import make_model

    sim = Simulator.from_file(_scene("spheres_21.yaml"))
    for _ in range(30):
        sim.step()
    problem, guess = sim.stepper.data.problem, sim.stepper.data.guess
    assert problem is not None and guess is not None
    for name in model_names():
        used = make_model(name)
        if set(used.wants) - set(problem.extras):  # (facet sets: another collision)
            continue
        used.solve(problem, None)
        a = used.solve(problem, guess if isinstance(guess, used.GUESS or ()) else None)
        b = make_model(name).solve(problem, guess if isinstance(guess, used.GUESS or ()) else None)
        assert np.array_equal(a.f, b.f), name
        untimed = [dataclasses.replace(r.report, info={k: v for k, v in r.report.info.items()
                                                     if "time" not in k}) for r in (a, b)]
        assert untimed[0] == untimed[1], name


def test_a_state_of_another_scene_or_not_a_state_is_refused_by_name(tmp_path):
    a = Simulator.from_file(_scene("spheres_21.yaml"))
    a.step()
    a.save_state(tmp_path / "s.npz")
    other = Simulator.from_file(_scene("tower_5.yaml"))
    with pytest.raises(CheckpointError, match="another scene.*nq"):
        other.load_state(tmp_path / "s.npz")
    h = Simulator.from_file(_scene("spheres_21.yaml"), time_step=0.005)
    with pytest.raises(CheckpointError, match="time_step is 0.01 there, 0.005 here"):
        h.load_state(tmp_path / "s.npz")
    with pytest.raises(CheckpointError, match="does not exist"):
        other.load_state(tmp_path / "missing.pkl")
    (tmp_path / "junk.npz").write_bytes(b"not a state at all")
    with pytest.raises(CheckpointError, match="not a contact_lcp state file"):
        other.load_state(tmp_path / "junk.npz")
    with open(tmp_path / "other.npz", "wb") as f:
        np.savez(f, header=np.array(json.dumps({"schema": "other", "version": 2})))
    with pytest.raises(CheckpointError, match=f"expected a header of schema '{SCHEMA}'"):
        other.load_state(tmp_path / "other.npz")
    with open(tmp_path / "part.npz", "wb") as f:
        np.savez(f, header=np.array(json.dumps({"schema": SCHEMA, "version": VERSION, "state": {}})))
    with pytest.raises(CheckpointError, match="lacks .*'identity'"):
        other.load_state(tmp_path / "part.npz")
    assert other.t == 0.0  # a refused file leaves the simulator as it was


def test_the_bundled_pour_state_resumes_the_pour_where_its_run_stopped():
    """``benchmarks/data/spheres_200_pour.state``: the 200-sphere pour at t = 1.14 s, saved
    by the run of benchmarks/results/bench_large_20261125T022033Z_dd7110f_partial.csv, for
    ``bench_large.py spheres_200.yaml:2.0 --resume``. It loads into the bundled scene, and
    what it records is that run's: no failed solve, fallback or safe stop up to there,
    525 contacts with no penetration, the spheres inside the 0.4 m box. That run solved
    the pour with the pyramid model and no sleep (the scene's defaults then), so the state
    loads into the scene with those settings; its own (``auto``, sleep) refuse it."""
    import dataclasses

    from contact_lcp.sim import load_scene

    root = os.path.dirname(CONFIG)
    with pytest.raises(CheckpointError):
        Simulator.from_file(_scene("spheres_200.yaml")).load_state(
            os.path.join(root, "benchmarks", "data", "spheres_200_pour.state"))
    scene = load_scene(_scene("spheres_200.yaml"))
    sim = Simulator(scene.replace(contact=dataclasses.replace(scene.contact, model="pyramid",
                                                              sleep=False)))
    sim.load_state(os.path.join(root, "benchmarks", "data", "spheres_200_pour.state"))
    s = sim.stats
    assert sim.t == pytest.approx(1.14) and s.steps == 114
    assert s.lcp_failures == s.fallbacks == s.safe_stops == s.uncertified == 0
    contacts = sim.contacts()
    assert len(contacts) == 525 and min(c.distance for c in contacts) > -1e-9
    centres = sim.q.reshape(200, 7)[:, :3]  # (the box has no joint: q is the spheres)
    assert np.all(np.abs(centres[:, :2]) < 0.2) and np.all(centres[:, 2] > 0.0)
