"""One picture of the simulation (:class:`Frame`), read from a live simulator or from a
recorded run (:class:`RecordedRun`); plain arrays, no viewer library."""

from dataclasses import dataclass

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.sim.recording import read_run


@dataclass(frozen=True)
class Frame:
    """The state after a step and what its contact solve reported.

    Attributes
    ----------
    t : float
        Sim time [s].
    q : (nq,) ndarray
        World configuration (Pinocchio conventions).
    p_W, n_W, force_W : (k, 3) ndarray
        Contact points [m], unit normals from A to B, average forces on B over the step
        [N], all in W.
    mu : (k,) ndarray
        Friction coefficients.
    force_total : float
        Vertical component of the summed contact force on the robots [N] (the force
        chart's curve; with no robot, the sum over all contacts' forces on B).
    max_penetration : float
        [m], >= 0.
    status, method : str
        The step's LCP status label and the method that produced its impulse.
    pivots, failures, fallbacks : int or None
        Of the step's solves (None: not in an old recording).
    """

    t: float
    q: np.ndarray
    p_W: np.ndarray
    n_W: np.ndarray
    force_W: np.ndarray
    mu: np.ndarray
    force_total: float
    max_penetration: float
    status: str = ""
    method: str = ""
    pivots: int | None = 0
    failures: int | None = 0
    fallbacks: int | None = 0

    def report(self):
        """The solver report as one line of text."""
        def show(x):
            return "n/a" if x is None else str(x)

        return (f"method {self.method or '-'}, status {self.status or '-'}, pivots "
                f"{show(self.pivots)}, failures {show(self.failures)}, fallbacks "
                f"{show(self.fallbacks)}")


def frame_from_sim(sim, info=None):
    """The :class:`Frame` of ``sim`` now; ``info`` is the last step's StepInfo (None
    before the first step or after a reset)."""
    p, n, f, _, mu = sim.contact_arrays()
    total = sim.contact_force_total()[2] if sim.world.robots else float(f[:, 2].sum())
    if info is None:
        return Frame(sim.t, sim.q, p, n, f, mu, float(total), 0.0)
    return Frame(sim.t, sim.q, p, n, f, mu, float(total), float(info.max_penetration),
                 info.lcp_status, info.lcp_method, int(info.pivots),
                 int(info.report.failures), int(info.fallbacks))


#: arrays a run needs to be replayed at all
REQUIRED = ("t", "q", "contact_force_total", "max_penetration")


class RecordedRun:
    """A run written by ``contact-lcp simulate --output``, frame by frame.

    Runs recorded before per-contact arrays existed replay without contacts (``has_contacts``
    False); a file that is not a run raises :class:`SceneError` saying what it lacks.
    """

    def __init__(self, path):
        data = read_run(path)
        lacks = [k for k in REQUIRED if k not in data]
        if lacks:
            raise SceneError(f"{path}: expected a run written by 'contact-lcp simulate "
                             f"--output'; it lacks {lacks} (it has {sorted(data)})")
        self.path = str(path)
        self.t = np.asarray(data["t"], dtype=float).reshape(-1)
        n = len(self.t)
        self.q = np.asarray(data["q"], dtype=float)
        if n == 0 or self.q.ndim != 2 or self.q.shape[0] != n:
            raise SceneError(f"{path}: expected q of shape (N, nq) with N = {n} steps as in "
                             f"t (N >= 1), got {self.q.shape}")
        self.force_total = np.asarray(data["contact_force_total"], dtype=float).reshape(n, 3)[:, 2]
        self.max_penetration = np.asarray(data["max_penetration"], dtype=float).reshape(n)
        self.scene_path = str(data["scene_path"]) if "scene_path" in data else ""
        self._data = data
        self.has_contacts = "contact_count" in data
        if self.has_contacts:
            count = np.asarray(data["contact_count"], dtype=np.int64).reshape(n)
            self._start = np.concatenate([[0], np.cumsum(count)])
            total = int(self._start[-1])
            for k in ("contact_point", "contact_normal", "contact_force", "contact_mu"):
                if len(data[k]) != total:
                    raise SceneError(f"{path}: {k} has {len(data[k])} rows; expected {total} "
                                     "(the sum of contact_count)")

    def __len__(self):
        return len(self.t)

    def index_at(self, t):
        """Index of the last frame at or before sim time ``t`` [s] (the first if earlier)."""
        return int(max(np.searchsorted(self.t, t, side="right") - 1, 0))

    def _column(self, name, i, default=None):
        a = self._data.get(name)
        return default if a is None else a[i].item()

    def frame(self, i):
        """The :class:`Frame` of step ``i``."""
        d = self._data
        if self.has_contacts:
            s = slice(self._start[i], self._start[i + 1])
            p, n, f = d["contact_point"][s], d["contact_normal"][s], d["contact_force"][s]
            mu = d["contact_mu"][s]
        else:
            p = n = f = np.zeros((0, 3))
            mu = np.zeros(0)
        return Frame(float(self.t[i]), self.q[i], p, n, f, mu, float(self.force_total[i]),
                     float(self.max_penetration[i]), str(self._column("lcp_status", i, "")),
                     str(self._column("lcp_method", i, "")), self._column("lcp_pivots", i),
                     self._column("lcp_failures", i), self._column("lcp_fallbacks", i))
