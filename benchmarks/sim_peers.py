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

Settings that differ between engines (PD servo law, gravity compensation, friction
combination, contact compliance) are in each row's ``notes``.
"""

import importlib.util

import peer_scenes
import peers_dart
import peers_drake
import peers_mujoco
import peers_pybullet
from peer_harness import PeerRun

#: engine name -> function(scene, *, duration, settle, chunks) -> PeerRun
PEERS = {"mujoco": peers_mujoco.run, "drake": peers_drake.run, "drake_hydro": peers_drake.run_hydro,
         "dart": peers_dart.run, "pybullet": peers_pybullet.run}
#: engine name -> the Python module it needs
MODULES = {"mujoco": "mujoco", "drake": "pydrake", "drake_hydro": "pydrake", "dart": "dartpy", "pybullet": "pybullet"}
#: peer scenes run by default
SCENES = ("talos", "go1", "tower")
#: engines that run only some scenes by default (the others: every scene)
ONLY = {"drake_hydro": ("tower",)}


def installed(engine):
    """True when ``engine``'s Python module can be imported."""
    return importlib.util.find_spec(MODULES[engine]) is not None


def run_peers(engines=tuple(PEERS), scenes=SCENES, **options):
    """Run each engine on each scene; a list of :class:`PeerRun` (failures as statuses).

    ``options``: ``duration``, ``settle`` [s] of simulated time and ``chunks`` (see
    :func:`peer_harness.measure`).
    """
    out = []
    for name in scenes if engines else ():
        try:
            scene = peer_scenes.load(name)
        except Exception as e:  # e.g. example-robot-data missing: every engine's row says so
            out += [PeerRun(eng, name, f"failed: scene: {type(e).__name__}: {e}") for eng in engines]
            continue
        for eng in engines:
            if name not in ONLY.get(eng, (name,)):
                continue
            try:
                out.append(PEERS[eng](scene, **options))
            except Exception as e:  # a broken peer or an unstable scene must not stop the benchmark
                out.append(PeerRun(eng, name, f"failed: {type(e).__name__}: {e}"))
    return out


if __name__ == "__main__":
    for run in run_peers(duration=1.0, settle=0.2, chunks=5):
        print(run)
