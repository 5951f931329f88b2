"""Our simulator measured like a peer (``peer_harness.measuring``) for ``bench_sim.py``.

:class:`OurEngine` gives ``contact_lcp.sim.Simulator`` the peer-engine interface, so our
rows come from the very protocol and re-checks of the peers' rows (untimed settle, only
``step()`` timed, ground force after every step, our penetration from the poses); the
extra columns (LCP size and outcome, pivots, stage timings, Python calls per step) come
from the ``StepInfo`` of each timed step. The timed call is a closure that also keeps
the ``StepInfo`` (one list append, ~0.05 us of a step of ~100 us or more).
"""

import time

import numpy as np

import common
import peer_scenes
from peer_harness import measuring

STAGES = ("collision", "dynamics", "lcp_build", "solve", "integrate")


class OurEngine:
    """``Simulator`` as a peer engine (see :mod:`peer_harness`)."""

    def __init__(self, sim, scene, version):
        self.sim, self.scene, self.version, self.notes = sim, scene, version, ""
        self.infos = []
        keep, step = self.infos.append, sim.step
        self.step = lambda: keep(step())
        self.bodies = [b.name for b in scene.boxes] if scene.kind == "tower" else []

    def pose(self):
        if self.scene.kind == "tower":
            return np.array([self.sim.body_state(name).pose for name in self.bodies])
        js = self.sim.joint_state()
        return self.sim.base_state(0).pose.copy(), dict(zip(js.names, js.position))

    def contacts(self):
        cs = self.sim.contacts()
        F = [c.force_W if c.body_a == "ground" else -c.force_W for c in cs if "ground" in (c.body_a, c.body_b)]
        depth = max([0.0] + [-c.distance for c in cs])
        return np.array(F).reshape(-1, 3), depth, len(cs)


def python_calls_per_step(sim, steps=500):
    """Python-level function calls per ``sim.step()`` (cProfile's count, C calls included)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        sim.step()
    prof.disable()
    return pstats.Stats(prof).total_calls / steps


def measuring_ours(name, path, Simulator, *, duration, settle, chunks, version, method=None, profile_steps=500):
    """One row of ours for the scene ``name`` (a :data:`peer_scenes.SCENE_FILES` key): a
    generator of :func:`peer_harness.measuring`'s kind (it stops after the settle and each
    chunk) whose value is the row."""
    scene = peer_scenes.load(name)
    t0 = time.perf_counter()
    sim = Simulator.from_file(path, solver_method=method)
    load_s = time.perf_counter() - t0
    engine = OurEngine(sim, scene, version)
    run = yield from measuring(engine, scene, duration=duration, settle=settle, chunks=chunks, name="contact_lcp",
                               scene_notes=False)
    infos = engine.infos[-run.steps:]
    stages = {s + "_us": 1e6 * float(np.mean([i.timings.get(s, 0.0) for i in infos])) for s in STAGES}
    last = sim.step()  # one more, untimed step for the size of the model's LCP
    row = dict(run.as_row(), name=name, load_s=load_s, step_us=1e6 * run.step_time,
               step_mean_us=1e6 * run.step_time_mean, **stages,
               other_us=1e6 * run.step_time_mean - sum(stages.values()),
               num_active=float(np.mean([i.num_active for i in infos])),
               lcp_size=int(last.report.info.get("lcp_size", 0)),
               lcp_solved=float(np.mean([i.lcp_status in ("SOLVED", "NO_CONTACT") for i in infos])),
               lcp_method=str(infos[-1].lcp_method), pivots=common.median([i.pivots for i in infos]),
               fallbacks=int(sum(i.fallbacks for i in infos)),
               # the share of the timed steps that the contact model's first rung solved
               # alone (the last basis, one compiled solve: the pipeline's common case)
               first_rung_share=float(np.mean([i.report.last_basis_only for i in infos])))
    if profile_steps:
        row["calls_per_step"] = python_calls_per_step(sim, profile_steps)
    return row
