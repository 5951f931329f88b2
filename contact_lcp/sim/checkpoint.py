"""Save a simulator's state to a file and resume from it, to the pivot.

A run of hours (the 200-sphere pour) can then be stopped and continued, and a step that
misbehaves at t = 1.37 s can be replayed without the steps before it: like MuJoCo's
``mj_getState`` / ``mj_setState`` or a Drake context, but to a file. The file holds
everything that decides the next steps beyond the scene itself:

- the time, ``q`` and ``v``, the torque the servos applied over the last step;
- the contact model's warm start for the next step (its last basis and friction
  directions: the step data's ``guess``, :mod:`contact_lcp.contact.guess`);
- the controllers' external commands and trajectories;
- the run's counters (:class:`~contact_lcp.sim.stats.SimStats`) and the last step's
  record (contacts and impulses, for the wrench views; not its contact problem).

The file is one ``.npz`` read with ``allow_pickle=False``: a JSON ``header`` (a 0-d
string array: :data:`SCHEMA`, :data:`VERSION`, the scene's identity and the state's
values, :mod:`contact_lcp.sim.state_codec`) and the arrays it names. Loading checks every
field (:mod:`contact_lcp.sim.state_checks`) before it changes anything, so a state file
from a bug report is data, never code. The 200-sphere pour's state is 0.13 MB.

A simulator built from the same scene and loaded with the file then steps exactly as the
one that saved it would have (``test/test_checkpoint.py`` compares q, v and pivots).
"""

import dataclasses
import json
import os
import zipfile

import numpy as np

from contact_lcp.exceptions import ContactLCPError
from contact_lcp.sim import state_checks as checks
from contact_lcp.sim.control import MODES
from contact_lcp.sim.files import write_atomically
from contact_lcp.sim.state_codec import DecodeError, decode, encode
from contact_lcp.sim.stats import SimStats

#: what the header says the file is, and the version of its layout
SCHEMA, VERSION = "contact_lcp.state", 3
#: the format of the pickle state files of earlier versions (refused, never unpickled)
OLD_FORMAT = "contact_lcp.state/1"
#: the state's values, in the header's "state" object
FIELDS = ("t", "q", "v", "applied", "stats", "last", "guess", "controls", "angles")
#: the identity of the scene a file was saved from, checked on load
IDENTITY = ("time_step", "nq", "nv", "joints", "bodies", "contact_model")
#: how far from 1 the norm of a saved quaternion may be (a run keeps them at round-off)
NORM_TOLERANCE = 1e-6
#: how to make a state file of this version
RESAVE = ("start the run again with this version and save its state with "
          "'contact-lcp simulate SCENE --duration T --save-state FILE' "
          "(or Simulator.save_state)")


class CheckpointError(ContactLCPError, ValueError):
    """A state file that cannot be read, or that belongs to another scene."""


def _identity(sim):
    """What a state file must match: the world's layout, the step and the contact model."""
    return {
        "time_step": sim.h,
        "nq": int(sim.world.model.nq),
        "nv": int(sim.world.model.nv),
        "joints": list(sim.joint_names),
        "bodies": [b.name for b in sim.scene.bodies],
        "contact_model": sim.model.name,
    }


def save_state(sim, path):
    """Write ``sim``'s state to ``path`` (atomically: a reader never sees half a file)."""
    values = {
        "t": sim.t, "q": sim._q, "v": sim._v, "applied": sim._applied,
        "stats": dataclasses.asdict(sim.stats),
        # the last step's contacts and impulses (the views read them), not its contact
        # problem: G and J are 46 MB of the pour's 46.5 MB, and no later step reads them
        "last": None if sim._last is None else dataclasses.replace(sim._last, problem=None),
        "guess": sim.stepper.data.guess,
        "controls": [{k: getattr(c, k) for k in c.COMMAND_FIELDS} for c in sim.controls],
        # the continuous joints' unwrapped angles: q holds only (cos, sin), so without
        # them a resumed wheel would lose its whole turns
        "angles": sim._joint_positions.anchor,
    }
    arrays = {}
    state = {k: encode(values[k], k, arrays) for k in FIELDS}
    header = json.dumps({"schema": SCHEMA, "version": VERSION, "scene": sim.scene.path,
                         "identity": _identity(sim), "state": state}, allow_nan=False)
    write_atomically(path, lambda f: np.savez_compressed(f, header=np.array(header), **arrays))


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _open(path):
    """(header, arrays) of the file; a pickle of an earlier version is refused unread."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise CheckpointError(f"state file {path!r} does not exist") from None
    except OSError as e:
        raise CheckpointError(f"state file {path!r} cannot be read: {e.strerror}") from None
    if magic[:1] == b"\x80":  # pickle protocol 2 or later: how earlier versions saved
        raise CheckpointError(
            f"{path}: a pickle state file of an earlier version (format {OLD_FORMAT!r}); "
            f"this version does not read pickles, since loading one can run code: {RESAVE}")
    if magic[:2] != b"PK":
        raise CheckpointError(f"{path}: not a contact_lcp state file (expected an .npz)")
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{path}: not a contact_lcp state file ({e})") from None
    text = arrays.pop("header", None)
    if text is None or text.dtype.kind != "U" or text.ndim != 0:
        raise CheckpointError(f"{path}: not a contact_lcp state file (no JSON 'header' "
                              "string)")
    try:
        header = json.loads(str(text), parse_constant=_no_constant)
    except RecursionError:
        raise CheckpointError(f"{path}: the header is nested too deeply") from None
    except ValueError as e:
        raise CheckpointError(f"{path}: the header is not valid JSON ({e})") from None
    schema = header.get("schema") if isinstance(header, dict) else header
    if schema != SCHEMA:
        raise CheckpointError(f"{path}: expected a header of schema {SCHEMA!r}, got "
                              f"{checks.short(schema)}")
    if header.get("version") != VERSION:
        raise CheckpointError(f"{path}: state file version {header.get('version')!r}; this "
                              f"version reads version {VERSION}: {RESAVE}")
    return header, arrays


def read_state(path):
    """The state of a file written by :func:`save_state`: a dict with ``scene``,
    ``identity`` and the :data:`FIELDS` (``stats`` as a dict of counters).

    Raises
    ------
    CheckpointError
        Not such a file (an earlier version's pickle included), or a field that does not
        decode, named with its path in the state.
    """
    header, arrays = _open(path)
    missing = [k for k in ("scene", "identity", "state") if k not in header]
    state = header.get("state")
    if not missing and isinstance(state, dict):
        missing = [k for k in FIELDS if k not in state]
    if missing or not isinstance(state, dict):
        raise CheckpointError(f"{path}: the state file lacks {missing or ['state']}")
    identity = header["identity"]
    if not isinstance(identity, dict) or set(identity) != set(IDENTITY):
        raise CheckpointError(f"{path}: identity: expected a mapping of {list(IDENTITY)}, "
                              f"got {checks.short(identity)}")
    scene = header["scene"]
    if scene is not None and not isinstance(scene, str):
        raise CheckpointError(f"{path}: scene: expected a path or null, got {checks.short(scene)}")
    counters = [f.name for f in dataclasses.fields(SimStats)]
    try:
        out = {k: decode(state[k], k, arrays) for k in FIELDS}
        out["t"] = checks.real(out["t"], "t", lo=0.0)
        out["stats"] = checks.stats(out["stats"], "stats", counters)
    except (DecodeError, checks.FieldError) as e:
        raise CheckpointError(f"{path}: {e}") from None
    except RecursionError:
        raise CheckpointError(f"{path}: the state is nested too deeply") from None
    return {"scene": scene, "identity": identity, **out}


def _checked(sim, state):
    """The state's values checked against ``sim`` (raises FieldError naming a field)."""
    nq, nv = int(sim.world.model.nq), int(sim.world.model.nv)
    controls = state["controls"]
    if not isinstance(controls, list) or len(controls) != len(sim.controls):
        raise checks.FieldError("controls", f"a list of {len(sim.controls)} robots' commands",
                                controls)
    import pinocchio as pin

    q = checks.array(state["q"], "q", (nq,))
    if not pin.isNormalized(sim.world.model, q, NORM_TOLERANCE):
        raise checks.FieldError("q", "unit quaternions (and unit (cos, sin) pairs of "
                                f"continuous joints) within {NORM_TOLERANCE}",
                                "a configuration that is not normalized")
    d = int(sim.model.settings.friction_directions)
    return {
        "t": state["t"], "stats": state["stats"], "q": q,
        "v": checks.array(state["v"], "v", (nv,)),
        "applied": checks.applied(state["applied"], "applied", nv),
        "last": checks.step_record(state["last"], "last", nv, int(sim.world.model.njoints)),
        "guess": checks.guess(state["guess"], "guess", sim.model, nv, d),
        "controls": [checks.control(saved, f"controls[{i}]", c, MODES + ("trajectory",))
                     for i, (c, saved) in enumerate(zip(sim.controls, state["controls"]))],
        "angles": checks.unwrapped_angles(state["angles"], "angles", sim._joint_positions, q),
    }


def load_state(sim, path):
    """Put ``sim`` in the state saved in ``path`` (by a simulator of the same scene).

    Every field is checked before anything changes: a refused file leaves ``sim`` as it
    was.

    Raises
    ------
    CheckpointError
        The file is missing, is not a state file of this version, was saved from another
        world, time step or contact model (the first difference is named), or holds a
        field that does not fit this simulator (named with its path in the state).
    """
    state = read_state(path)
    mine, theirs = _identity(sim), state["identity"]
    for key, value in mine.items():
        if theirs.get(key) != value:
            raise CheckpointError(
                f"{path}: saved from another scene ({state.get('scene')}): {key} is "
                f"{checks.short(theirs.get(key))} there, {checks.short(value)} here")
    try:
        s = _checked(sim, state)
    except checks.FieldError as e:
        raise CheckpointError(f"{path}: {e}") from None
    sim.reset()
    sim.t = s["t"]
    sim._q, sim._v = s["q"].copy(), s["v"].copy()
    sim._applied = s["applied"]
    sim.stats = SimStats(**s["stats"])
    sim._last = s["last"]
    sim.stepper.data.guess = s["guess"]
    for control, saved in zip(sim.controls, s["controls"]):
        for key, value in saved.items():
            setattr(control, key, value)
    sim._joint_positions.anchor = s["angles"]
    sim.world.forward(sim._q, sim._v)
    return state
