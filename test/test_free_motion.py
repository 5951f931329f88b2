"""Free-flyer integration (contact_lcp.dynamics.free_flyer): torque-free motion is exact.

Closed forms used: a torque-free sphere keeps its centre-of-mass velocity; a torque-free
rigid body keeps its kinetic energy and |angular momentum| (Euler); a body rolling
without slip down a slope theta accelerates at g sin(theta) / (1 + I / (m r^2)), i.e.
5/7 g sin(theta) for a solid sphere and 2/3 g sin(theta) for a solid cylinder.
"""

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.dynamics import World
from contact_lcp.dynamics.free_flyer import FreeFlyers, euler_midpoint
from contact_lcp.dynamics.reduced import FreeMotion
from contact_lcp.dynamics.specs import BodySpec, RobotSpec
from contact_lcp.sim.scene_loader import scene_from_dict
from contact_lcp.sim.simulator import Simulator

G = 9.81


def free_scene(body, h, gravity=(0.0, 0.0, 0.0)):
    return scene_from_dict(dict(time_step=h, duration=1.0, gravity=list(gravity),
                                ground=False, bodies=[body]))


def world_velocity(sim, body=0):
    """(v_W of the body origin, w_W) [m/s, rad/s] of a free body of the simulator."""
    info = sim.world.bodies[body]
    R = sim.world.data.oMi[info.joint].rotation
    v = sim.v[info.v_slice]
    return R @ v[:3], R @ v[3:]


def test_spinning_sphere_keeps_its_speed():
    # omega h = 1 rad per step: the explicit body-frame Coriolis term multiplied |v| by
    # sqrt(2) per step (145 m/s after 1 s). Exact scheme: only round-off, ~1e-16 per step.
    body = dict(name="ball", shape="sphere", size=[0.1], mass=1.0,
                pose=[0, 0, 0, 0, 0, 0, 1], velocity=[1.0, 0, 0, 0, 0, 100.0])
    sim = Simulator(free_scene(body, 0.01))
    for _ in range(100):
        sim.step()
        v_W, w_W = world_velocity(sim)
        assert abs(np.linalg.norm(sim.v[:3]) - 1.0) < 1e-9  # |v| in the body frame
        assert np.allclose(v_W, [1.0, 0, 0], atol=1e-9) and np.allclose(w_W, [0, 0, 100.0])
    assert np.allclose(sim.world.data.oMi[1].translation, [1.0, 0, 0], atol=1e-9)


def test_spinning_sphere_in_gravity_keeps_horizontal_velocity():
    body = dict(name="ball", shape="sphere", size=[0.1], mass=1.0,
                pose=[0, 0, 0, 0, 0, 0, 1], velocity=[1.0, 0.5, 0, 30.0, 50.0, 100.0])
    sim = Simulator(free_scene(body, 0.01, (0, 0, -G)))
    for _ in range(100):
        sim.step()
    v_W, _ = world_velocity(sim)
    # symplectic Euler on gravity: v_z exact, z = -g h^2 n (n + 1) / 2
    assert np.allclose(v_W, [1.0, 0.5, -G * 1.0], atol=1e-9)
    assert np.allclose(sim.world.data.oMi[1].translation,
                       [1.0, 0.5, -G * 0.01**2 * 100 * 101 / 2], atol=1e-9)


def test_box_near_intermediate_axis_keeps_energy():
    # Inertias 1 : 3.25 : 4.25 (x 1/12); spin about y (intermediate) with a small
    # perturbation: the body flips (Dzhanibekov) about every ~2.5 s. The implicit-midpoint
    # Euler step conserves w'Iw and |Iw| up to its Newton tolerance (1e-13 relative), so
    # the 0.1 % bound holds with a wide margin; the flip shows the motion is the
    # unstable one and not a trivially steady spin.
    body = dict(name="box", shape="box", size=[0.1, 0.2, 0.3], mass=1.0,
                pose=[0, 0, 0, 0, 0, 0, 1], velocity=[0, 0, 0, 0.01, 5.0, 0.01])
    sim = Simulator(free_scene(body, 0.01))
    I = np.array(sim.world.model.inertias[1].inertia)
    w0 = sim.v[3:]
    E0, L0 = 0.5 * w0 @ I @ w0, np.linalg.norm(I @ w0)
    E, L, wy = [], [], []
    for _ in range(2000):
        sim.step()
        w = sim.v[3:]
        E.append(0.5 * w @ I @ w), L.append(np.linalg.norm(I @ w)), wy.append(w[1])
    assert max(E) <= E0 * (1 + 1e-3)
    assert np.allclose(E, E0, rtol=1e-9) and np.allclose(L, L0, rtol=1e-9)
    assert min(wy) < -4.0 and max(wy) > 4.0  # it flipped


def test_euler_midpoint_conserves_energy_and_momentum():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(3, 3))
    I = A @ A.T + np.eye(3)
    w = rng.normal(size=3) * 20
    w1 = euler_midpoint(I, w, np.zeros(3), 0.05)
    assert np.isclose(w1 @ I @ w1, w @ I @ w, rtol=1e-12)
    assert np.isclose(np.linalg.norm(I @ w1), np.linalg.norm(I @ w), rtol=1e-12)
    # with a torque: first-order consistent, I dw = h n for small h and w = 0
    n = np.array([1.0, -2.0, 0.5])
    assert np.allclose(I @ euler_midpoint(I, np.zeros(3), n, 1e-6), 1e-6 * n, rtol=1e-5)


URDF_OFFSET = """<robot name="link"><link name="base"><inertial><origin xyz="0.3 -0.1 0.2"/>
<mass value="2"/><inertia ixx="0.02" iyy="0.05" izz="0.04" ixy="0" ixz="0" iyz="0"/>
</inertial></link></robot>"""

URDF_TWO = """<robot name="two">
 <link name="base"><inertial><origin xyz="0.05 0.02 0"/><mass value="2"/>
  <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial></link>
 <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
  <inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
 <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
  <origin xyz="0.1 0 0"/><axis xyz="0 0 1"/><limit lower="-9" upper="9" effort="0" velocity="0"/>
 </joint></robot>"""


def _com_velocity_and_energy(world, q, v):
    d = world.model.createData()
    pin.centerOfMass(world.model, d, q, v)
    M = pin.crba(world.model, d, q)
    M = np.triu(M) + np.triu(M, 1).T
    return d.vcom[0].copy(), 0.5 * v @ M @ v


def _fly(world, v, h, steps, **free_motion_args):
    fm = FreeMotion(world)
    q = world.q0.copy()
    for _ in range(steps):
        v_free, _ = fm(q, v, np.zeros_like(v), h, **free_motion_args)
        q, v = world.integrate_state(q, v_free, h)
    return q, v


def test_lone_link_with_offset_com_moves_its_com_in_a_straight_line():
    # A one-link robot whose centre of mass is off the joint origin: its reference point
    # is the centre of mass, so torque-free flight is exact (straight line, same energy).
    world = World([RobotSpec("r", urdf_string=URDF_OFFSET)], gravity=(0, 0, 0),
                  ground_height=None)
    flyers = FreeFlyers(world.model)
    assert flyers.single_body == [True] and flyers._I.shape == (1, 3, 3)
    v0 = np.array([0.5, -0.2, 0.1, 3.0, -7.0, 11.0])
    c0, E0 = _com_velocity_and_energy(world, world.q0, v0)
    q, v = _fly(world, v0, 0.01, 200)
    c1, E1 = _com_velocity_and_energy(world, q, v)
    assert np.allclose(c1, c0, atol=1e-12) and np.isclose(E1, E0, rtol=1e-10)
    d = world.model.createData()
    pin.centerOfMass(world.model, d, world.q0)
    com0 = d.com[0].copy()
    pin.centerOfMass(world.model, d, q)
    assert np.allclose(d.com[0], com0 + 2.0 * c0, atol=1e-10)


@pytest.mark.parametrize("h, com_tol", [(0.01, 0.15), (0.001, 0.015)])
def test_articulated_floating_base_spinning(h, com_tol):
    # Floating base + one revolute joint spinning at 10 rad/s in zero gravity. Only the
    # frame change is exact here; the joint's velocity-product terms stay explicit
    # (first order), so the centre-of-mass velocity drifts O(h): measured 10 % at 10 ms,
    # 1 % at 1 ms over 1 s (the explicit body-frame scheme: 85 % and 6 %). Bound: 1.5x
    # the measured first-order drift.
    world = World([RobotSpec("r", urdf_string=URDF_TWO)], gravity=(0, 0, 0),
                  ground_height=None)
    # no lone body: the kernels get no inertias, and numba leaves the exact step of a
    # lone body out of a robot's compilation (a first run's seconds)
    flyers = FreeFlyers(world.model)
    assert flyers.single_body == [False] and flyers._I is None
    v0 = np.zeros(world.model.nv)
    v0[:3], v0[3:6], v0[6] = [1.0, 0, 0], [0, 0, 10.0], 2.0
    c0, _ = _com_velocity_and_energy(world, world.q0, v0)
    q, v = _fly(world, v0, h, int(round(1.0 / h)))
    c1, _ = _com_velocity_and_energy(world, q, v)
    assert np.linalg.norm(c1 - c0) < com_tol * np.linalg.norm(c0)


def test_prescribed_and_armature_paths_keep_the_exact_free_body():
    # A robot with a prescribed joint next to a free ball: the ball's free velocity is the
    # exact one on every path of FreeMotion.
    world = World([RobotSpec("r", urdf_string=URDF_TWO)],
                  [BodySpec("ball", "sphere", (0.1,), 1.0)], gravity=(0, 0, -G),
                  ground_height=None)
    fm = FreeMotion(world)
    nv, h = world.model.nv, 0.01
    q = world.q0.copy()
    v = np.zeros(nv)
    ball = world.bodies[0].v_slice
    v[ball] = [1.0, 0, 0, 0, 0, 100.0]
    tau = np.zeros(nv)
    expect = np.array([1.0, 0, -G * h, 0, 0, 100.0])  # body frame = world frame at q0
    arm = np.zeros(nv)
    arm[6] = 0.3
    for kwargs in ({}, {"armature": arm},
                   {"prescribed": np.array([6]), "v_prescribed": np.array([0.5])}):
        v_free, K = fm(q, v, tau, h, **kwargs)
        assert np.allclose(v_free[ball], expect, atol=1e-12), kwargs
        assert np.allclose(K, K.T)
    v_free, K = fm(q, v, tau, h, prescribed=np.array([6]), v_prescribed=np.array([0.5]))
    assert v_free[6] == 0.5 and np.all(K[6] == 0)


def test_integrate_keeps_world_velocity():
    world = World([], [BodySpec("b", "box", (0.1, 0.2, 0.3), 1.0,
                                pose=(0, 0, 1, 0.2, 0.3, 0.1, 0.927))], ground_height=None)
    q = world.q0
    v = np.array([0.3, -1.0, 2.0, 4.0, 5.0, -6.0])
    q1, v1 = world.integrate_state(q, v, 0.05)
    assert np.array_equal(world.integrate(q, v, 0.05), q1)
    R0 = pin.Quaternion(q[6], *q[3:6]).toRotationMatrix()
    R1 = pin.Quaternion(q1[6], *q1[3:6]).toRotationMatrix()
    assert np.allclose(R1, R0 @ pin.exp3(0.05 * v[3:]))
    assert np.allclose(R1 @ v1[:3], R0 @ v[:3]) and np.array_equal(v1[3:], v[3:])
    assert np.allclose(q1[:3], q[:3] + 0.05 * R0 @ v[:3])


# ------------------------------------------------------------ rolling without slip
def rolling_scene(shape, theta_deg, h, v0=0.0, r=0.3):
    th = np.radians(theta_deg)
    s = np.sqrt(0.5)
    pose = [0, 0, r, 0, 0, 0, 1] if shape == "sphere" else [0, 0, r, s, 0, 0, s]
    size = [r] if shape == "sphere" else [r, 0.2]  # cylinder axis (body z) along world y
    body = dict(name="b", shape=shape, size=size, mass=1.0, pose=pose,
                velocity=[v0, 0, 0, 0, v0 / r, 0])
    # the slope is modelled by tilting gravity (downhill = +x), as config/incline.yaml
    return scene_from_dict(dict(time_step=h, duration=1.0,
                                gravity=[G * np.sin(th), 0.0, -G * np.cos(th)],
                                ground=dict(height=0.0, friction=0.8), bodies=[body]))


def roll(shape, theta_deg, h, T, v0=0.0):
    sim = Simulator(rolling_scene(shape, theta_deg, h, v0))
    t, x = [], []
    for _ in range(int(round(T / h))):
        sim.step()
        t.append(sim.t), x.append(sim.world.data.oMi[1].translation.copy())
    return np.array(t), np.array(x)


@pytest.mark.parametrize("shape, k", [("sphere", 5 / 7), ("cylinder", 2 / 3)])
@pytest.mark.parametrize("theta", [10.0, 20.0])
@pytest.mark.parametrize("h", [0.001, 0.01])
def test_rolling_down_a_slope(shape, k, theta, h):
    # (a tilted cylinder rim gives its lowest point only: its 8 samples used to enter the
    # LCP near the bottom and act as the corners of a polygon, -0.8 to -1.2 % at 10 ms)
    t, x = roll(shape, theta, h, 1.0 if h == 0.01 else 0.5)
    # x = x0 + v0 t + a t^2 / 2 (symplectic Euler adds a*h*t/2: absorbed by the linear term)
    a = np.linalg.lstsq(np.c_[np.ones_like(t), t, 0.5 * t**2], x[:, 0], rcond=None)[0][2]
    a_ref = k * G * np.sin(np.radians(theta))
    assert abs(a / a_ref - 1) < 3e-3, f"a = {a:.5f}, 5/7 or 2/3 g sin = {a_ref:.5f}"
    # planar, and no hop: 1 mm is far below the 23 mm a cylinder's 8-sample rim polygon
    # could lift it (0.3 (1 - cos 22.5 deg))
    assert np.all(np.abs(x[:, 1]) < 1e-6) and np.all(np.abs(x[:, 2] - 0.3) < 1e-3)


@pytest.mark.parametrize("shape", ["sphere", "cylinder"])
@pytest.mark.parametrize("h", [0.001, 0.01])
def test_rolling_on_level_ground_keeps_speed(shape, h):
    # 3 m/s with omega = v / r = 10 rad/s: was 682 m/s after 2 s at 10 ms.
    T = 2.0
    t, x = roll(shape, 0.0, h, T, v0=3.0)
    speed = np.diff(x[:, 0]) / h
    assert np.all(np.abs(speed / 3.0 - 1) < 5e-3), f"speed {speed.min()} .. {speed.max()}"


def test_three_by_three_solve_is_numpy_s():
    # the free flyers' Newton step solves its 3 x 3 system written out (no LAPACK call):
    # numpy's solution to round-off, pivoting on a zero leading entry and on a small one
    from contact_lcp.dynamics.free_flyer import _solve3_in_place

    rng = np.random.default_rng(7)
    for trial in range(200):
        A, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
        if trial % 3 == 1:
            A[0, 0] = 0.0
        elif trial % 3 == 2:
            A[0, 0] = 1e-12
        x = b.copy()
        _solve3_in_place(A.copy(), x)
        np.testing.assert_allclose(A @ x, b, rtol=0, atol=1e-12 * np.linalg.cond(A))
