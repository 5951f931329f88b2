"""Recording a run (run.npz) and the contact LCPs it solved (lcps.npz), without pickle."""

import os
import zipfile

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.sim.files import write_atomically


class RunRecorder:
    """Collects one row per step; ``save`` writes the run as ``.npz``.

    Arrays written: ``t`` (N,) [s], ``q`` (N, nq), ``v`` (N, nv) (Pinocchio conventions;
    robots in scene order, then each free body as a free-flyer), ``contact_force_total``
    (N, 3) [N] in W on robot links, ``max_penetration`` (N,) [m], ``num_contacts``,
    ``num_active``, ``lcp_status`` (LCPStatus name, NO_CONTACT or SAFE_STOP),
    ``lcp_pivots``, ``lcp_method``, ``lcp_rungs`` (the rungs of the model's ladder that
    ran, ``name:outcome`` separated by spaces) and ``wrench/<link>`` (N, 6) [N, N.m] in
    W about the link origin for each wrench link.

    Per one-dof joint of the robots: ``joint_names`` (n,) and ``joint_position``,
    ``joint_velocity``, ``joint_effort`` (N, n) [rad or m, rad/s or m/s, N.m or N], as
    ``Simulator.joint_state()`` reports them (a continuous joint's position is its
    unwrapped angle, while ``q`` holds its cosine and sine).

    Per step, what the viewer's replay shows (:mod:`contact_lcp.viewer`): ``lcp_failures``
    and ``lcp_fallbacks`` (N,) of the step's solve report, and its contacts, all steps'
    one after the other: ``contact_count`` (N,) contacts of each step, ``contact_point``
    (K, 3) [m] in W, ``contact_normal`` (K, 3) unit normals from A to B,
    ``contact_force`` (K, 3) [N] on B in W (average over the step), ``contact_distance``
    (K,) [m] and ``contact_mu`` (K,). ``scene_path`` (a 0-d string) is the scene file's
    absolute path, empty when the scene came from no file.
    """

    #: the per-step columns; runs written before the viewer lack the last two
    STEP_COLUMNS = ("t", "q", "v", "contact_force_total", "max_penetration", "num_contacts",
                    "num_active", "lcp_status", "lcp_pivots", "lcp_method", "lcp_rungs",
                    "joint_position", "joint_velocity", "joint_effort", "lcp_failures",
                    "lcp_fallbacks")
    #: the per-contact columns, concatenated over the steps
    CONTACT_COLUMNS = ("contact_point", "contact_normal", "contact_force", "contact_distance",
                       "contact_mu")

    def __init__(self, wrench_links, joint_names=(), scene_path=None):
        self.links = list(wrench_links)
        self.joint_names = list(joint_names)
        self.scene_path = "" if scene_path is None else os.path.abspath(str(scene_path))
        self.rows = {k: [] for k in self.STEP_COLUMNS + ("contact_count",)}
        self.tables = []  # per step, (k, 11): the CONTACT_COLUMNS side by side
        self.wrench_rows = []  # per step, (len(links), 6)

    @property
    def wrenches(self):
        """``{link: [(6,) wrench of each step]}`` [N, N.m] in W about the link origin."""
        return {link: [w[i] for w in self.wrench_rows] for i, link in enumerate(self.links)}

    def add(self, sim, info):
        """Append the state after a step and its :class:`StepInfo`."""
        r = self.rows
        r["t"].append(info.t)
        r["q"].append(sim.q)
        r["v"].append(sim.v)
        table, total, wrenches = sim.contact_table(self.links)
        r["contact_force_total"].append(total)
        r["max_penetration"].append(info.max_penetration)
        r["num_contacts"].append(info.num_contacts)
        r["num_active"].append(info.num_active)
        r["lcp_status"].append(info.lcp_status)
        r["lcp_pivots"].append(info.pivots)
        r["lcp_method"].append(info.lcp_method)
        r["lcp_rungs"].append(info.lcp_rungs)
        position, velocity, effort = sim.joint_arrays()
        r["joint_position"].append(position)
        r["joint_velocity"].append(velocity)
        r["joint_effort"].append(effort)
        r["lcp_failures"].append(info.report.failures)
        r["lcp_fallbacks"].append(info.fallbacks)
        r["contact_count"].append(len(table))
        self.tables.append(table)
        self.wrench_rows.append(wrenches)

    def arrays(self):
        """The recorded columns as arrays (strings as fixed-width unicode)."""
        out = {k: np.asarray(v) for k, v in self.rows.items()}
        for k in ("lcp_status", "lcp_method", "lcp_rungs"):
            out[k] = np.asarray(self.rows[k], dtype=str)
        n = len(self.joint_names)
        for k in ("joint_position", "joint_velocity", "joint_effort"):
            out[k] = np.asarray(self.rows[k], dtype=float).reshape(len(self.rows["t"]), n)
        out["joint_names"] = np.asarray(self.joint_names, dtype=str)
        out["contact_count"] = np.asarray(self.rows["contact_count"], dtype=np.int64)
        table = np.concatenate(self.tables) if self.tables else np.zeros((0, 11))
        for k, cols in zip(self.CONTACT_COLUMNS, (slice(0, 3), slice(3, 6), slice(6, 9), 9, 10)):
            out[k] = np.ascontiguousarray(table[:, cols])
        out["scene_path"] = np.asarray(self.scene_path, dtype=str)
        wrenches = (np.stack(self.wrench_rows) if self.wrench_rows
                    else np.zeros((0, len(self.links), 6)))
        for i, link in enumerate(self.links):
            out[f"wrench/{link}"] = np.ascontiguousarray(wrenches[:, i])
        return out

    def save(self, path):
        """Write ``path`` (.npz, readable with ``allow_pickle=False``; atomically)."""
        arrays = self.arrays()
        write_atomically(path, lambda f: np.savez_compressed(f, **arrays))


def read_run(path):
    """``{name: array}`` of a run written by ``contact-lcp simulate --output``
    (:meth:`RunRecorder.save`); SceneError naming the file when it is missing or is not
    an ``.npz`` of arrays. What a caller needs of the arrays it checks itself."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError(f"a single {type(loaded).__name__}, not an .npz of arrays")
        with loaded as f:
            return {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise SceneError(f"run {str(path)!r} does not exist") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise SceneError(f"{path}: expected a run .npz written by 'contact-lcp simulate "
                         f"--output' ({e})") from None


#: prefix of the facet-set arrays in a recording (see :func:`save_problems`)
FACET_PREFIX = "facet_sets."
#: the fields of :class:`~contact_lcp.collision.facets.FacetSets`, in order
FACET_FIELDS = ("point", "joint_v", "joint_f", "geom_v", "geom_f", "kind", "mu", "start",
                "normal", "psi", "R_WC", "J", "edge", "Jw")


def _problem_arrays(p):
    """The arrays of problem ``p`` with its facet sets (if any) under ``FACET_PREFIX``."""
    out = dict(p.arrays())
    sets = p.extras.get("facet_sets") if p.extras else None
    if sets is not None:
        for name in FACET_FIELDS:
            value = getattr(sets, name)
            if value is not None:
                out[FACET_PREFIX + name] = np.asarray(value)
    return out


def save_problems(path, problems, num_active=None):
    """Write recorded :class:`~contact_lcp.contact.problem.ContactProblem` s exactly.

    Every field is stored as one flat array over all problems with the shapes alongside,
    so the file needs no pickle; ``num_active`` (one count per problem) is optional.
    The facet sets a model asked for (``extras["facet_sets"]``) are stored the same way,
    field by field, with ``<name>/present`` saying which problems have them.
    """
    problems = list(problems)
    if num_active is not None and len(num_active) != len(problems):
        raise ValueError(f"num_active: expected one count per problem ({len(problems)}); "
                         f"received {len(num_active)}")
    out = {"count": np.array(len(problems))}
    parts = [_problem_arrays(p) for p in problems]
    names = sorted({name for a in parts for name in a})
    for name in names:
        present = np.array([name in a for a in parts], dtype=bool)
        items = [np.asarray(a[name]) for a in parts if name in a]
        out[f"{name}/present"] = present
        out[f"{name}/shape"] = np.array([(list(a.shape) + [0, 0, 0, 0])[:4] for a in items],
                                        dtype=np.int64).reshape(-1, 4)
        out[f"{name}/ndim"] = np.array([a.ndim for a in items], dtype=np.int64)
        out[f"{name}/data"] = np.concatenate([a.ravel() for a in items]).astype(
            np.int64 if items[0].dtype.kind in "iub" else float)
    out["num_active"] = np.asarray(num_active if num_active is not None else
                                   [-1] * len(problems), dtype=np.int64)
    write_atomically(path, lambda f: np.savez_compressed(f, **out))


def load_problems(path):
    """Read what :func:`save_problems` wrote: ``(problems, num_active)``; facet sets come
    back in ``problem.extras["facet_sets"]``."""
    from dataclasses import replace

    from contact_lcp.collision.facets import FacetSets
    from contact_lcp.contact.problem import ContactProblem

    try:
        with np.load(path, allow_pickle=False) as f:
            files = {k: f[k] for k in f.files}
        count = int(files["count"])
        names = sorted({k.split("/")[0] for k in files if k.endswith("/data")})
        fields = {}
        for name in names:
            data, shapes, ndims = (files[f"{name}/data"], files[f"{name}/shape"],
                                   files[f"{name}/ndim"])
            present = files.get(f"{name}/present", np.ones(count, dtype=bool))
            items, o = [], 0
            for shape, ndim in zip(shapes, ndims):
                shape = tuple(int(x) for x in shape[:ndim])
                size = int(np.prod(shape)) if shape else 1
                items.append(data[o:o + size].reshape(shape))
                o += size
            slots = [None] * count
            for i, item in zip(np.flatnonzero(present), items):
                slots[i] = item
            fields[name] = slots
        base = [n for n in names if not n.startswith(FACET_PREFIX)]
        problems = []
        for i in range(count):
            p = ContactProblem.from_arrays({n: fields[n][i] for n in base})
            facet = {n[len(FACET_PREFIX):]: fields[n][i] for n in names
                     if n.startswith(FACET_PREFIX) and fields[n][i] is not None}
            if facet:
                p = replace(p, extras={"facet_sets": FacetSets(**facet)})
            problems.append(p)
        return problems, [int(a) for a in files["num_active"]]
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as e:
        raise SceneError(f"{path}: expected a recording from 'contact-lcp simulate "
                         f"--record-lcps' (contact problems): {e}") from e


def frictional_lcps(problems, num_active, friction_directions=8):
    """The frictional LCP of each problem, as (M, q, contacts, active) tuples (the seed's
    Table I replays these through each LCP method).

    The fixed-frame pyramid LCP of the problem's contacts; for a problem with facet sets,
    the whole facet-set LCP the ``facet_set`` model (default options) builds from them
    (``contacts`` is then its number of facets).
    """
    from contact_lcp.contact.base import ModelSettings
    from contact_lcp.contact.facet_set import FacetSetModel
    from contact_lcp.contact.lcp_builder import build_contact_lcp

    facet_model = FacetSetModel(ModelSettings(friction_directions=friction_directions,
                                              friction_frame="fixed"))
    out = []
    for p, a in zip(problems, num_active):
        if p.extras and p.extras.get("facet_sets") is not None:
            M, q, facets = facet_model.lcp(p)
            out.append((M, q, facets, a))
            continue
        lcp = build_contact_lcp(p.G, p.u, p.mu, num_directions=friction_directions,
                                num_unilateral=p.num_limits, normal_bias=p.bias)
        out.append((lcp.M, lcp.q, p.num_contacts, a))
    return out
