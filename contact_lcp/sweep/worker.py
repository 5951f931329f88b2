"""One run of a sweep, in whatever process runs it: simulate, then summarise in one row.

Nothing here knows about Ray: :func:`simulate_run` is what a Ray task calls and what a
plain loop calls, so a sweep's rows are the rows of the same runs made one by one.
"""

import os
import time

import numpy as np

#: the columns of a row after ``run_id`` and the parameters, in order
METRICS = ("status", "message", "steps", "failures", "fallbacks", "safe_stops",
           "max_penetration", "mean_vertical_force", "final_x", "final_y", "final_z",
           "wall_seconds")


def task(run, spec, out=None):
    """The picklable description of ``run`` (a :class:`~contact_lcp.sweep.spec.Run` of
    ``spec``) that :func:`simulate_run` takes; ``out`` is the results folder (for the
    recordings of ``record: true``)."""
    record = (os.path.join(os.path.abspath(out), "runs", f"{run.run_id}.npz")
              if spec.record and out is not None else None)
    return {"run_id": run.run_id, "values": run.values, "scene_data": run.scene_data,
            "scene_path": spec.scene_path, "duration": spec.duration, "record": record}


def simulate_run(task):
    """Simulate one run and return its row.

    Parameters
    ----------
    task : dict
        From :func:`task`: ``run_id``, ``values`` (parameter -> value), ``scene_data``
        (the scene mapping with the values put in), ``scene_path`` (for relative paths),
        ``duration`` [s], ``record`` (a ``.npz`` path or None).

    Returns
    -------
    dict
        ``run_id``, the parameter values, then :data:`METRICS`: ``status`` ``ok`` or
        ``error`` (``message`` says why; the metrics are those of the steps made until
        then, none if the simulator could not be built), ``failures``/``fallbacks``/
        ``safe_stops`` (:class:`~contact_lcp.sim.stats.SimStats`), ``max_penetration``
        [m] over the steps, ``mean_vertical_force`` [N] the mean over the steps of the
        vertical contact force the world exerts (:meth:`world_contact_force` of the
        applied impulses: the same sum on free bodies and floating bases, without a
        least-norm solve each step),
        ``final_x/y/z`` [m] of the first robot's floating base, else of the first free
        body, ``wall_seconds`` of the whole run (scene build included).
    """
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator

    wall0 = time.perf_counter()
    row = {"run_id": task["run_id"], **task["values"], "status": "ok", "message": "",
           "steps": 0}
    sim, max_pen, fz = None, 0.0, 0.0
    try:
        path = os.path.abspath(task["scene_path"])
        scene = scene_from_dict(task["scene_data"], base_dir=os.path.dirname(path), path=path)
        sim = Simulator(scene)
        recorder = None
        if task["record"]:
            from contact_lcp.sim.recording import RunRecorder

            os.makedirs(os.path.dirname(task["record"]), exist_ok=True)
            recorder = RunRecorder(scene.output.wrench_links, sim.joint_names,
                                   spool=os.path.dirname(task["record"]))
        steps = int(round(task["duration"] / sim.h))
        for _ in range(steps):
            info = sim.step()
            row["steps"] += 1
            max_pen = max(max_pen, info.max_penetration)
            fz += sim.world_contact_force(applied=True)[2]  # (no force distribution)
            if recorder is not None:
                recorder.add(sim, info)
        if recorder is not None:
            recorder.save(task["record"])
            recorder.close()
    except Exception as e:  # noqa: BLE001 -- one run's error is its row, not the sweep's end
        row.update(status="error", message=f"{type(e).__name__}: {e}")
    if sim is not None:
        s = sim.stats
        n = row["steps"]
        row.update(failures=s.lcp_failures, fallbacks=s.fallbacks, safe_stops=s.safe_stops,
                   max_penetration=float(max_pen) if n else 0.0,
                   mean_vertical_force=float(fz / n) if n else 0.0)
        row.update(zip(("final_x", "final_y", "final_z"), final_position(sim)))
    row["wall_seconds"] = time.perf_counter() - wall0
    return row


def final_position(sim):
    """(x, y, z) [m] of the first robot's floating base, else of the first free body;
    NaN when there is neither."""
    for i, robot in enumerate(sim.world.robots):
        if robot.floating_base:
            return tuple(float(x) for x in sim.base_state(i).pose[:3])
        break
    if sim.scene.bodies:
        return tuple(float(x) for x in sim.body_state(sim.scene.bodies[0].name).pose[:3])
    return (np.nan,) * 3
