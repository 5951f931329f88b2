"""Peer engines of ``bench_sim.py``: every engine on every peer scene, in this process.

Engines (each optional; a missing package is the row status ``'not installed'``):

* ``mujoco`` — MuJoCo, ``implicitfast`` (:mod:`peers_mujoco`);
* ``drake`` — Drake's discrete MultibodyPlant, SAP, point contact; ``drake_hydro`` the
  same with hydroelastic contact, by default on the tower only, where point contact
  does not hold the boxes (:mod:`peers_drake`);
* ``dart`` — DART 6.20, Dantzig boxed LCP (:mod:`peers_dart`);
* ``pybullet`` — PyBullet (:mod:`peers_pybullet`).

Scenes (:mod:`peer_scenes`): Talos and Go1 standing at h = 1 ms and the 5-box tower at
h = 10 ms, read from our own scene files. Every engine is measured by the same harness
(:mod:`peer_harness`: untimed settle, only ``step()`` timed) and re-checked by our own
geometry and force balance (:mod:`peer_checks`). A peer that fails is a row whose status
says why, never an exception out of :func:`run_peers`.

:func:`run_peers` measures one engine after another; :func:`scene_runs` gives the
engines' runs on one scene as generators, for ``bench_sim.py`` to run chunk by chunk in
turn with ours (:func:`peer_harness.in_turn`).

Settings that differ between engines (PD servo law, gravity compensation, friction
combination, contact compliance) are in each row's ``notes``.
"""

import importlib.util

import peer_scenes
import peers_dart
import peers_drake
import peers_mujoco
import peers_pybullet
from peer_harness import PeerRun, in_turn

#: engine name -> function(scene, *, duration, settle, chunks): a generator of
#: :func:`peer_harness.measuring`'s kind whose value is a PeerRun (or a PeerRun itself)
PEERS = {"mujoco": peers_mujoco.runs, "drake": peers_drake.runs, "drake_hydro": peers_drake.runs_hydro,
         "dart": peers_dart.runs, "pybullet": peers_pybullet.runs}
#: engine name -> the Python module it needs
MODULES = {"mujoco": "mujoco", "drake": "pydrake", "drake_hydro": "pydrake", "dart": "dartpy", "pybullet": "pybullet"}
#: peer scenes run by default
SCENES = ("talos", "go1", "tower")
#: engines that run only some scenes by default (the others: every scene)
ONLY = {"drake_hydro": ("tower",)}


def installed(engine):
    """True when ``engine``'s Python module can be imported."""
    return importlib.util.find_spec(MODULES[engine]) is not None


def scene_runs(engines, name, **options):
    """The runs of ``engines`` on the scene ``name``, in order, for
    :func:`peer_harness.in_turn`: pairs of a generator (see :data:`PEERS`), or the PeerRun
    row of an engine that failed to start, and the row-maker of its failure; engines that
    do not run this scene are left out. ``options``: ``duration``, ``settle`` [s] of
    simulated time and ``chunks`` (see :func:`peer_harness.measuring`)."""
    engines = [eng for eng in engines if name in ONLY.get(eng, (name,))]
    try:
        scene = peer_scenes.load(name)
    except Exception as e:  # e.g. example-robot-data missing: every engine's row says so
        return [(PeerRun(eng, name, f"failed: scene: {type(e).__name__}: {e}"), None) for eng in engines]
    out = []
    for eng in engines:
        failed = _failed(eng, name)
        try:
            out.append((PEERS[eng](scene, **options), failed))
        except Exception as e:
            out.append((failed(e), failed))
    return out


def _failed(engine, scene):
    """The row of ``engine`` on ``scene`` when its run raised ``e``: a function of ``e``."""
    return lambda e: PeerRun(engine, scene, f"failed: {type(e).__name__}: {e}")


def run_peers(engines=tuple(PEERS), scenes=SCENES, **options):
    """Run each engine on each scene, one after another; a list of :class:`PeerRun`
    (failures as statuses: a broken peer or an unstable scene must not stop the
    benchmark). ``options`` as :func:`scene_runs`."""
    out = []
    for name in scenes if engines else ():
        for run in scene_runs(engines, name, **options):
            out += in_turn([run])
    return out


if __name__ == "__main__":
    for run in run_peers(duration=1.0, settle=0.2, chunks=5):
        print(run)
