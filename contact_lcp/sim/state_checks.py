"""Checks of every field of a state file against the simulator that loads it.

Each check raises :class:`FieldError` naming the field (its path in the state, e.g.
``guess.basic_b``), what was expected and what came; nothing is changed before
all of them passed. Arrays that reach compiled kernels (warm-start bases, pair keys)
are checked for their shapes and index ranges too: a kernel does not bounds-check.
"""

import dataclasses

import numpy as np

from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.contact.guess import BasisGuess, PyramidGuess
from contact_lcp.contact.report import Outcome, SolveReport
from contact_lcp.lcp.result import LCPStatus
from contact_lcp.sim.projection import Projection
from contact_lcp.sim.references import SampledReference
from contact_lcp.sim.stepper import StepRecord


class FieldError(ValueError):
    """One field of a state file that does not fit (the message names it)."""

    def __init__(self, field, expected, got):
        super().__init__(f"{field}: expected {expected}, got {short(got)}")


def short(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def integer(value, field, lo=0, hi=None):
    """``value`` as an int in [lo, hi] (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (
            hi is not None and value > hi):
        raise FieldError(field, f"an integer >= {lo}" + ("" if hi is None else f" and <= {hi}"),
                         value)
    return value


def real(value, field, lo=-np.inf):
    """``value`` as a finite float >= lo."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            np.isfinite(value) and value >= lo):
        raise FieldError(field, "a finite number" + ("" if lo == -np.inf else f" >= {lo}"),
                         value)
    return float(value)


def kind(value, field, types, what):
    if not isinstance(value, types):
        raise FieldError(field, what, value)
    return value


def array(value, field, shape, dtype="f", finite=True, lo=None, hi=None):
    """``value`` as an array of ``shape`` (None: any length on that axis) and dtype kind
    ``dtype`` ("f" float, "i" integer, "b" bool), finite and within [lo, hi)."""
    kinds = {"f": "fiu", "i": "iu", "b": "b"}[dtype]
    text = (f"{dict(f='a float', i='an integer', b='a bool')[dtype]} array of shape "
            f"{tuple('*' if s is None else s for s in shape)}")
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds or value.ndim != len(
            shape) or any(s is not None and s != n for s, n in zip(shape, value.shape)):
        raise FieldError(field, text, value)
    if dtype == "f":
        value = value.astype(float)
        if finite and not np.all(np.isfinite(value)):
            raise FieldError(field, "finite values", "NaN or inf in the array")
    if dtype == "i":
        value = value.astype(np.int64)
        if value.size and ((lo is not None and value.min() < lo)
                           or (hi is not None and value.max() >= hi)):
            raise FieldError(field, f"indices in [{lo}, {hi})",
                             f"values from {value.min()} to {value.max()}")
    return value


def unwrapped_angles(value, field, positions, q):
    """The continuous joints' unwrapped angles [rad] (``positions``: the simulator's
    :class:`~contact_lcp.sim.joint_angles.JointPositions`), each the angle of its
    ``(cos, sin)`` in ``q`` plus whole turns: another value would make the reported
    position jump at the next step."""
    value = array(value, field, positions.anchor.shape)
    ic = positions.idx_q[positions.continuous]
    off = value - np.arctan2(q[ic + 1], q[ic])
    turns = np.round(off / (2.0 * np.pi))
    if value.size and np.max(np.abs(off - 2.0 * np.pi * turns)) > 1e-6:
        raise FieldError(field, "the angles of q's continuous joints plus whole turns",
                         "angles that differ from them")
    return value


def stats(value, field, fields):
    """A dict of the run's counters, each an integer >= 0."""
    if not isinstance(value, dict) or set(value) != set(fields):
        raise FieldError(field, f"a mapping of the counters {list(fields)}", value)
    return {k: integer(value[k], f"{field}.{k}") for k in fields}


def control(value, field, control, modes):
    """One robot's external commands (:attr:`RobotControl.COMMAND_FIELDS`)."""
    fields = control.COMMAND_FIELDS
    if not isinstance(value, dict) or set(value) != set(fields):
        raise FieldError(field, f"a mapping of {list(fields)}", value)
    n = len(control.info.joint_names)
    mode = value["mode"]
    if not (isinstance(mode, np.ndarray) and mode.dtype == object and mode.shape == (n,)
            and all(m is None or m in modes for m in mode)):
        raise FieldError(f"{field}.mode", f"{n} entries, each null or one of {list(modes)}",
                         mode if not isinstance(mode, np.ndarray) else list(mode))
    out = {"mode": mode, "commanded": kind(value["commanded"], f"{field}.commanded", bool,
                                           "true or false")}
    for k in ("value", "cmd_kp", "cmd_kd"):
        out[k] = array(value[k], f"{field}.{k}", (n,))
    tracks = kind(value["tracks"], f"{field}.tracks", list, "a list of (joints, reference)")
    out["tracks"] = []
    for i, item in enumerate(tracks):
        f = f"{field}.tracks[{i}]"
        if not (isinstance(item, tuple) and len(item) == 2
                and isinstance(item[1], SampledReference)):
            raise FieldError(f, "a tuple (joint indices, sampled reference)", item)
        idx = array(item[0], f"{f}[0]", (None,), "i", lo=0, hi=n)
        ref = item[1]
        t = array(ref.t, f"{f}[1].t", (None,))
        if t.size == 0 or np.any(np.diff(t) <= 0):
            raise FieldError(f"{f}[1].t", "strictly increasing sample times", t)
        p = array(ref.p, f"{f}[1].p", (t.size, idx.size))
        v = None if ref.v is None else array(ref.v, f"{f}[1].v", (t.size, idx.size))
        out["tracks"].append((idx, SampledReference(t, p, v)))
    return out


def report(value, field):
    """A :class:`SolveReport` with fields of the right types."""
    kind(value, field, SolveReport, "a solve report")
    kind(value.outcome, f"{field}.outcome", Outcome, "an Outcome")
    if value.status is not None:
        kind(value.status, f"{field}.status", LCPStatus, "an LCPStatus or null")
    for k in ("applied", "method"):
        kind(getattr(value, k), f"{field}.{k}", str, "a string")
    for k in ("certified", "warm_started"):
        kind(getattr(value, k), f"{field}.{k}", bool, "true or false")
    for k in ("pivots", "solves", "failures", "fallbacks"):
        integer(getattr(value, k), f"{field}.{k}")
    for k, v in value.info.items():
        _plain(v, f"{field}.info.{k}")
    return value


def _plain(value, field):
    """A report's extra: numbers, strings, null, arrays and lists or mappings of them."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _plain(v, f"{field}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            _plain(v, f"{field}.{k}")
    elif not (value is None or isinstance(value, (bool, int, float, str, np.ndarray))):
        raise FieldError(field, "a number, string, array, or a list or mapping of them", value)


def contacts(value, field, nv, num_joints):
    """A :class:`ContactSet` whose arrays agree in length and whose indices fit."""
    kind(value, field, ContactSet, "a contact set")
    names = value.names
    if not (isinstance(names, tuple) and all(isinstance(n, str) for n in names)):
        raise FieldError(f"{field}.names", "a tuple of surface names", names)
    k = len(array(value.distance, f"{field}.distance", (None,)))
    return ContactSet(
        names, *(array(getattr(value, a), f"{field}.{a}", (k,), "i", lo=0, hi=len(names))
                 for a in ("body_a", "body_b")),
        *(array(getattr(value, a), f"{field}.{a}", (k,), "i", lo=0, hi=num_joints)
          for a in ("joint_a", "joint_b")),
        array(value.p_W, f"{field}.p_W", (k, 3)), array(value.R_WC, f"{field}.R_WC", (k, 3, 3)),
        array(value.distance, f"{field}.distance", (k,)), array(value.mu, f"{field}.mu", (k,)))


def step_record(value, field, nv, num_joints):
    """The last step's :class:`StepRecord` (without its contact problem), or None."""
    if value is None:
        return None
    kind(value, field, StepRecord, "the last step's record or null")
    c = contacts(value.contacts, f"{field}.contacts", nv, num_joints)
    projection = value.projection
    if projection is not None:
        f = f"{field}.projection"
        kind(projection, f, Projection, "a projection or null")
        projection = Projection(array(projection.dq, f"{f}.dq", (nv,)),
                                real(projection.depth_before, f"{f}.depth_before"),
                                real(projection.depth_after, f"{f}.depth_after"),
                                integer(projection.pivots, f"{f}.pivots"),
                                kind(projection.certified, f"{f}.certified", bool, "a bool"))
    timings = kind(value.timings, f"{field}.timings", dict, "a mapping of stage times")
    if value.problem is not None:
        raise FieldError(f"{field}.problem", "null (a state file holds no contact problem)",
                         value.problem)
    return dataclasses.replace(
        value, contacts=c, impulse_C=array(value.impulse_C, f"{field}.impulse_C", (len(c), 3)),
        limit_impulse=array(value.limit_impulse, f"{field}.limit_impulse", (None,)),
        report=report(value.report, f"{field}.report"),
        max_penetration=real(value.max_penetration, f"{field}.max_penetration"),
        timings={k: real(v, f"{field}.timings.{k}") for k, v in timings.items()},
        v_step=None if value.v_step is None else array(value.v_step, f"{field}.v_step", (nv,)),
        projection=projection)


def applied(value, field, nv):
    """The servos' ``(tau, armature, v_end, v_start)`` of the last step, or None."""
    if value is None:
        return None
    if not isinstance(value, tuple) or len(value) != 4:
        raise FieldError(field, "null or a tuple (tau, armature, v_end, v_start)", value)
    return tuple(array(a, f"{field}[{i}]", (nv,)) for i, a in enumerate(value))


def guess(value, field, model, nv, d):
    """The contact model's warm start (:mod:`contact_lcp.contact.guess`): None, or a
    record of the type the model takes (``model.GUESS``) whose arrays fit a world of
    ``nv`` velocities and pyramids of ``d`` edges (a compiled kernel reads them
    unchecked)."""
    if value is None:
        return None
    cls = model.GUESS
    if cls is None or type(value) is not cls:
        want = "null" if cls is None else f"null or a {cls.__name__}"
        raise FieldError(field, f"{want} (the warm start of the {model.name!r} model)",
                         type(value).__name__)
    if cls is BasisGuess:
        return BasisGuess(array(value.pair, f"{field}.pair", (None,), "i"),
                          array(value.basis, f"{field}.basis", (None,), "i", lo=0))
    pair = array(value.pair, f"{field}.pair", (None,), "i")
    k = pair.size
    limits = array(value.limits, f"{field}.limits", (None, nv))
    flags = value.basic_a, value.basic_b, value.basic_lam
    names = ("basic_a", "basic_b", "basic_lam")
    if any(f is None for f in flags):
        if not all(f is None for f in flags):
            raise FieldError(f"{field}.basic_a", "basic_a, basic_b and basic_lam all arrays "
                             "or all null", [type(f).__name__ for f in flags])
    else:
        shapes = ((k + limits.shape[0],), (k, d), (k,))
        flags = tuple(array(f, f"{field}.{n}", s, "b") for f, n, s in zip(flags, names, shapes))
    return PyramidGuess(pair, array(value.points, f"{field}.points", (k, 3)),
                        array(value.directions, f"{field}.directions", (k, 3)), limits,
                        *flags, _equilibration(value.equilibration, f"{field}.equilibration",
                                               k, limits.shape[0], d, flags[0]))


def _equilibration(value, field, k, l, d, basic_a):
    """A pyramid guess's equilibration factors: None, or (with a basis) ``d1`` and
    ``d2`` over the LCP of its ``k`` contacts and ``l`` limit rows, each 0 (not known) or
    a positive power of two."""
    if value is None:
        return None
    if basic_a is None:
        raise FieldError(field, "null (a guess without a basis has no equilibration)",
                         type(value).__name__)
    x = array(value, field, (2, k + l + k * d + k))
    known = x[x != 0.0]
    if np.any(known < 0.0) or np.any(np.frexp(known)[0] != 0.5) or \
            np.any((x[0] == 0.0) != (x[1] == 0.0)):
        raise FieldError(field, "0 (in both rows) or positive powers of two", "other values")
    return x
