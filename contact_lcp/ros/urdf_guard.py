"""A robot description from a peer is loaded in a child process before the node adopts it.

Every URDF value and every collision mesh is checked before Pinocchio and coal see it
(:mod:`contact_lcp.dynamics.urdf_checks`, :mod:`contact_lcp.dynamics.meshes`), but those
are native libraries: an input no check foresaw could still crash one of them, and in
the node that would end the process for every peer on the domain. So before a rebuild
the node has the candidate robots loaded by ``python -m contact_lcp.dynamics.probe``
(a fresh interpreter: no fork of the node's threads); only if that child succeeds does
it build the simulator itself. A child killed by a signal, one that times out or one
whose loading raised becomes the reason of the rejected parameter (or topic message).

The node does this before every rebuild, and at start-up when ``robot_description`` is
given. Cost: one interpreter start with Pinocchio, coal and the package imported and the
robots loaded, 0.8 to 1.5 s for config/humanoid_stand.yaml, talos_stand.yaml and
legged_frame.yaml on the 2-core development machine under load, next to the seconds a
rebuild takes anyway (building, compiling, the warm-up step).
"""

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

#: Seconds a loader child may take before it is killed and the description rejected.
TIMEOUT = 60.0
#: The loader child's command (tests replace it to stand in a crashing loader).
COMMAND = [sys.executable, "-m", "contact_lcp.dynamics.probe"]


def request_of(cfg):
    """The probe's request for NodeConfig ``cfg``: the scene's robots with the first one's
    URDF replaced by ``cfg.robot_description`` (as the simulator will load them), or
    None when the scene itself cannot be read (the simulator's build reports that)."""
    from contact_lcp.exceptions import SceneError
    from contact_lcp.ros.config import resolve_scene
    from contact_lcp.sim.scene_loader import load_scene

    try:
        scene = load_scene(resolve_scene(cfg.scene))
    except (FileNotFoundError, SceneError):
        return None
    specs = [r.robot for r in scene.robots]
    if cfg.robot_description and specs:
        specs[0] = dataclasses.replace(specs[0], urdf_string=cfg.robot_description)
    return {"mesh_mode": scene.contact.meshes,
            "robots": [dataclasses.asdict(s) for s in specs]}


#: File endings of the mesh formats a peer's description may name (assimp reads them).
MESH_ENDINGS = (".stl", ".dae", ".obj", ".ply", ".off", ".3ds", ".fbx", ".glb", ".gltf")


def mesh_files(xml):
    """The ``filename`` of every ``<mesh>`` in URDF text ``xml`` (none if it is no XML:
    the loader names that)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return []
    return [m.get("filename", "") for m in root.iter("mesh")]


def _local_path(uri):
    """The file a mesh URI names on this machine, or None for ``package://`` (resolved
    by the loader)."""
    if uri.startswith("package://"):
        return None
    return uri[len("file://"):] if uri.startswith("file://") else uri


def _meshes_refused(uris):
    """The one reason for meshes a peer's description names that must not be opened, or
    that could not be loaded: it quotes only the names the peer sent, and is the same
    whether a file exists, is no mesh or cannot be read, so that the answer tells nothing
    about this machine's files."""
    return ("robot description not adopted: its collision meshes "
            f"{sorted(set(uris))} must each be a readable mesh file ({', '.join(MESH_ENDINGS)}) "
            "on the node's machine; at least one is missing, unreadable or not a mesh")


def check_robot(spec, mesh_mode, *, command=None, timeout=TIMEOUT):
    """:func:`check` for one ``RobotSpec`` a peer sent otherwise (simulation_interfaces'
    spawn_entity): its meshes under the same rule, then a loader child; the reason it
    must not be loaded here, or None."""
    uris = mesh_files(spec.urdf_string) if spec.urdf_string else []
    reason = _meshes_checked(uris)
    if reason is None:
        reason = probe({"mesh_mode": mesh_mode, "robots": [dataclasses.asdict(spec)]},
                       command=command, timeout=timeout)
        if reason is not None and uris and "cannot load its collision geometry" in reason:
            reason = _meshes_refused(uris)
    return reason


def _meshes_checked(uris):
    """:func:`_meshes_refused` when a named mesh is not a mesh file by its ending (or a
    path that exists and is no regular file), else None."""
    for uri in uris:
        path = _local_path(uri)
        if not uri.lower().endswith(MESH_ENDINGS) or (
                path is not None and os.path.exists(path) and not os.path.isfile(path)):
            return _meshes_refused(uris)
    return None


def check(cfg, *, command=None, timeout=TIMEOUT):
    """Why the robots of NodeConfig ``cfg`` must not be loaded in this process, or None
    when a child process loaded them (or there are none).

    A description's meshes are files a peer names: only mesh files (by ending; a regular
    file where one exists) are opened, and whatever goes wrong with them gets one reason
    that quotes no file's content and does not tell a missing file from an unreadable one.
    """
    request = request_of(cfg)
    if not request or not request["robots"]:
        return None
    uris = mesh_files(cfg.robot_description) if cfg.robot_description else []
    refused = _meshes_checked(uris)
    if refused is not None:
        return refused
    reason = probe(request, command=command, timeout=timeout)
    if reason is not None and uris and "cannot load its collision geometry" in reason:
        return _meshes_refused(uris)
    return reason


def probe(request, *, command=None, timeout=TIMEOUT):
    """Run the loader child on ``request`` (see :mod:`contact_lcp.dynamics.probe`);
    None if it loaded every robot, else the reason."""
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    try:
        run = subprocess.run(command or COMMAND, input=json.dumps(request), env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return (f"robot description not adopted: loading it took more than {timeout:g} s "
                "in a loader process (stopped)")
    except OSError as e:
        return f"robot description not adopted: cannot start a loader process: {e}"
    if run.returncode < 0:
        try:
            name = signal.Signals(-run.returncode).name
        except ValueError:
            name = f"signal {-run.returncode}"
        return (f"robot description not adopted: loading it crashed a loader process "
                f"({name}); this node is unaffected. Check its meshes and values")
    lines = run.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except ValueError:
        answer = {}
    if run.returncode == 0 and answer.get("ok"):
        return None
    return answer.get("error") or (f"robot description not adopted: the loader process "
                                   f"exited with status {run.returncode}")
