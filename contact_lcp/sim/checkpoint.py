"""Save a simulator's state to a file and resume from it, to the pivot.

A run of hours (the 200-sphere pour) can then be stopped and continued, and a step that
misbehaves at t = 1.37 s can be replayed without the steps before it: like MuJoCo's
``mj_getState`` / ``mj_setState`` or a Drake context, but to a file. The file holds
everything that decides the next steps beyond the scene itself:

- the time, ``q`` and ``v``, the torque the servos applied over the last step;
- what the contact model carries across steps (its last basis, friction directions;
  :meth:`~contact_lcp.contact.base.ContactModel.memory`);
- the compiled step's back-off (:class:`~contact_lcp.sim.hot_step.HotStep`);
- the controllers' external commands and trajectories;
- the run's counters (:class:`~contact_lcp.sim.simulator.SimStats`) and the last step's
  record (contacts and impulses, for the wrench views; not its contact problem).

The 200-sphere pour's state is 0.23 MB.

A simulator built from the same scene and loaded with the file then steps exactly as the
one that saved it would have (``test/test_checkpoint.py`` compares q, v and pivots). The
file is a Python pickle: load only files you wrote yourself.
"""

import dataclasses
import os
import pickle
import tempfile

import numpy as np

from contact_lcp.exceptions import ContactLCPError

#: the file format; a file of another format is refused
FORMAT = "contact_lcp.state/1"
#: what a state file of that format holds
KEYS = ("format", "identity", "scene", "t", "q", "v", "applied", "stats", "last", "model",
        "hot", "controls")


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


def _control_state(control):
    return {k: getattr(control, k) for k in control.COMMAND_FIELDS}


def save_state(sim, path):
    """Write ``sim``'s state to ``path`` (atomically: a reader never sees half a file)."""
    hot = sim.stepper.hot
    state = {
        "format": FORMAT,
        "identity": _identity(sim),
        "scene": sim.scene.path,
        "t": sim.t,
        "q": sim._q.copy(),
        "v": sim._v.copy(),
        "applied": sim._applied,
        "stats": sim.stats,
        # the last step's contacts and impulses (the views read them), not its contact
        # problem: G and J are 46 MB of the pour's 46.5 MB, and no later step reads them
        "last": None if sim._last is None else dataclasses.replace(sim._last, problem=None),
        "model": sim.model.memory(),
        "hot": (hot.hits, dict(hot.misses), hot.skipped, hot._skip, hot._backoff),
        "controls": [_control_state(c) for c in sim.controls],
    }
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=folder)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # as open() would make it (mkstemp's is 0600)
        with os.fdopen(fd, "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_state(path):
    """The state dictionary of a file written by :func:`save_state`."""
    try:
        with open(path, "rb") as f:
            state = pickle.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"state file {path!r} does not exist") from None
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError,
            TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: not a contact_lcp state file ({e})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        got = state.get("format") if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(f"{path}: expected a state file of format {FORMAT!r}, got {got!r}")
    missing = [k for k in KEYS if k not in state]
    if missing:
        raise CheckpointError(f"{path}: the state file lacks {missing}")
    return state


def load_state(sim, path):
    """Put ``sim`` in the state saved in ``path`` (by a simulator of the same scene).

    Raises
    ------
    CheckpointError
        The file is missing, is not a state file, or was saved from another world, time
        step or contact model (the first difference is named).
    """
    state = read_state(path)
    mine, theirs = _identity(sim), state["identity"]
    for key, value in mine.items():
        if theirs.get(key) != value:
            raise CheckpointError(
                f"{path}: saved from another scene ({state.get('scene')}): {key} is "
                f"{_short(theirs.get(key))} there, {_short(value)} here")
    q, v = np.asarray(state["q"], dtype=float), np.asarray(state["v"], dtype=float)
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise CheckpointError(f"{path}: the saved state is not finite")
    sim.reset()
    sim.t = float(state["t"])
    sim._q, sim._v = q.copy(), v.copy()
    sim._applied = state["applied"]
    sim.stats = state["stats"]
    sim._last = state["last"]
    sim.model.restore(state["model"])
    hot = sim.stepper.hot
    hot.hits, misses, hot.skipped, hot._skip, hot._backoff = state["hot"]
    hot.misses = dict(misses)
    for control, saved in zip(sim.controls, state["controls"]):
        for key, value in saved.items():
            setattr(control, key, value)
    sim.world.forward(sim._q, sim._v)
    return state


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
