"""Compile (or load from numba's on-disk cache) what a simulator's run will execute.

The first use of a kernel compiles it into the cache (about a minute for a robot scene
on a 2-core machine); later processes load it in milliseconds. :func:`warm_up` runs what
a scene's steps and the node's method changes will run, so that nothing compiles later:
the node calls it before it publishes, and ``contact-lcp warm`` (run by the set-up
commands, beside the ROS interface build) calls it on the default scene so that a new
user's first run starts at once.
"""

import numpy as np


def warm_up(sim):
    """Compile (or load) what stepping ``sim`` will run.

    Solves a 2x2 LCP with every method (so a later ``solver_method`` change does not
    stall the physics thread), then takes two steps of ``sim`` (the first solves
    without a warm start; the second, from the first's guess, runs the contact model's
    first rung, which compiles its own kernels) and resets it. Returns
    the step's error message, or ``""``: a scene whose first step fails still loads,
    and the node reports the failure when it steps (ERROR diagnostic, paused).
    """
    from contact_lcp.lcp import METHODS, solve

    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    for method in METHODS:
        solve(M, q, method=method)
    try:
        for _ in range(2):
            sim.step()
    except Exception as e:  # reported again (and handled) when the node steps
        return f"{type(e).__name__}: {e}"
    finally:
        sim.reset()
    return ""


#: what the process of :func:`~contact_lcp.sim.compile_ahead.compile_ahead` simulates: a
#: box resting on the ground
_BOX_SCENE = {"time_step": 0.001, "gravity": [0.0, 0.0, -9.81],
              "ground": {"height": 0.0, "friction": 0.6},
              "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 2.0,
                          "pose": [0, 0, 0.05, 0, 0, 0, 1]}]}


def _ahead():
    """The compile-ahead process's work (see :mod:`contact_lcp.sim.compile_ahead`): a
    small LCP with every method, then a few steps of a box resting on the ground."""
    from contact_lcp.lcp import METHODS, solve
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator

    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    for method in METHODS:
        solve(M, q, method=method)
    sim = Simulator(scene_from_dict(_BOX_SCENE))
    for _ in range(3):
        sim.step()


if __name__ == "__main__":
    import os
    import sys

    try:
        _ahead()
    finally:
        if len(sys.argv) > 1:
            try:
                os.unlink(sys.argv[1])
            except OSError:
                pass
