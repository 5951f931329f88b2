"""Yamane & Nakamura's Table III for the bundled chain scenes (``contact-lcp table3``).

Columns as in the seed: simulated duration, contacts and active contacts per frame (frames
with at least one contact), frames, failures, LCP solve time and simulation time per frame
[ms]; then ours only: fallbacks (frictionless or safe stop). S1's published values (C++,
Pentium Xeon 3.8 GHz, 2008) are printed next to ours for the scenes it ran.
"""

import time
from pathlib import Path

import numpy as np

#: S1 Table III: scene -> (duration [s], contacts, active, frames, failures, LCP ms, frame ms)
PUBLISHED = {
    "hoist": (10, 34.2, 20.8, 9357, 0, 62.0, 120),
    "hoist (10 ms)": (10, 48.4, 23.0, 935, 0, 96.5, 187),
    "ring": (4, 26.1, 21.7, 3926, 0, 35.0, 80.6),
    "net": (2, 25.7, 16.9, 1818, 0, 9.72, 62.5),
}

#: the bundled scenes of the table, in order
SCENES = ("hoist", "ring", "net", "disks_21", "brazil_nut")
#: what ``contact-lcp table3`` runs when no scene is named (all: the 201-body Brazil nut's
#: 75 s take ~5 min on a 2-core machine since its relaxed LCPs are solved as a velocity QP)
DEFAULT_SCENES = SCENES

COLUMNS = ("scene", "duration", "contacts", "active", "frames", "failure", "fallbacks",
           "lcp_ms", "frame_ms")


def bundled_scenes():
    """``{name: path}`` of the :data:`SCENES` that exist in the package's config folder."""
    from contact_lcp.sim.scene import package_share_dir

    config = package_share_dir() / "config"
    return {n: str(config / f"{n}.yaml") for n in SCENES if (config / f"{n}.yaml").is_file()}


def run_scene(path, *, duration=None, time_step=None, name=None, progress=None):
    """Simulate one scene and return its Table III row.

    Parameters
    ----------
    path : str
        Scene YAML file.
    duration : float, optional
        Simulated seconds (default: the scene's).
    time_step : float, optional
        Replaces the scene's time step [s].
    name : str, optional
        Row label (default: the file's stem, with the time step if replaced).
    progress : callable, optional
        Called as ``progress(sim, info)`` after each step.

    Returns
    -------
    dict
        Keys :data:`COLUMNS`; times in ms per frame, counts averaged over frames with
        contact (0 when there were none).
    """
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(path, time_step=time_step)
    duration = sim.scene.duration if duration is None else float(duration)
    steps = int(round(duration / sim.h))
    contacts, active, solve_t, frame_t = [], [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        info = sim.step()
        frame_t.append(time.perf_counter() - t0)
        if info.num_contacts:
            contacts.append(info.num_contacts)
            active.append(info.num_active)
            solve_t.append(info.timings.get("solve", 0.0))
        if progress is not None:
            progress(sim, info)
    s = sim.stats
    label = name or Path(path).stem + ("" if time_step is None else f" ({time_step * 1e3:g} ms)")

    def mean(x):
        return float(np.mean(x)) if x else 0.0

    return {"scene": label, "duration": duration, "contacts": mean(contacts),
            "active": mean(active), "frames": steps, "failure": s.lcp_failures,
            "fallbacks": s.fallbacks + s.safe_stops, "lcp_ms": 1e3 * mean(solve_t),
            "frame_ms": 1e3 * mean(frame_t)}


def published_row(label):
    """S1's row for ``label`` in the :data:`COLUMNS` layout, or None."""
    if label not in PUBLISHED:
        return None
    d, c, a, f, fail, lcp, frame = PUBLISHED[label]
    return {"scene": f"{label} [S1]", "duration": float(d), "contacts": c, "active": a,
            "frames": f, "failure": fail, "fallbacks": "-", "lcp_ms": lcp, "frame_ms": frame}


def format_rows(rows):
    """Plain-text table of Table III rows."""
    def cell(x):
        return f"{x:.3g}" if isinstance(x, float) else str(x)

    cells = [list(COLUMNS)] + [[cell(r[c]) for c in COLUMNS] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(v.rjust(w) if i else v.ljust(w)
                               for i, (v, w) in enumerate(zip(row, widths))) for row in cells)
