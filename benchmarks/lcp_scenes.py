"""Recorded LCPs of the stacking and pile scenes, and the scale sweep (issue 10).

``python benchmarks/bench_lcp.py --scenes DIR`` reads ``DIR/<scene>.npz`` written by
``contact-lcp simulate config/<scene>.yaml --record-lcps DIR/<scene>.npz`` and

* solves every recorded LCP (at most ``--per-scene`` per scene, spread over the
  recording) with each of our methods and quantecon's ``lcp_lemke``, every answer
  certified by :func:`contact_lcp.lcp.residual.certify` (each method's compiled code
  loaded first; a solve under 20 ms timed as the median of 5); prints per-size medians
  and certified counts;
* runs the scale sweep: each LCP with ``n <= --sweep-max-n`` under ``(alpha M, beta q)``
  for ``alpha, beta`` in ``{1e-6, 1e-3, 1, 1e3, 1e6}`` and 3 random row/column scalings
  ``D1 M D2`` (factors 10^U(-3, 3)); counts verdict changes against the unscaled problem
  and false successes (a certified answer that, mapped back, fails an independent dense
  check in the original units).

Both tables go to ``benchmarks/results/lcp-scenes_<stamp>_<rev>.csv`` and
``lcp-sweep_<stamp>_<rev>.csv``, the time against n to ``lcp-scenes_<stamp>_<rev>.png``
(``python benchmarks/lcp_scenes.py <lcp-scenes CSV>`` draws it again from a CSV).
"""

import time

import one_thread  # noqa: F401  (before numpy: one BLAS thread)

import numpy as np

import common
from contact_lcp.lcp import METHODS, solve
from contact_lcp.lcp.residual import certify
from contact_lcp.sim.recording import frictional_lcps, load_problems

SCENES = ("tower_5", "tower_10", "pyramid_3", "pyramid_4", "spheres_21", "spheres_200")
SIZE_BUCKETS = ((0, 50), (50, 150), (150, 400), (400, 800), (800, 10**6))
SCALES = (1e-6, 1e-3, 1.0, 1e3, 1e6)
SCENE_COLUMNS = ["scene", "index", "n", "variant", "status", "certified", "ms", "pivots",
                 "error", "tol", "revision", "date"]
SWEEP_COLUMNS = ["scene", "index", "n", "method", "scaling", "base_ok", "ok", "same_verdict",
                 "false_success", "revision", "date"]


def recorded(directory, per_scene, max_n=None):
    """``[(scene, index, M, q)]``: up to ``per_scene`` LCPs per scene, evenly spread."""
    out = []
    for scene in SCENES:
        try:
            lcps = frictional_lcps(*load_problems(f"{directory}/{scene}.npz"))
        except Exception as e:  # a scene not recorded yet is reported, not fatal
            print(f"  {scene}: not read ({type(e).__name__})")
            continue
        picks = np.unique(np.linspace(0, len(lcps) - 1, min(per_scene, len(lcps))).astype(int))
        for i in picks:
            M, q = lcps[i][0], lcps[i][1]
            if max_n is None or q.size <= max_n:
                out.append((scene, int(i), M, q))
    return out


def _quantecon():
    try:
        from quantecon.optimize import lcp_lemke
    except ImportError:
        return None
    lcp_lemke(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0]))  # compile
    return lcp_lemke


#: a solve faster than this [s] is repeated (median of REPEATS): one sub-millisecond call
#: is mostly timer and cache noise
REPEAT_BELOW, REPEATS = 0.02, 5


def _timed(call):
    """``(result, ms)``: the median time of ``call()`` over REPEATS calls when the first
    takes less than REPEAT_BELOW, else of the one call."""
    t = time.perf_counter()
    out = call()
    times = [time.perf_counter() - t]
    while times[0] < REPEAT_BELOW and len(times) < REPEATS:
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return out, 1e3 * float(np.median(times))


def run_scenes(problems, methods):
    """One row per (problem, variant); quantecon's answer certified by our check."""
    rows = []
    qe = _quantecon()
    pivoting = [p for p in problems if p[3].min() < 0.0]
    if pivoting:  # load each method's compiled code before timing, as quantecon's: one
        _, _, M0, q0 = min(pivoting, key=lambda p: p[3].size)  # untimed solve of the smallest
        for method in methods:
            solve(M0, q0, method=method)
    for scene, index, M, q in problems:
        n = q.size
        for method in methods:
            res, ms = _timed(lambda: solve(M, q, method=method))  # noqa: B023
            rows.append(dict(scene=scene, index=index, n=n, variant=method,
                             status=res.status.name, certified=bool(res.success), ms=ms,
                             pivots=res.pivots, error=res.error, tol=res.info["tol"]))
        if qe is not None:
            Mc, qc = np.ascontiguousarray(M), np.ascontiguousarray(q)
            out, ms = _timed(lambda: qe(Mc, qc, max_iter=max(1000, 50 * n)))  # noqa: B023
            err, _, tol = certify(M, q, np.asarray(out.z, dtype=float))
            rows.append(dict(scene=scene, index=index, n=n, variant="quantecon",
                             status=f"status {out.status}", certified=bool(err <= tol), ms=ms,
                             pivots=int(out.num_iter), error=err, tol=tol))
        print(f"  {scene}[{index}] n={n}: " + ", ".join(
            f"{r['variant']} {r['ms']:.2f} ms{'' if r['certified'] else ' FAIL'}"
            for r in rows if r["scene"] == scene and r["index"] == index))
    return rows


def _bucket_table(rows, cell):
    """A table of one row per variant and one column per size bucket; ``cell(sel)`` formats
    the rows of a variant in a bucket (``sel`` may be empty)."""
    table = []
    for v in dict.fromkeys(r["variant"] for r in rows):
        row = {"variant": v}
        for lo, hi in SIZE_BUCKETS:
            row[f"{hi}"] = cell([r for r in rows if r["variant"] == v and lo < r["n"] <= hi])
        table.append(row)
    heads = ["variant"] + [f"{lo}<n<={hi}" for lo, hi in SIZE_BUCKETS]
    return common.format_table(table, ["variant"] + [f"{hi}" for _, hi in SIZE_BUCKETS], heads)


def size_table(rows):
    """Per-size median ms and certified/tried of each variant."""
    return _bucket_table(rows, lambda sel: (
        f"{common.median([r['ms'] for r in sel]):.1f} ms "
        f"{sum(r['certified'] for r in sel)}/{len(sel)}") if sel else "-")


def pivot_cost_table(rows):
    """Median ms per pivot by size (all runs with at least one pivot): the tableau cost."""
    def cell(sel):
        per = [r["ms"] / r["pivots"] for r in sel if r["pivots"] > 0]
        return f"{common.median(per):.3f}" if per else "-"

    return _bucket_table(rows, cell)


def plot_sizes(rows, path):
    """A PNG of each variant's time against n (log-log): filled markers certified, crosses
    not; the per-size figure of the benchmark results page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = dict(zip(("robust", "lemke", "lexicographic", "revised", "quantecon"), "osD^v"))
    for colour, variant in enumerate(dict.fromkeys(r["variant"] for r in rows)):
        sel = [r for r in rows if r["variant"] == variant]
        for ok in (True, False):
            pts = [(int(r["n"]), float(r["ms"])) for r in sel
                   if str(r["certified"]) == str(ok)]
            if not pts:
                continue
            n, ms = np.array(pts).T
            ax.scatter(n, ms, marker=markers.get(variant, "o") if ok else "x",
                       s=28 if ok else 40, alpha=0.75,
                       label=variant if ok else f"{variant}, not certified",
                       color=f"C{colour}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("LCP size n")
    ax.set_ylabel("time per solve [ms]")
    ax.set_title("recorded scene LCPs (ours timed with equilibration and certification)",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _independent_ok(M, q, z):
    """Dense check in the original units, each of z and w against its own size."""
    w = M @ z + q
    zs = np.abs(z).max() + 1e-300
    ws = np.abs(w).max() + np.abs(q).max()
    return bool(z.min() >= -1e-6 * zs and w.min() >= -1e-6 * ws
                and np.max(np.minimum(np.abs(z) / zs, np.abs(w) / ws)) <= 1e-6)


def scalings(n, seed):
    rng = np.random.default_rng(seed)
    for a in SCALES:
        for b in SCALES:
            yield f"alpha={a:g} beta={b:g}", np.full(n, 1.0), np.full(n, a), b
    for k in range(3):
        yield f"D1 M D2 #{k}", 10.0 ** rng.uniform(-3, 3, n), 10.0 ** rng.uniform(-3, 3, n), 1.0


def run_sweep(problems, methods):
    """Rows of the scale sweep (module notes)."""
    rows = []
    for scene, index, M, q in problems:
        n = q.size
        for method in methods:
            base_ok = solve(M, q, method=method).success
            for name, d1, d2, beta in scalings(n, index):
                Ms = d1[:, None] * M * d2[None, :]
                res = solve(Ms, beta * d1 * q, method=method)
                false = res.success and not _independent_ok(M, q, d2 * res.z / beta)
                rows.append(dict(scene=scene, index=index, n=n, method=method, scaling=name,
                                 base_ok=base_ok, ok=res.success,
                                 same_verdict=res.success == base_ok, false_success=false))
        print(f"  sweep {scene}[{index}] n={n}: done")
    return rows


def main(directory, per_scene=4, sweep_per_scene=1, sweep_max_n=500, results_dir=None,
         methods=None):
    """Run both parts and write the CSVs."""
    sweep_methods = methods or sorted(METHODS)
    methods = methods or ["robust", "lemke", "lexicographic", "revised"]
    # the tree that runs, read before the runs: a commit made during them (10-20 min)
    # labelled a CSV with code it had not measured
    date, stamp = common.utc_stamp()
    rev = common.git_revision()
    print(f"recorded LCPs from {directory}:")
    problems = recorded(directory, per_scene)
    rows = run_scenes(problems, methods)
    print("\nmedian time and certified/tried by size (recorded scene LCPs):")
    print(size_table(rows))
    print("\nmedian ms per pivot by size (robust: pivots on the answer's path, so an upper bound):")
    print(pivot_cost_table(rows))
    sweep_problems = recorded(directory, sweep_per_scene, sweep_max_n)
    sweep = run_sweep(sweep_problems, sweep_methods)
    print("\nscale sweep (same verdict as unscaled / false successes):")
    for m in dict.fromkeys(r["method"] for r in sweep):
        sel = [r for r in sweep if r["method"] == m]
        print(f"  {m:14s} {sum(r['same_verdict'] for r in sel)}/{len(sel)} same verdict, "
              f"{sum(r['false_success'] for r in sel)} false successes, "
              f"{sum(r['ok'] for r in sel)} certified")
    if results_dir:
        for r in rows + sweep:
            r.update(revision=rev, date=date)
        a = common.write_csv(common.results_path("lcp-scenes", rev, stamp, results_dir), rows,
                             SCENE_COLUMNS, float_format="%.6g")
        b = common.write_csv(common.results_path("lcp-sweep", rev, stamp, results_dir), sweep,
                             SWEEP_COLUMNS)
        png = a[:-len(".csv")] + ".png"
        plot_sizes(rows, png)
        print(f"wrote {a}, {b}, {png}")
    return rows, sweep


if __name__ == "__main__":  # python benchmarks/lcp_scenes.py <lcp-scenes CSV>: its figure
    import sys

    csv_path = sys.argv[1]
    plot_sizes(common.read_csv(csv_path), csv_path[:-len(".csv")] + ".png")
