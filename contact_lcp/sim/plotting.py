"""The force plot of a run (Yamane & Nakamura Fig. 2): vertical contact force per link."""

import os

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.sim.files import OutputPathError, write_atomically


def check_image_path(path, what):
    """Raise :class:`OutputPathError` unless matplotlib can write the format that
    ``path``'s extension names (e.g. ``.png``, ``.pdf``, ``.svg``)."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    ext = os.path.splitext(os.fspath(path))[1][1:].lower()
    if ext not in formats:
        raise OutputPathError(f"{what}: {os.fspath(path)!r}: expected a file name ending in "
                              f"one of {['.' + f for f in formats]}")
    return ext


def check_run(data, source):
    """Raise :class:`SceneError` unless ``data`` holds the arrays :func:`plot_run` reads,
    with one row per step: ``t`` (N,), ``contact_force_total`` (N, 3),
    ``max_penetration`` (N,) and ``wrench/<link>`` (N, 6)."""
    lacks = [k for k in ("t", "contact_force_total", "max_penetration") if k not in data]
    if lacks:
        raise SceneError(f"{source}: expected a run written by 'contact-lcp simulate "
                         f"--output'; it lacks the arrays {lacks} (it has {sorted(data)})")
    n = np.shape(data["t"])[0] if np.ndim(data["t"]) == 1 else None
    shapes = {"t": (n,), "contact_force_total": (n, 3), "max_penetration": (n,)}
    shapes.update({k: (n, 6) for k in data if k.startswith("wrench/")})
    for key, shape in shapes.items():
        a = np.asarray(data[key])
        if n is None or a.shape != shape or a.dtype.kind not in "iuf":
            raise SceneError(f"{source}: {key}: expected numbers of shape "
                             f"{('N',) + shape[1:]} (N steps as in 't'), got {a.dtype} "
                             f"{a.shape}")


def plot_run(data, path, title=""):
    """Write an image (PNG or another format by the extension; atomically) with the
    vertical contact force of each wrench link and the penetration.

    Parameters
    ----------
    data : mapping
        Arrays of a run (see :class:`contact_lcp.sim.recording.RunRecorder`).
    path : str
        Image file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    check_run(data, title or "run")
    fmt = check_image_path(path, "plot")
    t = np.asarray(data["t"])
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    try:
        links = sorted(k.split("/", 1)[1] for k in data if k.startswith("wrench/"))
        for link in links:
            ax1.plot(t, np.asarray(data[f"wrench/{link}"])[:, 2], label=link)
        ax1.plot(t, np.asarray(data["contact_force_total"])[:, 2], "k--", lw=1, label="total")
        ax1.set_ylabel("vertical contact force [N]")
        ax1.legend(loc="best")
        ax1.set_title(title)
        ax2.plot(t, 1e3 * np.asarray(data["max_penetration"]))
        ax2.set_ylabel("max penetration [mm]")
        ax2.set_xlabel("time [s]")
        fig.tight_layout()
        write_atomically(path, lambda f: fig.savefig(f, format=fmt, dpi=100), suffix="." + fmt)
    finally:
        plt.close(fig)
