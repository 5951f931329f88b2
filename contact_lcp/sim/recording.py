"""Recording a run (run.npz) and the contact LCPs it solved (lcps.npz), without pickle."""

import os
import tempfile
import zipfile

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.sim.files import write_atomically


#: steps a recorder keeps as Python rows before it packs them into a block of arrays
#: (and, with a spool folder, writes the block there): what a run holds in memory
BLOCK = 2048
#: steps whose contact tables (and so their force distributions) a recorder computes in
#: one batch (:meth:`RunRecorder.add`), or fewer once they hold this many contacts: each
#: waiting step keeps its contact problem, and more of them than the cache holds make the
#: steps slower than the batch saves (its measurements are in the history of this line)
LATER_STEPS = 16
LATER_CONTACTS = 2048
#: zlib level of a run file's arrays: 1, the fastest, because a run file is written
#: while its user waits after the last step, and on these arrays (floats that change
#: every step) the higher levels save a few per cent of the bytes for several times the
#: time
COMPRESS_LEVEL = 1


class _Blocks:
    """The packed blocks of one recorded array, rows of one dtype and shape.

    In memory, or with ``folder`` in a file there that has no name (it is gone when the
    recorder is, or the process ends, however it ends)."""

    def __init__(self, folder=None):
        self.file = None if folder is None else tempfile.TemporaryFile(dir=folder)
        self.parts = []  # in memory: the arrays; in the file: (offset, dtype, rows) of each
        self.rows = 0
        self.dtype = None
        self.shape = None  # of one row
        self._end = 0  # bytes in the file

    def add(self, block):
        """Append ``block`` (rows, *shape); a later block may widen the dtype."""
        block = np.ascontiguousarray(block)
        if self.shape is None:
            self.dtype, self.shape = block.dtype, block.shape[1:]
        elif block.shape[1:] != self.shape:
            raise ValueError(f"recorded rows of shape {self.shape} so far; this step's "
                             f"are {block.shape[1:]}")
        else:
            self.dtype = np.result_type(self.dtype, block.dtype)
        if self.file is None:
            self.parts.append(block)
        else:
            self.file.write(_bytes(block, block.dtype))
            self.parts.append((self._end, block.dtype, len(block)))
            self._end += block.nbytes
        self.rows += len(block)

    def chunks(self):
        """The blocks in order, each as an array of this column's dtype."""
        if self.file is not None:
            self.file.flush()
        for part in self.parts:
            if self.file is None:
                yield part.astype(self.dtype, copy=False)
                continue
            offset, dtype, rows = part
            raw, size = bytearray(), rows * dtype.itemsize * int(np.prod(self.shape))
            while len(raw) < size:  # (pread may return less than asked)
                got = os.pread(self.file.fileno(), size - len(raw), offset + len(raw))
                if not got:
                    raise OSError("a recorder's spool file ended early")
                raw += got
            yield np.frombuffer(raw, dtype).reshape((rows,) + self.shape).astype(
                self.dtype, copy=False)

    def close(self):
        if self.file is not None:
            self.file.close()


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

    The contact columns (and ``contact_force_total``, ``contact_count``, the wrenches)
    of the last steps wait (:data:`LATER_STEPS`) and are computed together, when more
    would wait or a column is read: the forces are the same, and their distribution's
    code and data stay in the cache from one step's to the next.

    Memory: the last :data:`BLOCK` steps as Python rows, the earlier ones packed into
    arrays; with ``spool`` (a folder, e.g. the output's) the packed blocks go to
    nameless files there instead, so a run of any length holds the same memory (and a
    tuple per column per block to find them), and :meth:`save` streams them into the
    ``.npz``.
    """

    #: the per-step columns; runs written before the viewer lack the last two
    STEP_COLUMNS = ("t", "q", "v", "contact_force_total", "max_penetration", "num_contacts",
                    "num_active", "lcp_status", "lcp_pivots", "lcp_method", "lcp_rungs",
                    "joint_position", "joint_velocity", "joint_effort", "lcp_failures",
                    "lcp_fallbacks")
    #: the per-contact columns, concatenated over the steps
    CONTACT_COLUMNS = ("contact_point", "contact_normal", "contact_force", "contact_distance",
                       "contact_mu")
    #: columns of strings (packed as codes into the strings each column has seen)
    TEXT_COLUMNS = ("lcp_status", "lcp_method", "lcp_rungs")

    def __init__(self, wrench_links, joint_names=(), scene_path=None, spool=None):
        self.links = list(wrench_links)
        self.joint_names = list(joint_names)
        self.scene_path = "" if scene_path is None else os.path.abspath(str(scene_path))
        self.rows = {k: [] for k in self.STEP_COLUMNS + ("contact_count",)}
        self.tables = []  # per step, (k, 11): the CONTACT_COLUMNS side by side
        self.wrench_rows = []  # per step, (len(links), 6)
        self._packed = {k: _Blocks(spool) for k in tuple(self.rows) + ("contacts", "wrenches")}
        self._codes = {k: {} for k in self.TEXT_COLUMNS}
        self._later = []  # the waiting steps' contact tables (contact_table_later)
        self._later_contacts = 0

    def __len__(self):
        """Steps recorded."""
        return self._packed["t"].rows + len(self.rows["t"])

    def last(self, name):
        """The last step's value of the step column ``name`` (IndexError before a step)."""
        self._tables()
        return self.rows[name][-1]

    def column_sum(self, name):
        """The sum over the recorded steps of the numeric step column ``name`` (float64)."""
        _, row, _, chunks = self._chunks(name)
        total = np.zeros(row)
        for c in chunks:
            total += c.sum(axis=0, dtype=float)
        return total

    def add(self, sim, info):
        """Append the state after a step and its :class:`StepInfo`."""
        r = self.rows
        if len(r["t"]) == BLOCK:  # (before the append: the last step stays a Python row)
            self._pack()
        r["t"].append(info.t)
        r["q"].append(sim.q)
        r["v"].append(sim.v)
        self._later.append(sim.contact_table_later(self.links))
        self._later_contacts += info.num_contacts
        if (len(self._later) >= LATER_STEPS or self._later_contacts >= LATER_CONTACTS
                or len(self) == 1):  # (the run's first step's at once: it loads their kernels)
            self._tables()
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

    def _tables(self):
        """Compute the waiting steps' contact tables, in step order, into their rows."""
        r = self.rows
        for later in self._later:
            table, total, wrenches = later()
            r["contact_force_total"].append(total)
            r["contact_count"].append(len(table))
            self.tables.append(table)
            self.wrench_rows.append(wrenches)
        self._later.clear()
        self._later_contacts = 0

    def _block(self, name):
        """The rows not yet packed of ``name`` (a step column, ``contacts`` or
        ``wrenches``) as one array."""
        if name == "contacts":
            return np.concatenate(self.tables) if self.tables else np.zeros((0, 11))
        if name == "wrenches":
            return (np.stack(self.wrench_rows) if self.wrench_rows
                    else np.zeros((0, len(self.links), 6)))
        values = self.rows[name]
        if name in self.TEXT_COLUMNS:
            codes = self._codes[name]
            return np.array([codes.setdefault(x, len(codes)) for x in values], dtype=np.int32)
        if name.startswith("joint_"):
            return np.asarray(values, dtype=float).reshape(len(values), len(self.joint_names))
        if name == "contact_count":
            return np.asarray(values, dtype=np.int64)
        return np.asarray(values)

    def _pack(self):
        """Move the Python rows into the packed blocks."""
        self._tables()
        for name, blocks in self._packed.items():
            blocks.add(self._block(name))
        for values in self.rows.values():
            values.clear()
        self.tables.clear()
        self.wrench_rows.clear()

    def _chunks(self, name):
        """``(dtype, shape of one row, rows, chunks)`` of ``name``: the packed blocks,
        then the Python rows (a generator, one block in memory at a time)."""
        self._tables()
        blocks, tail = self._packed[name], self._block(name)
        if blocks.shape is None:
            return tail.dtype, tail.shape[1:], len(tail), iter([tail])
        dtype = np.result_type(blocks.dtype, tail.dtype) if len(tail) else blocks.dtype

        def chunks():
            for c in blocks.chunks():
                yield c.astype(dtype, copy=False)
            yield tail.astype(dtype, copy=False)
        return dtype, blocks.shape, blocks.rows + len(tail), chunks()

    def _streams(self):
        """``{name: (dtype, shape, chunks)}`` of every array the run file holds."""
        out = {}
        for name in self.rows:
            dtype, row, n, chunks = self._chunks(name)
            if name in self.TEXT_COLUMNS:
                words = list(self._codes[name])  # in code order
                text = np.asarray(words if words else [""], dtype=str)
                chunks = _words(text, chunks)
                dtype, row = text.dtype, ()
            out[name] = (dtype, (n,) + row, chunks)
        for k, cols in zip(self.CONTACT_COLUMNS,
                           (slice(0, 3), slice(3, 6), slice(6, 9), 9, 10)):
            dtype, row, n, chunks = self._chunks("contacts")  # (read once per column)
            out[k] = (np.dtype(float), (n,) + ((3,) if isinstance(cols, slice) else ()),
                      _columns(chunks, cols))
        for i, link in enumerate(self.links):
            dtype, row, n, chunks = self._chunks("wrenches")
            out[f"wrench/{link}"] = (np.dtype(float), (n, 6), _columns(chunks, i))
        out["joint_names"] = _whole(np.asarray(self.joint_names, dtype=str))
        out["scene_path"] = _whole(np.asarray(self.scene_path, dtype=str))
        return out

    def arrays(self):
        """The recorded columns as arrays (strings as fixed-width unicode)."""
        out = {}
        for name, (dtype, shape, chunks) in self._streams().items():
            if shape == ():
                out[name] = next(chunks)
                continue
            whole, o = np.empty(shape, dtype=dtype), 0
            for c in chunks:
                whole[o:o + len(c)] = c
                o += len(c)
            out[name] = whole
        return out

    def save(self, path):
        """Write ``path`` (.npz, readable with ``allow_pickle=False``; atomically), one
        block at a time."""
        def write(f):
            with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED, allowZip64=True,
                                 compresslevel=COMPRESS_LEVEL) as zf:
                for name, (dtype, shape, chunks) in self._streams().items():
                    with zf.open(name + ".npy", "w", force_zip64=True) as out:
                        np.lib.format.write_array_header_1_0(out, {
                            "descr": np.lib.format.dtype_to_descr(dtype),
                            "fortran_order": False, "shape": shape})
                        for c in chunks:
                            out.write(_bytes(c, dtype))
        write_atomically(path, write)

    def close(self):
        """Free the spool files (a recorder that is dropped frees them too)."""
        for blocks in self._packed.values():
            blocks.close()


def _bytes(array, dtype):
    """The bytes of ``array`` as ``dtype``, C order, without a copy when it is one."""
    return np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8).data


def _words(text, chunks):
    """The chunks' codes as their words ``text[code]``."""
    for c in chunks:
        yield text[c]


def _columns(chunks, cols):
    """The chunks' columns ``cols`` (an index or a slice of the second axis)."""
    for c in chunks:
        yield np.ascontiguousarray(c[:, cols], dtype=float)


def _whole(array):
    """A stream of one array in one chunk."""
    return array.dtype, array.shape, iter([array])


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
