"""Recording a run (run.npz) and the contact LCPs it solved (lcps.npz), without pickle."""

import numpy as np

from contact_lcp.exceptions import SceneError


class RunRecorder:
    """Collects one row per step; ``save`` writes the run as ``.npz``.

    Arrays written: ``t`` (N,) [s], ``q`` (N, nq), ``v`` (N, nv) (Pinocchio conventions;
    robots in scene order, then each free body as a free-flyer), ``contact_force_total``
    (N, 3) [N] in W on robot links, ``max_penetration`` (N,) [m], ``num_contacts``,
    ``num_active``, ``lcp_status`` (LCPStatus name, NO_CONTACT or SAFE_STOP),
    ``lcp_pivots``, ``lcp_method`` and ``wrench/<link>`` (N, 6) [N, N.m] in W about the
    link origin for each wrench link.
    """

    def __init__(self, wrench_links):
        self.links = list(wrench_links)
        self.rows = {k: [] for k in ("t", "q", "v", "contact_force_total", "max_penetration",
                                     "num_contacts", "num_active", "lcp_status", "lcp_pivots",
                                     "lcp_method")}
        self.wrenches = {link: [] for link in self.links}

    def add(self, sim, info):
        """Append the state after a step and its :class:`StepInfo`."""
        r = self.rows
        r["t"].append(info.t)
        r["q"].append(sim.q)
        r["v"].append(sim.v)
        r["contact_force_total"].append(sim.contact_force_total())
        r["max_penetration"].append(info.max_penetration)
        r["num_contacts"].append(info.num_contacts)
        r["num_active"].append(info.num_active)
        r["lcp_status"].append(info.lcp_status)
        r["lcp_pivots"].append(info.pivots)
        r["lcp_method"].append(info.lcp_method)
        for link in self.links:
            self.wrenches[link].append(sim.link_wrench(link, "world"))

    def arrays(self):
        """The recorded columns as arrays (strings as fixed-width unicode)."""
        out = {k: np.asarray(v) for k, v in self.rows.items()}
        for k in ("lcp_status", "lcp_method"):
            out[k] = np.asarray(self.rows[k], dtype=str)
        for link, w in self.wrenches.items():
            out[f"wrench/{link}"] = np.asarray(w).reshape(-1, 6)
        return out

    def save(self, path):
        """Write ``path`` (.npz, readable with ``allow_pickle=False``)."""
        np.savez_compressed(path, **self.arrays())


def save_lcps(path, lcps):
    """Write recorded LCPs exactly: ``lcps`` is a list of (M, q, contacts, active)."""
    sizes = np.array([q.shape[0] for _, q, _, _ in lcps], dtype=np.int64)
    np.savez_compressed(
        path,
        sizes=sizes,
        M=np.concatenate([M.ravel() for M, _, _, _ in lcps]) if lcps else np.zeros(0),
        q=np.concatenate([q for _, q, _, _ in lcps]) if lcps else np.zeros(0),
        contacts=np.array([c for _, _, c, _ in lcps], dtype=np.int64),
        active=np.array([a for _, _, _, a in lcps], dtype=np.int64),
    )


def load_lcps(path):
    """Read what :func:`save_lcps` wrote: a list of (M, q, contacts, active)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            sizes, M, q = f["sizes"], f["M"], f["q"]
            contacts, active = f["contacts"], f["active"]
    except (OSError, KeyError, ValueError) as e:
        raise SceneError(f"{path}: expected an LCP recording from 'contact-lcp simulate "
                         f"--record-lcps' (arrays sizes, M, q, contacts, active): {e}") from e
    out, om, oq = [], 0, 0
    for n, c, a in zip(sizes, contacts, active):
        n = int(n)
        out.append((M[om : om + n * n].reshape(n, n), q[oq : oq + n], int(c), int(a)))
        om += n * n
        oq += n
    return out
