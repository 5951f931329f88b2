"""Every LCP method and peer on the same problems: certified success, failure modes, time.

Usage::

    .venv/bin/python benchmarks/bench_lcp.py --quick     # ~100 problems + reference set
    .venv/bin/python benchmarks/bench_lcp.py             # the full set (>= 1000 problems)

Prints, per problem set, a table in the shape of Yamane & Nakamura (2008) Table I, the
median time per size bucket and the headline ratios, and writes
``benchmarks/results/lcp[-quick]_<UTC stamp>_<rev>.csv`` (one row per set and method, with
the revision and date in columns) and ``lcp[-quick]-runs_...csv`` (one row per solve).

Timing: one BLAS thread (``OPENBLAS_NUM_THREADS=1`` unless set), ``time.perf_counter``
around one call per problem, after a warm-up call on the first problem of the set (numba
compilation), with the garbage collector off. For our
methods the call is ``contact_lcp.lcp.solve`` *including* its validation and certification;
for a peer it is the peer's own solve only (see ``lcp_peers.py``), and its answer is then
certified by us, untimed. Success always means certified: ``lcp_error <= default_tolerance``.
"""

import argparse
import gc
import os
import sys
import time
import warnings
from dataclasses import dataclass, field, replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import common  # noqa: E402
import lcp_peers  # noqa: E402
import lcp_problems  # noqa: E402
from contact_lcp.lcp import METHODS, LCPStatus, default_tolerance, lcp_error, solve  # noqa: E402

FAILURES = ("no_solution", "cycle", "error", "max_pivots", "numerical_failure")
BUCKETS = ((0, 80), (80, 160), (160, 320))
TABLE = (  # (key, header): Yamane & Nakamura Table I, then what peers make necessary
    ("variant", "method"), ("total", "total"), ("success", "success"), ("failure", "failure"),
    ("no_solution", "no sol"), ("cycle", "cycle"), ("error", "error"),
    ("max_pivots", "max piv"), ("numerical_failure", "numer"), ("median_ms", "median ms"),
    ("p95_ms", "p95 ms"), ("mean_pivots", "mean piv"), ("max_residual", "max resid"),
    ("lied", "lied"), ("false_fail", "false fail"), ("raised", "raised"),
)
SUMMARY_COLUMNS = ("revision", "date", "set", "variant", "kind", "method", "options",
                   "version", "total", "success", "success_rate", "failure") + FAILURES + (
    "lied", "false_fail", "raised", "skipped", "median_ms", "p95_ms", "sgm_ms", "mean_pivots",
    "max_residual", "median_setup_ms", "trivial_ms", "load_start", "load_end", "notes")
RUN_COLUMNS = ("revision", "date", "set", "problem", "family", "n", "k", "rank_G", "cond_G",
               "cond_range", "variant", "status", "claimed", "lied", "false_fail", "raised",
               "time_ms", "setup_ms", "pivots", "error", "tol", "reason")


@dataclass(frozen=True)
class Variant:
    """A method with fixed options (``kind='ours'``) or a peer (``kind='peer'``).

    On the sets named in ``subsampled``, ``stride`` > 1 runs it on every stride-th problem
    only, and ``max_n`` only on problems of at most that size (for peers too slow to run on
    everything).
    """

    name: str
    method: str
    options: dict = field(default_factory=dict)
    kind: str = "ours"
    peer: object = None
    stride: int = 1
    max_n: int = None
    subsampled: tuple = ("contact",)

    def takes(self, set_name, index, problem):
        """Whether this variant runs on the ``index``-th ``problem`` of set ``set_name``."""
        if set_name not in self.subsampled:
            return True
        return index % self.stride == 0 and (self.max_n is None or problem.n <= self.max_n)


#: Our methods and option variants, run side by side when registered in METHODS.
OUR_VARIANTS = (
    Variant("robust", "robust"),
    Variant("lemke", "lemke"),
    Variant("lexico D=0", "lexicographic", {"tie_threshold": 0.0}),
    Variant("lexico D=1e-8", "lexicographic", {"tie_threshold": 1e-8}),
    Variant("lexico D=1e-6", "lexicographic", {"tie_threshold": 1e-6}),
    Variant("lexico D=1e-4", "lexicographic", {"tie_threshold": 1e-4}),
    Variant("murty", "murty"),
    Variant("pgs", "pgs"),
)


def our_variants(methods=None, names=None):
    """``(variants, missing)``: the configured variants whose method is registered, then
    every other registered method with default options; and the configured methods that
    are not registered yet. ``names`` keeps only those variant names."""
    methods = METHODS if methods is None else methods
    variants = [v for v in OUR_VARIANTS if v.method in methods]
    variants += [Variant(m, m) for m in methods if m not in {v.method for v in OUR_VARIANTS}]
    missing = sorted({v.method for v in OUR_VARIANTS} - set(methods))
    if names is not None:
        variants = [v for v in variants if v.name in names or v.method in names]
    return variants, missing


def peer_variants(names=None, drake_stride=1, drake_max_n=None):
    """Variants of the installed peers among ``names`` (default all)."""
    out = []
    for peer in lcp_peers.available_peers(names):
        stride, max_n = (drake_stride, drake_max_n) if peer.name == "drake" else (1, None)
        out.append(Variant(peer.name, peer.name, kind="peer", peer=peer, stride=stride,
                           max_n=max_n))
    return out


def run_once(variant, problem):
    """One solve of ``problem`` by ``variant``: a dict of the run columns (time in ms)."""
    M, q = problem.M, problem.q
    row = dict(problem=problem.name, family=problem.family, n=problem.n, k=problem.k,
               rank_G=problem.rank_G, cond_G=problem.cond_G, cond_range=problem.cond_range,
               variant=variant.name, setup_ms=0.0, lied=False, false_fail=False, raised=False,
               reason="")
    if variant.kind == "ours":
        t0 = time.perf_counter()
        try:
            res = solve(M, q, method=variant.method, **variant.options)
        except Exception as e:  # a raise is a bug of ours: count it, keep going
            row.update(time_ms=1e3 * (time.perf_counter() - t0), status="error", claimed=False,
                       raised=True, pivots=-1, error=float("nan"), tol=float("nan"),
                       reason=f"raised {type(e).__name__}: {e}")
            return row
        row["time_ms"] = 1e3 * (time.perf_counter() - t0)
        claimed = res.success or res.info.get("claimed") == LCPStatus.SOLVED.name
        row.update(status=res.status.value, claimed=claimed, pivots=res.pivots,
                   error=res.error, tol=res.info.get("tol", float("nan")),
                   lied=claimed and not res.success, reason=str(res.info.get("reason", "")))
        return row
    peer = variant.peer
    t0 = time.perf_counter()
    state = peer.prepare(M, q)
    t1 = time.perf_counter()
    try:
        out = peer.run(state)
    except Exception as e:
        row.update(time_ms=1e3 * (time.perf_counter() - t1), setup_ms=1e3 * (t1 - t0),
                   status="error", claimed=False, raised=True, pivots=-1,
                   error=float("nan"), tol=float("nan"), reason=f"raised {type(e).__name__}: {e}")
        return row
    t2 = time.perf_counter()
    z = np.asarray(out.z, dtype=float)
    finite = z.shape == q.shape and np.all(np.isfinite(z))
    z = z if finite else np.zeros_like(q)
    err, _ = lcp_error(M, q, z)
    tol = default_tolerance(M, q, z)
    ok = finite and err <= tol
    if out.claimed:
        status = LCPStatus.SOLVED if ok else (
            LCPStatus.ERROR if finite else LCPStatus.NUMERICAL_FAILURE)
    else:
        status = out.status if out.status is not LCPStatus.SOLVED else LCPStatus.ERROR
    row.update(time_ms=1e3 * (t2 - t1), setup_ms=1e3 * (t1 - t0), status=status.value,
               claimed=out.claimed, pivots=out.pivots, error=err if finite else float("nan"),
               tol=tol, lied=out.claimed and not ok, false_fail=not out.claimed and ok,
               reason=out.reason)
    return row


def run_variant(variant, problems, set_name, budget_s=None, log=None, trivial_every=10):
    """All runs of ``variant`` on a problem set.

    The first problem is solved once untimed (warm-up); after ``budget_s`` seconds of
    solving the rest are recorded as ``skipped``. Every ``trivial_every``-th problem is
    solved again with ``q`` replaced by ``|q| + 1`` (answer ``z = 0``): the fixed cost of a
    call (binding, validation, certification).

    Returns
    -------
    rows : list of dict
    trivial_ms : list of float
    """
    chosen = [p for i, p in enumerate(problems) if variant.takes(set_name, i, p)]
    if not chosen:
        return [], []
    run_once(variant, chosen[0])
    rows, spent, trivial = [], 0.0, []
    gc.collect()
    gc.disable()
    try:
        for p in chosen:
            if budget_s is not None and spent > budget_s:
                rows.append(dict(problem=p.name, family=p.family, n=p.n, k=p.k,
                                 variant=variant.name, status="skipped"))
                continue
            row = run_once(variant, p)
            spent += 1e-3 * (row["time_ms"] + row["setup_ms"])
            rows.append(row)
            if trivial_every and len(rows) % trivial_every == 1:
                trivial.append(run_once(variant, replace(p, q=np.abs(p.q) + 1.0))["time_ms"])
    finally:
        gc.enable()
    for row in rows:
        row["set"] = set_name
    if log:
        log(f"  {set_name:9s} {variant.name:14s} {len(rows):5d} problems  {spent:7.1f} s")
    return rows, trivial


def summarize(rows, variant, set_name, trivial_ms=()):
    """One table row: counts of each outcome, time statistics and the worst claimed error."""
    done = [r for r in rows if r["status"] != "skipped"]
    t = [r["time_ms"] for r in done]
    counts = {f: sum(r["status"] == f for r in done) for f in FAILURES}
    success = sum(r["status"] == LCPStatus.SOLVED.value for r in done)
    piv = [r["pivots"] for r in done if r["pivots"] is not None and r["pivots"] >= 0]
    claimed_err = [r["error"] for r in done if r["claimed"] and np.isfinite(r["error"])]
    setup = [r["setup_ms"] for r in done]
    return dict(
        set=set_name, variant=variant.name, kind=variant.kind, method=variant.method,
        options=" ".join(f"{k}={v}" for k, v in variant.options.items()),
        version=getattr(variant.peer, "version", ""), total=len(done), success=success,
        success_rate=success / len(done) if done else float("nan"),
        failure=len(done) - success, **counts,
        lied=sum(bool(r["lied"]) for r in done),
        false_fail=sum(bool(r["false_fail"]) for r in done),
        raised=sum(bool(r["raised"]) for r in done), skipped=len(rows) - len(done),
        median_ms=common.median(t), p95_ms=common.percentile(t, 95),
        sgm_ms=common.shifted_geometric_mean(t, 0.01),
        mean_pivots=float(np.mean(piv)) if piv else float("nan"),
        max_residual=max(claimed_err) if claimed_err else float("nan"),
        median_setup_ms=common.median(setup) if variant.kind == "peer" else float("nan"),
        trivial_ms=common.median(trivial_ms),
        notes=getattr(variant.peer, "notes", ""),
    )


def bucket_rows(runs, variants):
    """Median time [ms] and success count per size bucket, one row per variant."""
    out = []
    for v in variants:
        row = {"variant": v.name}
        for lo, hi in BUCKETS:
            sel = [r for r in runs if r["variant"] == v.name and lo < r["n"] <= hi
                   and r["status"] != "skipped"]
            row[f"ms_{hi}"] = common.median([r["time_ms"] for r in sel])
            ok = sum(r["status"] == LCPStatus.SOLVED.value for r in sel)
            row[f"ok_{hi}"] = f"{ok}/{len(sel)}"
        out.append(row)
    return out


def paired_ratio(runs, num, den, solved=False, bucket=None):
    """``median(time of num) / median(time of den)`` on the problems both tried (both
    certified if ``solved``; with ``lo < n <= hi`` if ``bucket``), and how many."""
    def times(v):
        return {r["problem"]: r["time_ms"] for r in runs if r["variant"] == v
                and r["status"] != "skipped" and (not solved or r["status"] == "solved")
                and (bucket is None or bucket[0] < r["n"] <= bucket[1])}
    a, b = times(num), times(den)
    both = sorted(set(a) & set(b))
    if not both:
        return float("nan"), 0
    return common.median([a[p] for p in both]) / common.median([b[p] for p in both]), len(both)


def headline(runs, summaries, set_name="contact"):
    """Text lines of the headline numbers on set (b)."""
    runs = [r for r in runs if r["set"] == set_name]
    by = {s["variant"]: s for s in summaries if s["set"] == set_name}
    lines = []
    if "robust" in by:
        s = by["robust"]
        lines.append(f"robust success on set (b): {s['success']}/{s['total']} = "
                     f"{100 * s['success_rate']:.1f} %   (target 100 %)")
    if "robust" in by and "quantecon" in by:
        ratio, m = paired_ratio(runs, "robust", "quantecon")
        lines.append(f"robust median / quantecon median: {ratio:.2f}x on {m} problems"
                     "   (target <= 2x)")
        ratio, m = paired_ratio(runs, "robust", "quantecon", solved=True)
        per = [(lo, hi) + paired_ratio(runs, "robust", "quantecon", bucket=(lo, hi))
               for lo, hi in BUCKETS]
        lines.append(f"  on the {m} both certified: {ratio:.2f}x; by size "
                     + ", ".join(f"{lo}<n<={hi}: {r:.2f}x ({c})" for lo, hi, r, c in per))
    if "robust" in by and "drake" in by:
        ratio, m = paired_ratio(runs, "drake", "robust")
        setup = by["drake"]["median_setup_ms"]
        lines.append(f"drake median / robust median: {ratio:.1f}x on {m} problems"
                     f"   (target >= 10x); drake program build (untimed) median {setup:.3f} ms")
        ratio, m = paired_ratio(runs, "drake", "robust", solved=True)
        lines.append(f"  on the {m} both certified: {ratio:.1f}x")
    fixed = [f"{s['variant']} {s['trivial_ms']:.3g}" for s in by.values()
             if np.isfinite(s["trivial_ms"])]
    if fixed:
        lines.append("fixed cost of a call (same M, q >= 0 so z = 0; median ms): "
                     + ", ".join(fixed))
    for name in ("quantecon", "drake"):
        if name in by and by[name]["total"]:
            s = by[name]
            lines.append(f"{name}: certified {s['success']}/{s['total']}, claimed success but "
                         f"failed our check {s['lied']}, reported failure on a valid point "
                         f"{s['false_fail']}, worst claimed residual {s['max_residual']:.2e}")
    return lines


def failure_lines(runs, problems, set_name):
    """Per variant, the problems it did not solve and how (for a small named set); an
    infeasible problem answered by ``no_solution`` is marked as the right answer."""
    infeasible = {p.name for p in problems if p.solvable is False}
    by = {}
    for r in runs:
        if r["set"] != set_name or r["status"] in (LCPStatus.SOLVED.value, "skipped"):
            continue
        tag = ""
        if r["problem"] in infeasible:
            right = r["status"] == LCPStatus.NO_SOLUTION.value
            tag = " (infeasible: right)" if right else " (infeasible)"
        by.setdefault(r["variant"], []).append(f"{r['problem']} {r['status']}{tag}")
    return [f"    {v}: " + ", ".join(items) for v, items in by.items()]


def print_table(title, summaries):
    """The Table I of one problem set."""
    print(f"\n{title}")
    print(common.format_table(summaries, [k for k, _ in TABLE], [h for _, h in TABLE]))


def run_benchmark(sets, variants, budget_s=None, log=None):
    """Run every variant on every set.

    Parameters
    ----------
    sets : dict of str -> list of BenchProblem
    variants : list of Variant
    budget_s : float, optional
        Seconds of solving per variant and set before the rest is skipped.

    Returns
    -------
    runs : list of dict
        One per solve (``RUN_COLUMNS``).
    summaries : list of dict
        One per set and variant (``SUMMARY_COLUMNS``), in the order of ``variants``.
    """
    runs, summaries = [], []
    for set_name, problems in sets.items():
        for v in variants:
            rows, trivial = run_variant(v, problems, set_name, budget_s, log)
            if rows:
                runs += rows
                summaries.append(summarize(rows, v, set_name, trivial))
    return runs, summaries


def write_results(runs, summaries, name, results_dir=None, extra=None):
    """Write ``<name>_<stamp>_<rev>.csv`` (summaries) and ``<name>-runs_...csv``.

    Returns the two paths.
    """
    date, stamp = common.utc_stamp()
    rev = common.git_revision(ROOT)
    for row in summaries + runs:
        row.update(revision=rev, date=date, **(extra or {}))
    a = common.write_csv(common.results_path(name, rev, stamp, results_dir), summaries,
                         SUMMARY_COLUMNS)
    b = common.write_csv(common.results_path(name + "-runs", rev, stamp, results_dir), runs,
                         RUN_COLUMNS, float_format="%.6g")
    return a, b


def problem_sets(quick, count, seed):
    """``{'reference': [...], 'contact': [...]}``, the reference set only when importable."""
    sets = {}
    ref = lcp_problems.reference_set()
    if ref:
        sets["reference"] = ref
    sets["contact"] = (lcp_problems.quick_contact_problems(100, count, seed) if quick
                       else lcp_problems.contact_problems(count, seed))
    return sets


LEGEND = """\
lied: claimed success but failed our check;  false fail: reported failure on a point that
passes it;  max resid: worst ||min(z, Mz+q)||_inf among claimed successes;  mean piv: over
all runs;  times include our validation and certification for our methods, only the solve
call for peers;  scipy's 'singular matrix' warnings are silenced (the status says it)."""


def report(sets, variants, runs, summaries, budget):
    """Print the table of each set, the size buckets of set (b) and the headline."""
    titles = {"reference": "(a) reference problems",
              "contact": "(b) contact LCPs with redundant contacts"}
    for set_name, problems in sets.items():
        rows = [s for s in summaries if s["set"] == set_name]
        print_table(f"{titles.get(set_name, set_name)}: {len(problems)} problems", rows)
        subsets = [f"{s['variant']}: {s['total']} of them" for s in rows
                   if s["total"] + s["skipped"] < len(problems)]
        if subsets:
            print("  subsets: " + "; ".join(subsets))
        if set_name == "reference":
            print("  not solved:\n" + "\n".join(failure_lines(runs, problems, set_name)))
        skipped = [f"{s['variant']} {s['skipped']}" for s in rows if s["skipped"]]
        if skipped:
            print(f"  skipped after {budget:.0f} s of solving: " + ", ".join(skipped))
    if "contact" in sets:
        print("\nmedian ms (certified / tried) by size on set (b):")
        cols = ["variant"] + [f"{p}_{hi}" for lo, hi in BUCKETS for p in ("ms", "ok")]
        heads = ["method"] + [f"{h} {lo}<n<={hi}" for lo, hi in BUCKETS for h in ("ms", "ok")]
        contact = [r for r in runs if r["set"] == "contact"]
        print(common.format_table(bucket_rows(contact, variants), cols, heads))
    print("\n" + LEGEND)
    print("\nheadline:")
    for line in headline(runs, summaries):
        print("  " + line)


def main(argv=None):
    """The ``bench_lcp.py`` command; returns ``(runs, summaries)``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="100 contact problems + the reference set")
    ap.add_argument("--count", type=int, default=1000, help="random contact problems")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", help="comma-separated variant or method names (default all)")
    ap.add_argument("--peers", default="quantecon,drake",
                    help="installed peers to run ('' for none)")
    ap.add_argument("--drake-stride", type=int, default=None,
                    help="Drake on every k-th contact problem (default 20; quick 1 with n <= 100)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of solving per method and set, then skip (600; quick 20)")
    ap.add_argument("--results-dir", default=common.RESULTS_DIR,
                    help="where the CSVs go ('' for none)")
    ap.add_argument("--scenes", metavar="DIR",
                    help="instead: the recorded scene LCPs DIR/<scene>.npz against quantecon "
                         "and the scale sweep (see lcp_scenes.py)")
    ap.add_argument("--per-scene", type=int, default=4, help="with --scenes: LCPs per scene")
    args = ap.parse_args(argv)
    if args.scenes:
        import lcp_scenes
        warnings.filterwarnings("ignore", message=".*[Ss]ingular matrix")
        return lcp_scenes.main(args.scenes, per_scene=args.per_scene,
                               results_dir=args.results_dir or None,
                               methods=args.methods.split(",") if args.methods else None)
    # Singular principal blocks are an expected outcome here; the status records them.
    warnings.filterwarnings("ignore", message=".*[Ss]ingular matrix")
    load_start = os.getloadavg()[0]
    budget = args.budget if args.budget is not None else (20.0 if args.quick else 600.0)
    stride = args.drake_stride or (1 if args.quick else 20)
    max_n = 100 if args.quick and args.drake_stride is None else None

    t0 = time.perf_counter()
    sets = problem_sets(args.quick, args.count, args.seed)
    print("problems: " + ", ".join(f"{k} {len(v)}" for k, v in sets.items())
          + f"  (generated in {time.perf_counter() - t0:.1f} s; load average {load_start:.2f})")
    names = set(args.methods.split(",")) if args.methods else None
    variants, missing = our_variants(names=names)
    if missing:
        print(f"not registered yet (skipped): {', '.join(missing)}")
    peer_names = [p for p in args.peers.split(",") if p and (names is None or p in names)]
    variants += peer_variants(peer_names, stride, max_n)
    print("variants: " + ", ".join(v.name for v in variants))
    runs, summaries = run_benchmark(sets, variants, budget, log=print)
    load_end = os.getloadavg()[0]
    report(sets, variants, runs, summaries, budget)
    print(f"\nload average {load_start:.2f} at start, {load_end:.2f} at end (2 cores; > 1 "
          f"means the timings shared the machine); total {time.perf_counter() - t0:.0f} s")
    if args.results_dir:
        name = "lcp-quick" if args.quick else "lcp"
        paths = write_results(runs, summaries, name, args.results_dir,
                              {"load_start": load_start, "load_end": load_end})
        print("wrote " + ", ".join(os.path.relpath(p, os.getcwd()) for p in paths))
    return runs, summaries


if __name__ == "__main__":
    main()
