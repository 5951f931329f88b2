"""The ROS 2 simulation_interfaces services of the node (the standard that Gazebo and
Isaac Sim implement), under the node's namespace (``/contact_lcp/spawn_entity``, ...).

Entities are the scene's robots (by scene name) and free bodies (by name); see
:mod:`contact_lcp.sim.entities`. Spawning takes:

- a free body: ``resource_string`` a YAML mapping with the scene file's body keys but
  ``name`` and ``pose`` (``{shape: box, size: [0.1, 0.1, 0.1], mass: 1.0}``), format
  ``body``;
- a robot: ``uri`` a URDF, xacro or MJCF file (a path or ``file://``) or
  ``resource_string`` URDF, xacro or MJCF text, with a floating base at ``initial_pose``.

Every answer carries a ``Result``: ``RESULT_OK``; ``RESULT_NOT_FOUND`` (an unknown
entity); ``RESULT_INCORRECT_STATE`` (stepping while playing); ``RESULT_OPERATION_FAILED``
with the reason; a service's own codes (``NAME_NOT_UNIQUE``, ``RESOURCE_PARSE_ERROR``,
...) where the interface defines them. A service waits for the physics thread at most
:data:`WAIT` seconds (plus the steps asked for) and never raises.
"""

import dataclasses
import os
import re
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np
import yaml
from rclpy.parameter import Parameter
from simulation_interfaces import srv
from simulation_interfaces.msg import (EntityCategory, EntityState, Result, SimulationState,
                                       SimulatorFeatures)

from contact_lcp.exceptions import ContactLCPError
from contact_lcp.ros import urdf_guard
from contact_lcp.ros.messages import to_time
from contact_lcp.sim import entities as E

#: s: the most a service waits for the physics thread; a new shape's first spawn (or the
#: first steps after it) compiles its contact kernels, up to a minute on a slow machine
WAIT = 300.0
STEP_WAIT = 0.05  # s per step asked for, on top of WAIT
#: steps one step_simulation call may ask for: the physics thread serves nothing else
#: while it steps them (pause, reset, other services wait), so one request must not hold
#: it for hours; 100 000 steps are 100 s of sim time at 1 kHz
MAX_STEPS = 100_000
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: what a spawn's uri may name, and how large
ROBOT_FILES = (".urdf", ".xacro", ".xml")
MAX_ROBOT_FILE = 10 << 20
FEATURES = ("SPAWNING", "DELETING", "ENTITY_CATEGORIES", "SPAWNING_RESOURCE_STRING",
            "ENTITY_STATE_GETTING", "ENTITY_STATE_SETTING", "SIMULATION_RESET",
            "SIMULATION_RESET_TIME", "SIMULATION_RESET_STATE", "SIMULATION_RESET_SPAWNED",
            "SIMULATION_STATE_GETTING", "SIMULATION_STATE_SETTING", "SIMULATION_STATE_PAUSE",
            "STEP_SIMULATION_SINGLE", "STEP_SIMULATION_MULTIPLE")
SERVICES = {
    "get_simulator_features": srv.GetSimulatorFeatures,
    "spawn_entity": srv.SpawnEntity,
    "delete_entity": srv.DeleteEntity,
    "get_entities": srv.GetEntities,
    "get_entity_info": srv.GetEntityInfo,
    "get_entity_state": srv.GetEntityState,
    "get_entities_states": srv.GetEntitiesStates,
    "set_entity_state": srv.SetEntityState,
    "step_simulation": srv.StepSimulation,
    "reset_simulation": srv.ResetSimulation,
    "get_simulation_state": srv.GetSimulationState,
    "set_simulation_state": srv.SetSimulationState,
}


def _result(code=Result.RESULT_OK, message=""):
    return Result(result=code, error_message=message)


def _pose(msg):
    p, o = msg.position, msg.orientation
    return np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w], dtype=float)


def _twist(msg):
    return np.array([msg.linear.x, msg.linear.y, msg.linear.z,
                     msg.angular.x, msg.angular.y, msg.angular.z], dtype=float)


class SimulationInterfaces:
    """The services, on ``node`` (a ContactLCPNode: its ``_loop`` and scene swaps)."""

    def __init__(self, node):
        self._node = node
        self._spawned = []  # names spawned since start or the last full reset
        self._stopped = False
        for name, kind in SERVICES.items():
            node.create_service(kind, f"~/{name}", getattr(self, "_" + name))

    # -- helpers ------------------------------------------------------------------------
    def _run(self, fn, wait=WAIT):
        """``(value, None)`` of ``fn(sim)`` in the physics thread, or ``(None, reason)``."""
        try:
            return self._node._loop.submit(fn).result(wait), None
        except FutureTimeout:
            return None, f"the physics thread did not answer within {wait:g} s"
        except (ContactLCPError, KeyError, ValueError, RuntimeError) as e:
            return None, str(e).strip("'\"")

    def _swap(self, make):
        """Carry on with ``make(sim)``; the node's publishers follow the new scene."""
        node = self._node
        try:
            node._loop.change_simulator(make, then=node.adopt_simulator).result(WAIT)
        except FutureTimeout:
            return f"the physics thread did not answer within {WAIT:g} s"
        except (ContactLCPError, KeyError, ValueError, RuntimeError, OSError) as e:
            return str(e).strip("'\"")
        node.after_adopt()
        return None

    # -- services -----------------------------------------------------------------------
    def _get_simulator_features(self, request, response):
        response.features.features = [getattr(SimulatorFeatures, f) for f in FEATURES]
        response.features.spawn_formats = ["body", "urdf", "xacro", "mjcf"]
        response.features.custom_info = (
            "body: resource_string a YAML mapping of a scene body's keys without name and "
            "pose, e.g. {shape: box, size: [0.1, 0.1, 0.1], mass: 1.0}; urdf/xacro/mjcf: uri "
            "(a file path or file://) or resource_string (URDF, xacro or MJCF text), floating base")
        return response

    def _spawn_entity(self, request, response):
        name, why = self._spawn_name(request.name, request.allow_renaming)
        if why is not None:
            response.result = why
            return response
        frame = request.initial_pose.header.frame_id
        pose = _pose(request.initial_pose.pose)
        if frame not in ("", "world") or not np.all(np.isfinite(pose)) \
                or np.linalg.norm(pose[3:]) < 1e-9:
            response.result = _result(srv.SpawnEntity.Response.INVALID_POSE,
                                      f"initial_pose must be finite, with a unit quaternion, in "
                                      f"frame '' or 'world'; got frame {frame!r}, {pose.tolist()}")
            return response
        pose[3:] /= np.linalg.norm(pose[3:])
        try:
            make = self._spawner(request, name, pose)
        except (ContactLCPError, ValueError, yaml.YAMLError) as e:
            response.result = _result(srv.SpawnEntity.Response.RESOURCE_PARSE_ERROR, str(e))
            return response
        if make is None:
            response.result = _result(srv.SpawnEntity.Response.NO_RESOURCE,
                                      "give uri (a URDF, xacro or MJCF file) or resource_string "
                                      "(a body's YAML keys, or URDF, xacro or MJCF text)")
            return response
        why = self._swap(make)
        if why is not None:
            response.result = _result(Result.RESULT_OPERATION_FAILED, why)
            return response
        self._spawned.append(name)
        response.entity_name = name
        response.result = _result()
        return response

    def _spawn_name(self, wanted, allow_renaming):
        taken, _ = self._run(lambda sim: [n for n, _ in E.entities(sim)])
        taken = taken or []
        if wanted and not NAME.match(wanted):
            return None, _result(srv.SpawnEntity.Response.NAME_INVALID,
                                 f"name {wanted!r}: letters, digits and _, not starting with a digit")
        if wanted and wanted not in taken:
            return wanted, None
        if wanted and not allow_renaming:
            return None, _result(srv.SpawnEntity.Response.NAME_NOT_UNIQUE,
                                 f"an entity named {wanted!r} exists (allow_renaming to get another)")
        stem = wanted or "entity"
        k = 1
        while f"{stem}_{k}" in taken:
            k += 1
        return f"{stem}_{k}", None

    def _spawner(self, request, name, pose):
        """``make(sim)`` adding the requested entity, or None without a resource."""
        from contact_lcp.sim.scene_loader import body_entry, robot_entry

        text, uri = request.resource_string.strip(), request.uri.strip()
        if text and not text.startswith("<"):
            data = yaml.safe_load(text)
            if not isinstance(data, dict):
                raise ValueError(f"resource_string: expected a mapping of body keys, got {text[:80]!r}")
            body = body_entry(dict(data, name=name, pose=pose.tolist()), "resource_string")
            return lambda sim: E.with_body(sim, body)
        if not text and not uri:
            return None
        path = uri[len("file://"):] if uri.startswith("file://") else uri
        if path and not (path.endswith(ROBOT_FILES) and os.path.isfile(path)
                         and os.path.getsize(path) <= MAX_ROBOT_FILE):
            # (one answer whatever the path is: it tells nothing of this machine's files)
            raise ValueError(f"uri {uri!r}: expected a readable robot file "
                             f"({', '.join(ROBOT_FILES)}, at most {MAX_ROBOT_FILE >> 20} MiB) "
                             "on the node's machine")
        entry = {"name": name, "urdf": path or "<resource_string>", "floating_base": True,
                 "base_pose": pose.tolist()}
        spec = robot_entry(entry, "spawn_entity")
        if text:
            spec = dataclasses.replace(spec, robot=dataclasses.replace(spec.robot, urdf_string=text))
        # a peer's robot is loaded in a child process first, as a robot_description is
        mesh_mode, why = self._run(lambda sim: sim.scene.contact.meshes)
        why = why or urdf_guard.check_robot(spec.robot, mesh_mode)
        if why is not None:
            raise ValueError(why)
        return lambda sim: E.with_robot(sim, spec)

    def _delete_entity(self, request, response):
        name = request.entity
        known, why = self._run(lambda sim: E.kind_of(sim, name))
        if why is not None:
            response.result = _result(Result.RESULT_NOT_FOUND, why)
            return response
        why = self._swap(lambda sim: E.without(sim, name))
        if why is not None:
            response.result = _result(Result.RESULT_OPERATION_FAILED, why)
            return response
        if name in self._spawned:
            self._spawned.remove(name)
        response.result = _result()
        return response

    def _get_entities(self, request, response):
        listed, why = self._run(E.entities)
        if why is not None:
            response.result = _result(Result.RESULT_OPERATION_FAILED, why)
            return response
        try:
            pattern = re.compile(request.filters.filter) if request.filters.filter else None
        except re.error as e:
            response.result = _result(Result.RESULT_OPERATION_FAILED,
                                      f"filters.filter is not a regular expression: {e}")
            return response
        wanted = {c.category for c in request.filters.categories}
        response.entities = [n for n, kind in listed
                             if (pattern is None or pattern.search(n))
                             and (not wanted or self._category(kind) in wanted)]
        response.result = _result()
        return response

    @staticmethod
    def _category(kind):
        return EntityCategory.CATEGORY_ROBOT if kind == E.ROBOT else EntityCategory.CATEGORY_DYNAMIC_OBJECT

    def _get_entity_info(self, request, response):
        kind, why = self._run(lambda sim: E.kind_of(sim, request.entity))
        if why is not None:
            response.result = _result(Result.RESULT_NOT_FOUND, why)
            return response
        response.info.category.category = self._category(kind)
        response.info.description = f"a {kind} of the contact_lcp scene"
        response.result = _result()
        return response

    def _state(self, sim, name):
        pose, twist = E.pose_and_twist(sim, name)
        state = EntityState()
        state.header.stamp = to_time(self._node._loop.time)
        state.header.frame_id = "world"
        p, o = state.pose.position, state.pose.orientation
        p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in pose)
        lin, ang = state.twist.linear, state.twist.angular
        lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(x) for x in twist)
        return state

    def _get_entity_state(self, request, response):
        state, why = self._run(lambda sim: self._state(sim, request.entity))
        if why is not None:
            response.result = _result(Result.RESULT_NOT_FOUND, why)
            return response
        response.state = state
        response.result = _result()
        return response

    def _get_entities_states(self, request, response):
        inner = srv.GetEntities.Response()
        self._get_entities(srv.GetEntities.Request(filters=request.filters), inner)
        if inner.result.result != Result.RESULT_OK:
            response.result = inner.result
            return response
        states, why = self._run(lambda sim: [self._state(sim, n) for n in inner.entities])
        if why is not None:
            response.result = _result(Result.RESULT_OPERATION_FAILED, why)
            return response
        response.entities, response.states = list(inner.entities), states
        response.result = _result()
        return response

    def _set_entity_state(self, request, response):
        state = request.state
        if state.header.frame_id not in ("", "world"):
            response.result = _result(srv.SetEntityState.Response.INVALID_POSE,
                                      f"frame {state.header.frame_id!r}: only '' or 'world'")
            return response
        pose, twist = _pose(state.pose), _twist(state.twist)
        _, why = self._run(lambda sim: E.set_pose_and_twist(sim, request.entity, pose, twist))
        if why is not None:
            code = Result.RESULT_NOT_FOUND if why.startswith("no entity") else \
                srv.SetEntityState.Response.INVALID_POSE
            response.result = _result(code, why)
            return response
        response.result = _result()
        return response

    def _step_simulation(self, request, response):
        loop, n = self._node._loop, int(request.steps)
        if not 1 <= n <= MAX_STEPS:
            response.result = _result(Result.RESULT_OPERATION_FAILED,
                                      f"steps: expected 1 to {MAX_STEPS} per call, got {n}")
            return response
        if not loop.paused:
            response.result = _result(Result.RESULT_INCORRECT_STATE,
                                      "the simulation is playing: pause it first "
                                      "(set_simulation_state STATE_PAUSED)")
            return response
        try:
            loop.step_many(n).result(WAIT + STEP_WAIT * n)
        except FutureTimeout:
            response.result = _result(Result.RESULT_OPERATION_FAILED,
                                      f"{n} steps did not finish within {WAIT + STEP_WAIT * n:g} s")
            return response
        except RuntimeError as e:
            response.result = _result(Result.RESULT_OPERATION_FAILED, str(e))
            return response
        self._stopped = False
        response.result = _result()
        return response

    def _reset_simulation(self, request, response):
        scope = request.scope
        R = srv.ResetSimulation.Request
        spawned = scope in (R.SCOPE_DEFAULT, R.SCOPE_ALL) or scope & R.SCOPE_SPAWNED
        for name in list(self._spawned) if spawned else []:
            why = self._swap(lambda sim, n=name: E.without(sim, n))
            if why is not None:
                response.result = _result(Result.RESULT_OPERATION_FAILED, why)
                return response
            self._spawned.remove(name)
        if scope in (R.SCOPE_DEFAULT, R.SCOPE_ALL) or scope & (R.SCOPE_STATE | R.SCOPE_TIME):
            try:
                self._node._loop.reset(resume_after_error=False).result(WAIT)
            except FutureTimeout:
                response.result = _result(Result.RESULT_OPERATION_FAILED,
                                          f"the physics thread did not answer within {WAIT:g} s")
                return response
        response.result = _result()
        return response

    def _get_simulation_state(self, request, response):
        S = SimulationState
        state = S.STATE_STOPPED if self._stopped else (
            S.STATE_PAUSED if self._node._loop.paused else S.STATE_PLAYING)
        response.state.state = state
        response.result = _result()
        return response

    def _set_simulation_state(self, request, response):
        S, Rs = SimulationState, srv.SetSimulationState.Response
        target = request.state.state
        if target not in (S.STATE_PLAYING, S.STATE_PAUSED, S.STATE_STOPPED):
            response.result = _result(Result.RESULT_FEATURE_UNSUPPORTED,
                                      f"state {target}: only STOPPED, PLAYING and PAUSED")
            return response
        now = S.STATE_STOPPED if self._stopped else (
            S.STATE_PAUSED if self._node._loop.paused else S.STATE_PLAYING)
        if target == now:
            response.result = _result(Rs.ALREADY_IN_TARGET_STATE, "already in that state")
            return response
        result = self._node.set_parameters([Parameter("paused", value=target != S.STATE_PLAYING)])[0]
        if not result.successful:
            response.result = _result(Rs.STATE_TRANSITION_ERROR, result.reason)
            return response
        if target == S.STATE_STOPPED:  # stopped: back to the start, paused
            try:
                self._node._loop.reset(resume_after_error=False).result(WAIT)
            except FutureTimeout:
                response.result = _result(Rs.STATE_TRANSITION_ERROR, "the physics thread did not answer")
                return response
        _, why = self._run(lambda sim: None)  # the pause is in force when we answer
        self._stopped = target == S.STATE_STOPPED
        response.result = _result() if why is None else _result(Rs.STATE_TRANSITION_ERROR, why)
        return response
