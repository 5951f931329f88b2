"""The force plot of a run (Yamane & Nakamura Fig. 2): vertical contact force per link."""

import numpy as np


def plot_run(data, path, title=""):
    """Write a PNG with the vertical contact force of each wrench link and the penetration.

    Parameters
    ----------
    data : mapping
        Arrays of a run (see :class:`contact_lcp.sim.recording.RunRecorder`).
    path : str
        PNG file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.asarray(data["t"])
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
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
    fig.savefig(path, dpi=100)
    plt.close(fig)
