#!/usr/bin/env python3
"""Physical fidelity: our error and MuJoCo's on the same closed-form scenes, same run.

Each row is one scene with a closed-form answer (issue 9), run in our simulator
(``Simulator(scene_from_dict(...))``, default contact settings unless the row says) and
in MuJoCo (MJCF built here, MuJoCo's defaults: soft contacts, pyramidal cone, Euler
integrator, ``condim`` 3). Errors are relative to the closed form unless the row says.

* **spin** — a sphere (r = 0.1 m, 1 kg) at 1 m/s spinning at 100 rad/s in zero gravity,
  h = 10 ms, 1 s: |v| error. A box 0.1 x 0.2 x 0.3 m spinning at 5 rad/s about its
  intermediate axis (0.01 rad/s on the others), h = 10 ms, 20 s: largest kinetic-energy
  gain (0 is exact; the issue's bound 0.1 %).
* **roll** — sphere and cylinder (r = 0.3 m, 1 kg, mu 0.8) rolling from rest down 10 and
  20 degrees (gravity tilted, as ``config/incline.yaml``), h = 1 and 10 ms, 1 s:
  acceleration fitted on t in [0.1, 1] s against 5/7 and 2/3 g sin(theta). **level** —
  the same bodies at 3 m/s (omega = v / r) on level ground for 2 s: largest speed error.
* **impact** — the sphere reaching the ground at 1, 10, 50 m/s (h = 1 ms): rebound speed
  over impact speed (0 for the inelastic contact both simulators model).
* **slide** — a box 0.2 x 0.2 x 0.1 m, 1 kg, mu = 0.5, launched at 2 m/s along 8
  directions 10 + 45 k degrees (h = 1 ms; generic: along no pyramid edge or face centre of
  either simulator): worst stop-distance error against v^2 / (2 mu g) = 0.4077 m, and
  worst sideways drift [m] (absolute). MuJoCo's default pyramid has 4 edges
  (``|f_x| + |f_y| <= mu f_n``), ours 8 (``contact.friction_directions``).

Writes ``benchmarks/results/bench_fidelity_<stamp>_<revision>.csv`` and prints the table.

Usage::

    .venv/bin/python benchmarks/bench_fidelity.py          # about a minute
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

G = 9.81
COLUMNS = ("revision", "date", "group", "case", "quantity", "reference", "ours", "ours_error",
           "mujoco", "mujoco_error", "mujoco_version", "notes")


# ------------------------------------------------------------------ our simulator
class Ours:
    """One free body in our simulator; ``state()`` = (p_W, v_W, w_W) of its origin."""

    def __init__(self, body, h, gravity, ground_mu=None):
        from contact_lcp.sim import Simulator
        from contact_lcp.sim.scene_loader import scene_from_dict

        ground = False if ground_mu is None else dict(height=0.0, friction=ground_mu)
        self.sim = Simulator(scene_from_dict(dict(time_step=h, duration=1.0, gravity=list(gravity),
                                                  ground=ground, bodies=[body])))
        self.h = h
        self.I = np.array(self.sim.world.model.inertias[1].inertia)

    def step(self):
        self.sim.step()

    def state(self):
        R = self.sim.world.data.oMi[1].rotation
        v = self.sim.v
        return self.sim.world.data.oMi[1].translation.copy(), R @ v[:3], R @ v[3:]

    def spin_energy(self):
        w = self.sim.v[3:]
        return 0.5 * w @ self.I @ w


def our_body(shape, size, mass, pose, velocity, friction=None):
    body = dict(name="b", shape=shape, size=list(size), mass=mass, pose=list(pose),
                velocity=list(velocity))
    if friction is not None:
        body["friction"] = friction
    return body


# ------------------------------------------------------------------ MuJoCo
def _mujoco():
    try:
        import mujoco
    except ImportError:
        return None
    return mujoco


class Peer:
    """The same free body in MuJoCo (free joint: linear velocity in W, angular in B)."""

    def __init__(self, mujoco, shape, size, mass, pose, velocity, h, gravity, ground_mu=None):
        if shape == "box":
            sizes = " ".join(str(s / 2) for s in size)  # MJCF: half extents
        elif shape == "cylinder":
            sizes = f"{size[0]} {size[1] / 2}"  # radius, half length
        else:
            sizes = f"{size[0]}"
        mu = 1.0 if ground_mu is None else ground_mu
        floor = (f'<geom type="plane" size="0 0 1" friction="{mu} 0.005 0.0001"/>'
                 if ground_mu is not None else "")
        x, y, z, qx, qy, qz, qw = pose
        xml = f"""<mujoco><option timestep="{h}" gravity="{gravity[0]} {gravity[1]} {gravity[2]}"/>
          <worldbody>{floor}<body pos="{x} {y} {z}" quat="{qw} {qx} {qy} {qz}"><freejoint/>
          <geom type="{shape}" size="{sizes}" mass="{mass}" friction="{mu} 0.005 0.0001"/>
          </body></worldbody></mujoco>"""
        self.mj = mujoco
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.d = mujoco.MjData(self.m)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, np.array([qw, qx, qy, qz]))
        R = R.reshape(3, 3)
        self.d.qvel[:3] = velocity[:3]
        self.d.qvel[3:] = R.T @ np.asarray(velocity[3:], dtype=float)
        mujoco.mj_forward(self.m, self.d)
        self.I = np.diag(self.m.body_inertia[1])  # principal axes = body axes here

    def step(self):
        self.mj.mj_step(self.m, self.d)

    def state(self):
        R = self.d.xmat[1].reshape(3, 3)
        return self.d.qpos[:3].copy(), self.d.qvel[:3].copy(), R @ self.d.qvel[3:]

    def spin_energy(self):
        w = self.d.qvel[3:]
        return 0.5 * w @ self.I @ w


# ------------------------------------------------------------------ scenes
def run_spin(make):
    sim = make("sphere", (0.1,), 1.0, (0, 0, 0, 0, 0, 0, 1), (1.0, 0, 0, 0, 0, 100.0), 0.01,
               (0, 0, 0), None)
    for _ in range(100):
        sim.step()
    return float(np.linalg.norm(sim.state()[1]))


def run_box_energy(make):
    sim = make("box", (0.1, 0.2, 0.3), 1.0, (0, 0, 0, 0, 0, 0, 1), (0, 0, 0, 0.01, 5.0, 0.01),
               0.01, (0, 0, 0), None)
    E0, E_max = sim.spin_energy(), -np.inf
    for _ in range(2000):
        sim.step()
        E_max = max(E_max, sim.spin_energy())
    return E_max / E0 - 1.0


def _roll_body(shape, r=0.3, v0=0.0):
    s = np.sqrt(0.5)
    if shape == "sphere":
        return (r,), (0, 0, r, 0, 0, 0, 1), (v0, 0, 0, 0, v0 / r, 0)
    return (r, 0.2), (0, 0, r, s, 0, 0, s), (v0, 0, 0, 0, v0 / r, 0)


def run_roll(make, shape, theta_deg, h, T=1.0):
    size, pose, vel = _roll_body(shape)
    th = np.radians(theta_deg)
    sim = make(shape, size, 1.0, pose, vel, h, (G * np.sin(th), 0, -G * np.cos(th)), 0.8)
    t, x = [], []
    for k in range(int(round(T / h))):
        sim.step()
        t.append((k + 1) * h), x.append(sim.state()[0][0])
    t, x = np.array(t), np.array(x)
    keep = t >= 0.1 * T
    A = np.c_[np.ones(keep.sum()), t[keep], 0.5 * t[keep] ** 2]
    return float(np.linalg.lstsq(A, x[keep], rcond=None)[0][2])


def run_level(make, shape, h, T=2.0, v0=3.0):
    size, pose, vel = _roll_body(shape, v0=v0)
    sim = make(shape, size, 1.0, pose, vel, h, (0, 0, -G), 0.8)
    worst = 0.0
    for _ in range(int(round(T / h))):
        sim.step()
        worst = max(worst, abs(sim.state()[1][0] / v0 - 1.0))
    return worst


def run_impact(make, speed, h=0.001, r=0.1, T=0.4):
    gap = 0.01
    # start `gap` above the ground with the speed that reaches `speed` at contact
    v_start = np.sqrt(max(speed**2 - 2 * G * gap, 0.0))
    sim = make("sphere", (r,), 1.0, (0, 0, r + gap, 0, 0, 0, 1), (0, 0, -v_start, 0, 0, 0), h,
               (0, 0, -G), 0.8)
    rebound = 0.0
    for _ in range(int(round(T / h))):
        sim.step()
        rebound = max(rebound, sim.state()[1][2])
    return rebound / speed


def run_slide(make, angle, v0=2.0, mu=0.5, h=0.001, T=0.7):
    d = np.array([np.cos(angle), np.sin(angle), 0.0])
    sim = make("box", (0.2, 0.2, 0.1), 1.0, (0, 0, 0.05, 0, 0, 0, 1), tuple(v0 * d) + (0, 0, 0), h,
               (0, 0, -G), mu)
    p0 = sim.state()[0]
    for _ in range(int(round(T / h))):
        sim.step()
    dp = sim.state()[0] - p0
    along = float(dp @ d)
    side = float(np.linalg.norm(dp[:2] - along * d[:2]))
    return along, side


# ------------------------------------------------------------------ driver
def makers():
    def ours(shape, size, mass, pose, vel, h, gravity, mu):
        friction = None if mu is None else mu
        return Ours(our_body(shape, size, mass, pose, vel, friction), h, gravity, mu)

    mujoco = _mujoco()
    peer = None
    if mujoco is not None:
        def peer(shape, size, mass, pose, vel, h, gravity, mu):
            return Peer(mujoco, shape, size, mass, pose, vel, h, gravity, mu)
    return ours, peer, ("" if mujoco is None else mujoco.__version__)


def rows(quick=False):
    ours, peer, version = makers()

    def both(fn, *args):
        a = fn(ours, *args)
        b = fn(peer, *args) if peer is not None else None
        return a, b

    out = []

    def add(group, case, quantity, ref, a, b, rel=True, notes=""):
        def err(x):
            if x is None:
                return None
            return (x / ref - 1.0) if rel else x - ref
        out.append(dict(group=group, case=case, quantity=quantity, reference=ref, ours=a,
                        ours_error=err(a), mujoco=b, mujoco_error=err(b),
                        mujoco_version=version or "not installed", notes=notes))

    add("spin", "sphere w=100 h=10ms 1s", "|v| [m/s]", 1.0, *both(run_spin))
    add("spin", "box intermediate axis 20s", "max KE gain", 0.0, *both(run_box_energy), rel=False)
    for shape, k in (("sphere", 5 / 7), ("cylinder", 2 / 3)):
        for theta in (10.0, 20.0):
            for h in ((0.01,) if quick else (0.001, 0.01)):
                ref = k * G * np.sin(np.radians(theta))
                add("roll", f"{shape} {theta:g}deg h={h * 1e3:g}ms", "a [m/s^2]", ref,
                    *both(run_roll, shape, theta, h))
    for shape in ("sphere", "cylinder"):
        for h in ((0.01,) if quick else (0.001, 0.01)):
            add("level", f"{shape} 3 m/s h={h * 1e3:g}ms 2s", "max |speed/3 - 1|", 0.0,
                *both(run_level, shape, h), rel=False)
    for speed in (1.0, 10.0, 50.0):
        add("impact", f"sphere at {speed:g} m/s h=1ms", "rebound / impact speed", 0.0,
            *both(run_impact, speed), rel=False)
    angles = np.radians(10.0 + 45.0 * np.arange(8))
    res_o = [run_slide(ours, a) for a in angles]
    res_p = [run_slide(peer, a) for a in angles] if peer is not None else None
    d_ref = 2.0**2 / (2 * 0.5 * G)

    def worst_dist(res):
        return None if res is None else max((r[0] for r in res), key=lambda x: abs(x - d_ref))

    def worst_side(res):
        return None if res is None else max(r[1] for r in res)

    pyramids = "ours: 8-edge pyramid; MuJoCo: its default 4-edge pyramid"
    add("slide", "box mu=0.5 2 m/s, 8 directions", "worst stop distance [m]", d_ref,
        worst_dist(res_o), worst_dist(res_p), notes=pyramids)
    add("slide", "box mu=0.5 2 m/s, 8 directions", "worst sideways drift [m]", 0.0,
        worst_side(res_o), worst_side(res_p), rel=False, notes=pyramids)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="h = 10 ms rows only")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    table = rows(quick=args.quick)
    for r in table:
        r.update(revision=revision, date=date)
    print(common.format_table(table, ["case", "quantity", "reference", "ours", "ours_error",
                                      "mujoco", "mujoco_error"]))
    path = common.write_csv(common.results_path("bench_fidelity", revision, stamp,
                                                args.results_dir), table, COLUMNS)
    print(f"\n{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
