"""The simulator: a scene's world, its controllers, and one certified LCP per step."""

import dataclasses
import math

import numpy as np

from contact_lcp.contact.models import make_model, model_class
from contact_lcp.dynamics import sparse_rows
from contact_lcp.dynamics.reduced import FreeMotion
from contact_lcp.dynamics.world import all_finite
from contact_lcp.exceptions import ContactLCPError, ContactLimitError, InvalidProblem, SceneError
from contact_lcp.lcp import budget
from contact_lcp.sim.control import CommandError, RobotControl
from contact_lcp.sim.joint_angles import JointPositions
from contact_lcp.sim.scene import model_settings
from contact_lcp.sim.scene_loader import load_scene, solver_options
from contact_lcp.sim.sleep import Sleep
from contact_lcp.sim.stats import SimStats, StepInfo
from contact_lcp.sim.stepper import Stepper
from contact_lcp.sim.views import SimulatorViews, check_link
from contact_lcp.sim.compile_ahead import compile_ahead


class SimulationError(ContactLCPError, RuntimeError):
    """A step that could not be taken: its next state would not be finite, or it met
    more contacts than the scene allows (``contact.max_contacts``). The simulator keeps
    the last state."""


class Simulator(SimulatorViews):
    """Simulate a :class:`contact_lcp.sim.scene.Scene`.

    Parameters
    ----------
    scene : Scene
    """

    def __init__(self, scene):
        from contact_lcp.collision import ContactDetector
        from contact_lcp.dynamics import World

        if not scene.robots and not scene.bodies:
            raise SceneError("the scene has neither robots nor bodies: nothing to simulate")
        ahead = compile_ahead()  # on a cold cache: the shared kernels in a second process
        self.scene = scene
        self.h = float(scene.time_step)
        self.world = World(
            [r.robot for r in scene.robots], scene.bodies, gravity=scene.gravity,
            ground_height=None if scene.ground is None else scene.ground.height,
            mesh_mode=scene.contact.meshes, whole=bool(scene.loops))
        c = scene.contact
        self.detector = ContactDetector(
            self.world, activation_distance=c.activation(self.h),
            reduction_distance=c.reduction_distance, remove_interior=c.remove_interior,
            flat_tolerance=c.flat_tolerance, self_collision=c.self_collision,
            max_points_per_pair=c.max_points_per_pair,
            ground_friction=0.0 if scene.ground is None else scene.ground.friction,
            default_friction=c.friction)
        self.model = make_model(c.model, model_settings(scene))
        # many small trees, islands solved alone: K and the contact rows stay sparse
        sparse = sparse_rows.wanted(self.world, c.islands and self.model.islands)
        self.free_motion = FreeMotion(self.world, sparse=sparse)
        self.loops = None
        if scene.loops:
            from contact_lcp.dynamics.loops import LoopClosures

            self.loops = LoopClosures(self.world, scene.loops, self.world.q0, gamma=c.stabilization)
        self.stepper = Stepper(self.world, self.detector, self.free_motion, self.model, c, self.h,
                               loops=self.loops, sparse=sparse)
        self.sleep = (Sleep(self.world, c.sleep_speed, c.sleep_time, self.h) if c.sleep
                      else None)
        self.controls = [RobotControl(self.world, info, spec.controller, self.world.q0)
                         for info, spec in zip(self.world.robots, scene.robots)]
        # the step's budget (its time limit set each step, see step())
        self._budget = budget.opened(math.inf)
        self.joint_names = [n for r in self.world.robots for n in r.joint_names]
        self._joint_positions = JointPositions(self.world.robots)  # continuous joints unwrapped
        self._joint_owner = {n: (i, j) for i, r in enumerate(self.world.robots)
                             for j, n in enumerate(r.joint_names)}
        for link in scene.output.wrench_links + scene.output.imu_links:
            check_link(self, link)
        self.record_problems = False
        self.recorded_problems = []
        self.reset()
        try:
            self.stepper.check_contacts(self.detector.detect(self._q), c.max_initial_penetration)
        except InvalidProblem as e:
            raise SceneError(f"{scene.path or 'scene'}: {e}") from None
        if ahead is not None:
            # the integrator, which the first step needs after the contact model's solve:
            # compiled now, while the second process compiles the solve's kernels, rather
            # than after the first step has waited for them (a result discarded)
            self.world.integrate_state(self._q, np.zeros(self.world.model.nv), self.h,
                                       trusted=True)

    @classmethod
    def from_file(cls, path, *, robot_description=None, time_step=None, solver_method=None,
                  contact_model=None):
        """Load a scene file, optionally replacing the first robot's URDF, h, the LCP method
        or the contact model."""
        scene = load_scene(path)
        if contact_model is not None:
            model_class(contact_model)  # an unknown name fails here, listing the known ones
            scene = scene.replace(contact=dataclasses.replace(scene.contact, model=contact_model))
        if robot_description is not None:
            if not scene.robots:
                raise SceneError(f"{path}: robot_description given but the scene has no robot")
            r0 = scene.robots[0]
            r0 = dataclasses.replace(
                r0, robot=dataclasses.replace(r0.robot, urdf_string=robot_description))
            scene = scene.replace(robots=(r0,) + scene.robots[1:])
        if time_step is not None:
            if not (np.isfinite(time_step) and time_step > 0):
                raise SceneError(f"time_step: expected a number > 0, got {time_step!r}")
            scene = scene.replace(time_step=float(time_step))
        if solver_method is not None:
            from contact_lcp.lcp import METHODS

            if solver_method not in METHODS:
                raise SceneError(f"solver_method: expected one of {sorted(METHODS)}, got {solver_method!r}")
            # the scene's options are for its own method: checked again for this one
            options = solver_options(solver_method, scene.solver.options)
            scene = scene.replace(solver=dataclasses.replace(scene.solver, method=solver_method,
                                                             options=options))
        return cls(scene)

    # ------------------------------------------------------------------ state
    def reset(self):
        """Back to the scene's initial state (t = 0, counters zeroed, commands cleared)."""
        self.t = 0.0
        self._q = self.world.q0.copy()
        self._v = self.world.v0.copy()
        self._joint_positions.reset(self._q)
        self._applied = None
        for c in self.controls:
            c.clear_commands()
        self.stats = SimStats()
        self._last = None
        if self.sleep is not None:
            self.sleep.reset()
        self.stepper.data.clear()
        self.world.forward(self._q, self._v)

    def save_state(self, path):
        """Write the state to ``path``: :meth:`load_state` on a simulator of the same scene
        then steps as this one would (:mod:`contact_lcp.sim.checkpoint`)."""
        from contact_lcp.sim.checkpoint import save_state

        save_state(self, path)

    def load_state(self, path):
        """Carry on from a state file of :meth:`save_state` (same scene; the contact
        model's memory, commands and counters included).

        Raises
        ------
        contact_lcp.sim.checkpoint.CheckpointError
            Not a state file, or saved from another world, time step or contact model.
        """
        from contact_lcp.sim.checkpoint import load_state

        load_state(self, path)

    @property
    def islands(self):
        """Contact islands of the last step (:mod:`contact_lcp.contact.islands`; 1 for a
        problem solved whole, 0 without contact)."""
        if self._last is None or not len(self._last.contacts):
            return 0
        return int(self._last.report.info.get("islands", 1))

    @property
    def sleeping_bodies(self):
        """Free bodies asleep now (:mod:`contact_lcp.sim.sleep`; 0 with sleep off)."""
        return 0 if self.sleep is None else self.sleep.count

    @property
    def q(self):
        """Configuration (nq,) in Pinocchio's convention: robots in scene order, then bodies."""
        return self._q.copy()

    @property
    def v(self):
        """Generalized velocity (nv,) (free-flyer velocities in the body's local frame)."""
        return self._v.copy()

    def step(self):
        """Advance one time step; see :func:`contact_lcp.sim.stepper.advance`.

        Raises
        ------
        SimulationError
            When the next state would not be finite, or the step met more contacts than
            ``contact.max_contacts`` (the state is left unchanged).
        """
        tau, arm, pres_idx, pres_v = self._control()
        # One budget for all the step's LCP solves: the scene's solver option
        # ``time_limit`` [s] if it sets one, else none, so that a run's outcome does not
        # depend on how fast the machine is (pivot budgets bound every method anyway; a
        # solve's own default limit is for callers of solve()). Ctrl-C still reaches the
        # compiled pivot loops through it.
        step_budget = self._budget
        step_budget.time_limit = self.model.settings.solver_options.get("time_limit") or math.inf
        try:
            with step_budget:
                q1, v1, rec = self.stepper.step(self._q, self._v, tau, armature=arm,
                                                prescribed=pres_idx, v_prescribed=pres_v,
                                                sleep=self.sleep)
        except ContactLimitError as e:  # more contacts than the scene allows
            self.world.forward(self._q, self._v)
            raise SimulationError(f"the step from t = {self.t:.4f} s stopped: {e}; the "
                                  "simulator keeps the last state") from e
        except InvalidProblem as e:  # NaN or inf met inside the step: the numerics blew up
            self.world.forward(self._q, self._v)
            raise SimulationError(f"{self._not_finite()} ({e})") from e
        if not all_finite(q1, v1):
            self.world.forward(self._q, self._v)
            raise SimulationError(self._not_finite())
        self.stats.add(rec.report)
        if self.sleep is not None:
            self.sleep.update(v1, rec.contacts)
        if rec.projection is not None:  # its LCP counts as the contact solves do
            self.stats.add_projection(rec.projection)
        if self.record_problems and rec.problem is not None:
            self.recorded_problems.append(rec.problem)
        # the torque the implicit servos applied (evaluated at the end of the step),
        # computed when read (applied_torques)
        self._applied = (tau, arm, v1, self._v)
        self._q, self._v, self._last = q1, v1, rec
        self._joint_positions.advance(q1)
        self.t += self.h
        self.world.forward(self._q, self._v, trusted=True)  # checked above
        return StepInfo(self.t, rec.contacts.size, rec.num_active, rec.report,
                        rec.max_penetration, rec.timings)

    def _not_finite(self):
        return (f"the state after t = {self.t:.4f} s would not be finite; the simulator "
                "keeps the last finite state")

    def applied_torques(self):
        """(nv,) generalized force the controllers applied over the last step [N.m or N]:
        implicit servos evaluated at the end of the step (zero before the first step)."""
        if self._applied is None:
            return np.zeros(self.world.model.nv)
        tau, arm, v1, v0 = self._applied
        return tau - arm / self.h * (v1 - v0)

    def _control(self):
        if len(self.controls) == 1:  # one robot: its arrays as they are
            tau, arm, idx, vp = self.controls[0].torques(self.t, self.h, self._q, self._v,
                                                         self.free_motion.gravity)
            if not idx:  # (a list)
                return tau, arm, None, None
            return tau, arm, np.array(idx, dtype=int), np.array(vp)
        nv = self.world.model.nv
        tau, arm = np.zeros(nv), np.zeros(nv)
        pres_idx, pres_v = [], []
        for c in self.controls:
            t_r, a_r, idx, vp = c.torques(self.t, self.h, self._q, self._v, self.free_motion.gravity)
            tau += t_r
            arm += a_r
            pres_idx.extend(idx), pres_v.extend(vp)
        if not pres_idx:
            return tau, arm, None, None
        return tau, arm, np.array(pres_idx, dtype=int), np.array(pres_v)

    # --------------------------------------------------------------- commands
    def _split_joints(self, joints, n_values):
        names = self.joint_names if joints is None else list(joints)
        unknown = [j for j in names if j not in self._joint_owner]
        if unknown:
            raise CommandError(f"unknown joint {unknown[0]!r}; joints: {self.joint_names}")
        if n_values != len(names):
            raise CommandError(f"expected {len(names)} values (one per joint), got {n_values}")
        groups = {}
        for k, j in enumerate(names):
            r, idx = self._joint_owner[j]
            groups.setdefault(r, ([], []))
            groups[r][0].append(idx), groups[r][1].append(k)
        return groups

    def set_command(self, mode, values, *, joints=None, kp=None, kd=None):
        """Command joints from outside; overrides the scene controller for those joints.

        Parameters
        ----------
        mode : {'effort', 'position', 'velocity'}
            effort: tau = values [N.m]; position: tau = kp (values - q) - kd v;
            velocity: tau = kd (values - v). Effort limits clamp the result.
        values : (n,) array_like
            One finite value per joint of ``joints``.
        joints : list of str, optional
            Joint names; default all ``joint_names``.
        kp, kd : float, optional
            Gains for position/velocity modes; default the scene controller's.

        Raises
        ------
        CommandError
            Unknown mode or joint, wrong length, non-finite values or gains.
        """
        values = np.asarray(values, dtype=float).ravel()
        if not np.all(np.isfinite(values)):
            raise CommandError(f"command values must be finite; got {values.tolist()}")
        for name, g in (("kp", kp), ("kd", kd)):
            if g is not None and not (np.isfinite(g) and g >= 0):
                raise CommandError(f"{name} must be a finite number >= 0; got {g!r}")
        for r, (idx, pos) in self._split_joints(joints, values.size).items():
            self.controls[r].command(mode, np.array(idx), values[pos], kp, kd)

    def set_trajectory(self, joints, times, positions, velocities=None):
        """Track a joint trajectory in sim time with the position gains.

        ``times`` (m,) absolute sim times [s], strictly increasing; ``positions`` (m, n)
        and optional ``velocities`` (m, n) for the n ``joints``.
        """
        times = np.asarray(times, dtype=float).ravel()
        P = np.atleast_2d(np.asarray(positions, dtype=float))
        V = None if velocities is None else np.atleast_2d(np.asarray(velocities, dtype=float))
        joints = list(joints)
        if times.size == 0 or P.shape != (times.size, len(joints)):
            raise CommandError(f"expected positions of shape ({times.size}, {len(joints)}), got {P.shape}")
        if V is not None and V.shape != P.shape:
            raise CommandError(f"expected velocities of shape {P.shape}, got {V.shape}")
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(P)) and (V is None or np.all(np.isfinite(V)))):
            raise CommandError("trajectory times, positions and velocities must be finite")
        if np.any(np.diff(times) <= 0):
            raise CommandError(f"trajectory times must be strictly increasing; got {times.tolist()}")
        for r, (idx, pos) in self._split_joints(joints, len(joints)).items():
            self.controls[r].track(np.array(idx), times, P[:, pos], None if V is None else V[:, pos])
