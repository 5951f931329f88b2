"""Compile (or load from numba's on-disk cache) what a simulator's run will execute.

The first use of a kernel compiles it into the cache (about a minute for a robot scene
on a 2-core machine); later processes load it in milliseconds. :func:`warm_up` runs what
a scene's steps, the node's publishers, a run's recorder and the node's method changes
will run, so that nothing compiles later: the node calls it before it publishes, and
``contact-lcp warm`` (run by the set-up commands, beside the ROS interface build) calls it
on the default scene so that a new user's first run starts at once.
"""

import warnings
from dataclasses import replace

import numpy as np

#: the LCP the warm-ups solve to load a method's code (its answer z = (1/3, 1/3))
_M2, _Q2 = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])


def warm_up(sim):
    """Compile (or load) what stepping ``sim`` will run.

    Solves a 2x2 LCP with every method (so a later ``solver_method`` change does not
    stall the physics thread), then takes two steps of ``sim`` (the first solves
    without a warm start; the second, from the first's guess, runs the contact model's
    first rung, which compiles its own kernels), runs what later steps reach
    (:func:`ahead`), reads what the node publishes and a
    run records after a step (their first reads would compile the force read's kernels:
    seconds on a cold cache) and resets it. Returns
    the step's error message, or ``""``: a scene whose first step fails still loads,
    and the node reports the failure when it steps (ERROR diagnostic, paused).
    """
    from contact_lcp.lcp import METHODS, solve

    for method in METHODS:
        solve(_M2, _Q2, method=method)
    try:
        for _ in range(2):
            sim.step()
        ahead(sim)
        _read(sim)
    except Exception as e:  # reported again (and handled) when the node steps
        return f"{type(e).__name__}: {e}"
    finally:
        sim.reset()
    return ""


def ahead(sim):
    """Run once, after a step of ``sim``, what its later steps would otherwise load in the
    middle of a run: the step's later paths on that step's data (:func:`later_paths`), a
    solve's retry and the robust search's own paths (:func:`_searches`) and all of a
    contact step on a box resting with the scene's contact settings (:func:`_stand_in`:
    what a scene whose first steps touch nothing, or touch on one point, runs once
    something rests on several). The next step is the same as without it; what fails
    here is warned about, not raised."""
    later_paths(sim)
    _searches(sim.model.settings.method)
    _stand_in(sim)


def _searches(method):
    """The retry on the powers-of-two scaling that a contact model's ladder runs when a
    solve does not certify (:func:`~contact_lcp.lcp.attempts.solve_with_retries`), and
    the robust search from a first basis that solves the LCP at once and from one that
    does not, by the dense path: a step's searches from the last basis may all have
    been answered at once, or by the sparse Lemke paths, which end elsewhere."""
    from contact_lcp.lcp import solve

    solve(_M2, _Q2, method=method, scaling="powers_of_two")
    if method == "robust":
        for basis in (np.arange(2), np.zeros(1, dtype=np.int64)):
            solve(_M2, _Q2, method=method, initial_basis=basis)


def later_paths(sim):
    """Run the step's later paths once (:meth:`~contact_lcp.sim.stepper.Stepper.warm_up`:
    the general collision path's point reduction and, on the last step's data if it had
    a contact problem, a later active-set round, the curvature defects, the contact
    model's later rungs: contacts that come or go, a missed basis, a force distribution's
    QP): their code then loads now, not at the step that first reaches them. The next
    step is the same as without it. A path that fails here is a bug that the step
    reaching it meets again: it is warned about, and the run goes on (its code then loads
    when reached)."""
    try:
        sim.stepper.warm_up(sim.q)
    except Exception as e:  # (the run's own steps report what a step meets)
        warnings.warn(f"the step's later paths failed to run ahead (contact model "
                      f"{sim.model.name!r}; {type(e).__name__}: {e}); they load when a step "
                      f"reaches them", RuntimeWarning, stacklevel=2)


def _stand_in(sim):
    """What the contact steps of ``sim`` run that its own first steps may not: a box
    resting on the ground on its four corners, with the scene's contact and solver
    settings (but four points a pair where the scene keeps fewer: a face with freedom,
    which the force distribution's QP may decide, as faces of several pairs later),
    stepped, its later paths run and its contacts read (a scene whose first
    steps touch nothing, a ball dropped from a height, a pour, or whose first contacts
    leave the force distribution nothing to choose, one point of a hoist's hook). ~10 ms
    on a warm cache. Warned about, not raised, when it fails (as :func:`later_paths`)."""
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator

    contact = sim.scene.contact
    if contact.max_points_per_pair is not None and contact.max_points_per_pair < 4:
        contact = replace(contact, max_points_per_pair=4)
    try:
        box = Simulator(scene_from_dict(_BOX_SCENE).replace(contact=contact,
                                                            solver=sim.scene.solver))
        for _ in range(3):
            box.step()
        later_paths(box)
        _read(box)
    except Exception as e:
        warnings.warn(f"the contact code of a resting box failed to run ahead (contact model "
                      f"{sim.model.name!r}; {type(e).__name__}: {e}); it loads when a step "
                      f"first touches", RuntimeWarning, stacklevel=2)


def _read(sim):
    """What the node's publishers and the run recorder read after a step: the joint
    state, the contacts with their forces (the force distribution's kernels), the link
    wrenches and the recorder's contact table (each compiles its kernels on its first
    call)."""
    links = tuple(sim.scene.output.wrench_links)
    sim.joint_state()
    sim.contacts()
    sim.link_wrenches(links, "local")
    sim.contact_table(links)


#: what the process of :func:`~contact_lcp.sim.compile_ahead.compile_ahead` simulates: a
#: box resting on the ground
_BOX_SCENE = {"time_step": 0.001, "gravity": [0.0, 0.0, -9.81],
              "ground": {"height": 0.0, "friction": 0.6},
              "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 2.0,
                          "pose": [0, 0, 0.05, 0, 0, 0, 1]}]}


def _box_problem(scene):
    """The contact problem of the box of ``scene`` (``_BOX_SCENE``) resting on its four
    bottom corners at the start of a step: its rows built by hand (a free body's
    Jacobian) and its ``G``, ``u`` and bias with numpy, so that neither a collision kernel
    nor the problem's own assembly is compiled for it (a first run compiles that one in
    its own step, while this process compiles the contact model's kernels)."""
    from contact_lcp.contact.problem import problem_from_rows

    body = scene.bodies[0]
    m, (a, b, c) = body.mass, (0.5 * x for x in body.size)
    inertia = m / 3.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    K = np.diag(np.concatenate([np.full(3, 1.0 / m), 1.0 / inertia]))
    h = scene.time_step
    corners = np.array([[sx * a, sy * b, -c] for sx in (-1, 1) for sy in (-1, 1)])
    R = np.array([[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]] * 4)  # (n, t1, t2)
    J = np.zeros((12, 6))
    for i, r in enumerate(corners):
        for t in range(3):
            axis = R[i][:, t]
            J[3 * i + t, :3] = axis
            J[3 * i + t, 3:] = np.cross(r, axis)
    v_free = np.concatenate([h * np.asarray(scene.gravity, dtype=float), np.zeros(3)])
    G = J @ K @ J.T
    rows = (True, np.zeros(4), 0.5 * (G + G.T), J @ v_free, np.zeros(4))  # at rest: no bias
    return problem_from_rows(h, R, corners + [0.0, 0.0, c], np.full(4, 0.6), J, K,
                             np.zeros(6), v_free, rows, 0, np.zeros(4, dtype=np.int64), {},
                             None)


def _ahead():
    """The compile-ahead process's work (see :mod:`contact_lcp.sim.compile_ahead`), in
    the order a first run needs it once its scene has loaded (its own collision and
    dynamics kernels, the run's first minute), the largest first, so that what a first
    step would otherwise compile itself is ready when it gets there: the contact model's
    first rung (a box resting on its four corners, from the basis of their normal
    impulses), the robust search from a basis (as the first step's frictional solve
    runs it; both are the longest compiles of the first step; called without
    :func:`~contact_lcp.lcp.solve`, whose scaling the run compiles itself while this
    process is still on the search), then the box's step from no
    guess (the frictionless solve of the two-step), the forces, a small LCP with every
    method, and a few steps of a box resting on the ground (the dynamics and a box's
    collision kernels)."""
    from contact_lcp.contact.guess import PyramidGuess
    from contact_lcp.contact.islands import solve_islands
    from contact_lcp.contact.models import make_model
    from contact_lcp.lcp import METHODS, solve
    from contact_lcp.lcp.robust import solve_robust
    from contact_lcp.sim.scene import model_settings
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator

    scene = scene_from_dict(_BOX_SCENE)
    model = make_model(scene.contact.model, model_settings(scene))
    problem = _box_problem(scene)
    k, d = problem.num_contacts, model.settings.friction_directions
    resting = PyramidGuess(problem.pair, problem.p_W, np.zeros((k, 3)), problem.J[3 * k:],
                           np.ones(k, dtype=bool), np.zeros((k, d), dtype=bool),
                           np.zeros(k, dtype=bool))
    solve_islands(model, problem, resting)
    M, q = np.array([[2.0, 1.0], [0.0, 2.0]]), np.array([-1.0, -1.0])
    solve_robust(M, q, initial_basis=np.array([1]))
    guess = None
    for _ in range(2):
        solution = solve_islands(model, problem, guess)
        guess = solution.guess
    solution.f  # (the forces' distribution, which the node and recordings read)
    for method in METHODS:
        solve(_M2, _Q2, method=method)
    sim = Simulator(scene)
    for _ in range(3):
        sim.step()


if __name__ == "__main__":
    import os
    import sys

    from contact_lcp.sim.compile_ahead import report_progress

    if len(sys.argv) > 1:
        report_progress(sys.argv[1])
    try:
        _ahead()
    finally:
        if len(sys.argv) > 1:
            try:
                os.unlink(sys.argv[1])
            except OSError:
                pass
