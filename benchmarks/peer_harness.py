"""One timing and physics harness for every peer engine of ``bench_sim.py``.

A peer module (``peers_mujoco.py``...) only builds a scene and exposes an *engine*:

* ``step()`` — one time step; the only call that is timed;
* ``pose()`` — robots: ``(base (7,), {joint: position})``; tower: box poses (n, 7);
* ``contacts()`` — ``(F, depth, count)``: the ground's contact forces on the robot or
  the boxes, an ndarray (k, 3) [N] in W; the largest penetration the engine reports over
  all its contacts [m] (NaN when it reports none); its number of contacts;
* ``version`` and ``notes`` (what differs from our scene, said once per engine).

:func:`measure` runs the same protocol for all (``bench_sim.py`` runs it on our simulator
too): build, untimed settle, then ``duration`` of simulated time in ``chunks`` equal
chunks; only the ``step()`` calls are timed (``time.perf_counter`` around each call, the
~0.1 us of the clock pair included), the step time is the median over chunks of the
mean step in the chunk. After every step, untimed, it reads the engine's contact forces:
``sum F_z / (m g)`` is the mean over every timed step, and the engine's penetration the
largest over them, and so is the friction cone; ``POSE_SAMPLES`` times per chunk it also
reads the pose for our penetration (:mod:`peer_checks`), the drift and the standing check.

:func:`measuring` is that protocol as a generator that stops after the settle and after
each chunk, so that ``bench_sim.py`` can run the engines of one scene chunk by chunk in
turn (:func:`in_turn`): on a shared machine whose speed drifts by tens of percent over
minutes, two engines compare fairly only over chunks run seconds apart.
"""

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

import peer_checks
from peer_scenes import STAND_TOLERANCE, TOWER_TOLERANCE

#: Pose-based checks (our penetration, drift, standing) per chunk; forces: every step.
POSE_SAMPLES = 10


@dataclass(frozen=True)
class PeerRun:
    """One engine's measurement of one scene (a row of the benchmark).

    ``status`` is ``'ok'``, ``'not installed'`` or ``'failed: <reason>'``; ``force_ratio``
    the mean ground ``sum F_z / (m g)``; ``max_penetration`` the engine's own largest
    depth and ``penetration_check`` ours from its poses [m]; ``drift_mm`` the largest
    horizontal displacement of the base (robots) or of any box (tower) from its start
    [mm]; ``stands`` the base within ``STAND_TOLERANCE`` of its start height (robots) or
    every box within ``TOWER_TOLERANCE`` of its start (tower) at every sample; ``check``
    :func:`peer_checks.verdict`.
    """

    engine: str
    scene: str
    status: str
    version: str = ""
    time_step: float = float("nan")
    steps: int = 0
    step_time: float = float("nan")
    step_time_mean: float = float("nan")
    steps_per_s: float = float("nan")
    rtf: float = float("nan")
    num_contacts: float = float("nan")
    force_ratio: float = float("nan")
    max_penetration: float = float("nan")
    penetration_check: float = float("nan")
    cone_ratio: float = float("nan")
    base_height: float = float("nan")
    drift_mm: float = float("nan")
    stands: bool = False
    check: str = ""
    notes: str = ""
    #: the mean step time of each chunk [s], in the order run
    chunk_times: tuple = ()

    def as_row(self):
        """A dict for the CSV/table (``name`` = the engine)."""
        return dict(dataclasses.asdict(self), name=self.engine)


#: what :func:`measuring` yields after the settle, before the timed chunks
SETTLED = "settled"


def _positions(scene, pose):
    """(k, 3) positions whose drift is reported: the base, or every box centre."""
    return np.asarray(pose[0][:3] if scene.kind == "robot" else np.asarray(pose)[:, :3], float).reshape(-1, 3)


def in_turn(runs):
    """Drive the runs, pairs ``(run, failed)`` of a generator of :func:`measuring`'s kind
    and a function of an exception, one stop each in turn, so that every engine's k-th
    chunk runs right after the others' k-th; returns their values in order. A run that
    raises ends as ``failed(exception)``; a run that is not a generator is its own value."""
    out = [None] * len(runs)
    live = []
    for i, (run, _) in enumerate(runs):
        if hasattr(run, "send"):
            live.append(i)
        else:
            out[i] = run
    while live:
        for i in list(live):
            run, failed = runs[i]
            try:
                next(run)
            except StopIteration as stop:
                out[i] = stop.value
                live.remove(i)
            except Exception as e:  # a broken or unstable engine must not stop the others
                out[i] = failed(e)
                live.remove(i)
    return out


def measure(engine, scene, **options):
    """:func:`measuring` run to its end: a :class:`PeerRun` (its exceptions propagate)."""
    run = measuring(engine, scene, **options)
    while True:
        try:
            next(run)
        except StopIteration as stop:
            return stop.value


def measuring(engine, scene, *, duration, settle, chunks, name, scene_notes=True):
    """Time ``engine.step()`` and check its physics; a generator that yields
    :data:`SETTLED` after the settle and each chunk's mean step time [s] after it, and
    returns a :class:`PeerRun`.

    ``scene_notes``: append the scene's notes (what the peers' URDF copy changes) to the
    engine's. Raises FloatingPointError on a non-finite force or pose.
    """
    geometry = (peer_checks.RobotGeometry if scene.kind == "robot" else peer_checks.TowerGeometry)(scene)
    h = scene.h
    start = _positions(scene, engine.pose())
    z0 = start[0, 2]
    step, clock, contacts = engine.step, time.perf_counter, engine.contacts
    for _ in range(int(round(settle / h))):
        step()
    yield SETTLED
    per = max(1, int(round(duration / h)) // chunks)
    stride = max(1, per // POSE_SAMPLES)
    walls, fz, depth, cone, count, ours, moved, heights = [], [], [], [], [], [], [], []
    for _ in range(chunks):
        wall = 0.0
        for i in range(per):
            t0 = clock()
            step()
            wall += clock() - t0
            F, d, k = contacts()
            if not np.all(np.isfinite(F)):
                raise FloatingPointError(f"{name} {scene.name}: non-finite contact force after {len(fz)} timed steps")
            fz.append(float(np.sum(F[:, 2])))
            depth.append(d)
            count.append(k)
            cone.append(peer_checks.cone_ratio(F))
            if i % stride == stride - 1:
                pose = engine.pose()
                ours.append(geometry.penetration(*pose) if scene.kind == "robot" else geometry.penetration(pose))
                p = _positions(scene, pose)
                if not np.all(np.isfinite(p)):
                    raise FloatingPointError(f"{name} {scene.name}: non-finite pose after {len(fz)} timed steps")
                moved.append(p - start)
                heights.append(p[0, 2])
        walls.append(wall / per)
        yield walls[-1]
    step_time = float(np.median(walls))
    moved = np.array(moved)
    force_ratio = float(np.mean(fz)) / (scene.mass * scene.gravity)
    engine_depth = float(np.max(depth)) if np.all(np.isfinite(depth)) else float("nan")
    our_depth = float(np.max(ours))
    cone_max = float(np.nanmax(cone)) if np.any(np.isfinite(cone)) else float("nan")
    if scene.kind == "robot":
        stands = bool(np.all(np.abs(np.array(heights) - z0) < STAND_TOLERANCE))
    else:
        stands = bool(np.all(np.linalg.norm(moved, axis=2) < TOWER_TOLERANCE))
    return PeerRun(
        engine=name, scene=scene.name, status="ok", version=engine.version, time_step=h, steps=per * chunks,
        step_time=step_time, step_time_mean=float(np.mean(walls)), steps_per_s=1.0 / step_time, rtf=h / step_time,
        num_contacts=float(np.mean(count)),
        force_ratio=force_ratio, max_penetration=engine_depth, penetration_check=our_depth, cone_ratio=cone_max,
        base_height=float(heights[-1]) if scene.kind == "robot" else float("nan"),
        drift_mm=1e3 * float(np.max(np.linalg.norm(moved[:, :, :2], axis=2))), stands=stands,
        check=peer_checks.verdict(force_ratio, engine_depth, our_depth, cone_max, scene.friction),
        notes="; ".join(n for n in [engine.notes] + (list(scene.notes) if scene_notes else []) if n),
        chunk_times=tuple(walls))
