"""A body's lowest point and the contact count, step by step (the seed's Figs. 6-9).

``contact-lcp trace`` runs a scene and writes these as CSV and as a plot, so that the
facet-set model and the standard one can be compared on the cracked ramp and the peg in
the hole.
"""

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.sim.files import write_atomically
from contact_lcp.sim.plotting import check_image_path

COLUMNS = ("t", "x", "y", "z", "tilt_deg", "contacts", "facet_sets", "pushing_facets",
           "max_penetration", "outcome")


def _rotation(quat):
    """(3, 3) rotation of a unit quaternion (x, y, z, w)."""
    x, y, z, w = quat / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def body_corners(sim, name):
    """(8, 3) corners in W of free body ``name`` (a box) at the current state [m]; the
    body's origin alone (1, 3) for other shapes."""
    for b in sim.world.bodies:
        if b.name == name:
            q = sim.q[b.q_slice]
            if b.shape != "box":
                return q[None, :3]
            h = 0.5 * np.asarray(b.size, dtype=float)
            local = np.array([[sx * h[0], sy * h[1], sz * h[2]]
                              for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
            return q[:3] + local @ _rotation(q[3:7]).T
    raise SceneError(f"no free body {name!r}; bodies: {[b.name for b in sim.world.bodies]}")


def tilt_deg(sim, name):
    """Rotation angle of body ``name`` from its identity orientation [deg]."""
    for b in sim.world.bodies:
        if b.name == name:
            w = abs(float(sim.q[b.q_slice][6]))
            return float(np.degrees(2.0 * np.arccos(min(1.0, w))))
    raise SceneError(f"no free body {name!r}; bodies: {[b.name for b in sim.world.bodies]}")


def trace_run(sim, body, steps):
    """Run ``steps`` steps and record, after each, the body's lowest point, its tilt, the
    number of contacts in the step's problem (the detector's points), of facet sets and of
    facets that pushed (facet_set model; 0 for the others).

    Returns
    -------
    dict of (steps,) ndarrays keyed by :data:`COLUMNS` (``x, y, z`` [m] of the lowest
    corner, ``tilt_deg`` [deg], ``max_penetration`` [m], ``outcome`` str).
    """
    rows = {c: [] for c in COLUMNS}
    for _ in range(int(steps)):
        info = sim.step()
        P = body_corners(sim, body)
        low = P[np.argmin(P[:, 2])]
        for c, v in zip(("t", "x", "y", "z"), (info.t, *low)):
            rows[c].append(float(v))
        rows["tilt_deg"].append(tilt_deg(sim, body))
        rows["contacts"].append(int(info.num_contacts))
        rows["facet_sets"].append(int(info.report.info.get("facet_sets", 0)))
        rows["pushing_facets"].append(int(info.report.info.get("pushing_facets", 0)))
        rows["max_penetration"].append(float(info.max_penetration))
        rows["outcome"].append(info.report.outcome.value)
    return {c: np.asarray(v) for c, v in rows.items()}


def write_csv(path, data):
    """Write :func:`trace_run` output as CSV with a header row (atomically)."""
    n = len(data["t"])
    text = ",".join(COLUMNS) + "\n" + "".join(
        ",".join(str(data[c][i]) for c in COLUMNS) + "\n" for i in range(n))
    write_atomically(path, lambda f: f.write(text.encode("utf-8")))


def plot_trace(data, path, title=""):
    """An image (PNG or the extension's format; atomically) with the lowest point's
    height and forward position, and the contact count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = data["t"]
    fig, (a1, a2, a3) = plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    a1.plot(t, data["z"], label="z")
    a1.set_ylabel("lowest point z [m]")
    a1.set_title(title)
    a2.plot(t, data["x"], label="x")
    a2.plot(t, data["tilt_deg"] / 100.0, label="tilt / 100 [deg]")
    a2.set_ylabel("lowest point x [m]")
    a2.legend(loc="best")
    a3.step(t, data["contacts"], where="post", label="contacts")
    a3.step(t, data["facet_sets"], where="post", label="facet sets")
    a3.step(t, data["pushing_facets"], where="post", label="pushing facets")
    a3.set_ylabel("count")
    a3.set_xlabel("time [s]")
    a3.legend(loc="best")
    fig.tight_layout()
    fmt = check_image_path(path, "plot")
    try:
        write_atomically(path, lambda f: fig.savefig(f, format=fmt, dpi=100), suffix="." + fmt)
    finally:
        plt.close(fig)
