"""Helpers shared by the benchmarks: revision stamp, CSV files, statistics, text tables.

Kept free of solver imports so that every benchmark (LCP, simulation) stamps and stores
its results the same way: ``benchmarks/results/<name>_<date>_<revision>.csv`` with the
revision and date also in a column of every row.
"""

import csv
import datetime
import math
import os
import platform
import subprocess

import numpy as np

#: Default output folder, next to this file.
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def git_revision(cwd=None):
    """Short commit hash of ``HEAD``, with ``-dirty`` when tracked files have changes.

    Parameters
    ----------
    cwd : str, optional
        A folder inside the repository; default the folder of this file.

    Returns
    -------
    str
        e.g. ``'f486e04'`` or ``'f486e04-dirty'``; ``'unknown'`` outside a git checkout.
    """
    cwd = cwd or os.path.dirname(os.path.abspath(__file__))
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=cwd, check=True,
            capture_output=True, text=True,
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, check=True,
            capture_output=True, text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("-dirty" if changes else "")


def utc_stamp(now=None):
    """``(date, stamp)``: ``'2026-01-31'`` and ``'20260131T120501Z'`` (UTC) for file names."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%d"), now.strftime("%Y%m%dT%H%M%SZ")


def results_path(name, revision, stamp, results_dir=None):
    """``<results_dir>/<name>_<stamp>_<revision>.csv`` (folder created if missing)."""
    results_dir = results_dir or RESULTS_DIR
    os.makedirs(results_dir, exist_ok=True)
    return os.path.join(results_dir, f"{name}_{stamp}_{revision}.csv")


def machine():
    """The machine a result was measured on: CPU model, cores, memory, OS (the
    ``machine`` column of every result file, which the benchmark pages quote)."""
    model = platform.processor() or platform.machine()
    memory = ""
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        model = names[0] if names else model
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{model}, {os.cpu_count()} cores{memory}, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}")


def write_csv(path, rows, columns, float_format=None):
    """Write ``rows`` (a list of dicts) with the given column order, and a last column
    ``machine`` (:func:`machine`) in every row.

    Floats as ``repr`` (exact) or with ``float_format`` (e.g. ``'%.6g'`` for bulky
    per-run files); missing keys as empty cells. Returns ``path``.
    """
    columns = list(columns) + ([] if "machine" in columns else ["machine"])
    here = machine()
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c, here if c == "machine" else None),
                                      float_format) for c in columns})
    return path


def read_csv(path):
    """Rows of a CSV written by :func:`write_csv`, as dicts of strings."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _cell(x, float_format=None):
    if x is None:
        return ""
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if not math.isfinite(x):
            return str(x)
        return float_format % x if float_format else repr(x)
    return x


def median(x):
    """Median of ``x``; NaN when empty."""
    x = np.asarray(x, dtype=float)
    return float(np.median(x)) if x.size else float("nan")


def percentile(x, p):
    """``p``-th percentile of ``x`` (linear interpolation); NaN when empty."""
    x = np.asarray(x, dtype=float)
    return float(np.percentile(x, p)) if x.size else float("nan")


def shifted_geometric_mean(x, shift):
    """``exp(mean(log(x + shift))) - shift``: the usual solver-benchmark mean of times.

    Less dominated by a few slow cases than the arithmetic mean, less by many trivial
    ones than the plain geometric mean. NaN when empty.
    """
    x = np.asarray(x, dtype=float)
    if not x.size:
        return float("nan")
    return float(np.exp(np.mean(np.log(x + shift))) - shift)


def format_value(x):
    """Compact text for a table cell: ints as is, floats to 3 significant digits."""
    if x is None:
        return "-"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x):
            return "-"
        if x == 0.0:
            return "0"
        if 1e-3 <= abs(x) < 1e5:
            return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
        return f"{x:.2e}"
    return str(x)


def format_table(rows, columns, headers=None):
    """Fixed-width text table; first column left-aligned, the others right-aligned.

    Parameters
    ----------
    rows : list of dict
    columns : list of str
        Keys to show, in order.
    headers : list of str, optional
        Column titles; default the keys.
    """
    headers = list(headers or columns)
    cells = [[format_value(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(items):
        first = items[0].ljust(widths[0])
        rest = [s.rjust(w) for s, w in zip(items[1:], widths[1:])]
        return "  ".join([first] + rest)

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells]
    return "\n".join(out)
