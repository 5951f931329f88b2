"""The pour's hardest recorded LCPs: how long the sparse Lemke paths take, and which certify.

Usage::

    .venv/bin/python benchmarks/bench_hard_lcps.py              # robust on each (~10 min)
    .venv/bin/python benchmarks/bench_hard_lcps.py --paths      # and each sparse path alone
    .venv/bin/python benchmarks/bench_hard_lcps.py --budget 50000 round3
    .venv/bin/python benchmarks/bench_hard_lcps.py /tmp/failed/spheres_200_t0.960_1.npz

``benchmarks/data/pour_t084_round{1,2,3}.npz`` are the frictional LCPs of the three
active-set rounds of the 200-sphere pour's step to t = 0.84 s (``config/spheres_200.yaml``;
517-518 contacts, n = 5 170-5 180, 8-sided pyramids), as :func:`contact_lcp.lcp.solve`
receives them from the pyramid model: ``M`` (CSR: ``data``, ``indices``, ``indptr``), ``q``
and ``basis``, the warm start (the frictionless answer's loaded normals). They were
captured from the step replayed from its saved state (issue 10). Before 489781f the
third defeated every sparse path and the step fell back to frictionless after 17 minutes.
``t096`` (``pour_t096_failed.npz``, n = 5 210, 521 contacts) is the first frictional LCP
of the step to t = 0.96 s of a fresh run (``bench_large.py spheres_200.yaml:2.0
--failed-lcps DIR`` at faae878), which that run failed: every sparse path stopped at its
50 n limit. The cold exact-tie path certifies it after 539 290 pivots (104 n), which
robust allows since 44cdd12 within the model's budget. ``hoist_t2171``
(``hoist_t2171_uncertified.npz``, n = 40, 4 contacts, condition number 1e20) is the
pyramid model's warm frictional LCP of ``config/hoist.yaml``'s step to t = 2.171 s: robust
and every retry of the standard list before the last end on answers that miss the per-row
verdict by a factor of about 5 (three friction rows at w = -3e-11 with their contact's lam
at 0); the warm path with exact ties certifies it (the ``exact_ties`` attempt,
``contact_lcp.lcp.attempts.EXACT_TIE_RETRY``, and the warm sparse path here). A path to an ``.npz`` file of the same form (what
``--failed-lcps`` writes) is read instead of a bundled name.

Each is solved by ``robust`` as the model calls it (with the warm start and the
pyramid model's pivot budget, ``pyramid.LARGE_PIVOTS_PER_ROW`` per row; ``--budget``
sets another ``pivot_budget``), and with ``--paths`` along each of robust's sparse paths
alone (:func:`contact_lcp.lcp.revised.solve_revised` on the equilibrated problem, at most
50 n pivots): the warm and the cold path with exact ties, the cold path with the tie threshold
1e-9, the min-index path. Every answer is certified in the caller's units by
:func:`contact_lcp.lcp.residual.certify_rows` (solve()'s per-row verdict). No peer runs here: quantecon's and
Drake's Lemke keep a dense tableau (n^2 = 27 million entries, O(n^2) per pivot), hours for
paths of 10^5 pivots. Rows go to ``benchmarks/results/hard_lcps_<date>_<revision>.csv``.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from scipy import sparse  # noqa: E402

from contact_lcp.contact.pyramid import LARGE_PIVOTS_PER_ROW  # noqa: E402
from contact_lcp.lcp import revised, solve  # noqa: E402
from contact_lcp.lcp.lemke import default_max_pivots  # noqa: E402
from contact_lcp.lcp.residual import certify_rows  # noqa: E402
from contact_lcp.lcp.scaling import MAX_SWEEPS, equilibrated  # noqa: E402

DATA = os.path.join(HERE, "data")
#: bundled LCPs by name: file in benchmarks/data
FILES = {"round1": "pour_t084_round1.npz", "round2": "pour_t084_round2.npz",
         "round3": "pour_t084_round3.npz", "t096": "pour_t096_failed.npz",
         "hoist_t2171": "hoist_t2171_uncertified.npz"}
NAMES = tuple(FILES)
#: run when no LCP is named (t096 takes robust 154 n pivots: about 6 minutes)
DEFAULT = ("round1", "round2", "round3")
COLUMNS = ("lcp", "n", "variant", "status", "certified", "s", "pivots", "all_pivots", "paths",
           "error_over_tol", "revision", "date")
#: robust's sparse paths: (variant, warm-started, tie threshold, rule)
PATHS = (("warm-exact-ties", True, 0.0, "lexicographic"),
         ("cold-exact-ties", False, 0.0, "lexicographic"),
         ("cold-tie-1e-9", False, 1e-9, "lexicographic"),
         ("cold-min-index", False, 0.0, "min_index"))


def load(name):
    """``(M, q, basis)`` of the bundled LCP ``name`` (:data:`FILES`), or of the file
    ``name`` when it ends in ``.npz`` (``M`` sparse CSR; ``basis`` None when empty: a
    cold solve)."""
    if name.endswith(".npz"):
        path = name
    elif name in FILES:
        path = os.path.join(DATA, FILES[name])
    else:
        raise SystemExit(f"expected one of {', '.join(NAMES)} or a path to an .npz file; "
                         f"received {name!r}")
    with np.load(path) as f:
        n = f["q"].shape[0]
        M = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=(n, n))
        basis = f["basis"].copy()
        return M, f["q"].copy(), basis if basis.size else None


def robust_row(name, M, q, basis, budget):
    """One row: robust as the pyramid model calls it."""
    opts = {} if basis is None else {"initial_basis": basis}
    opts["pivot_budget"] = (LARGE_PIVOTS_PER_ROW * q.size) if budget is None else budget
    t0 = time.perf_counter()
    res = solve(M.toarray(), q, "robust", **opts)
    seconds = time.perf_counter() - t0
    return {"lcp": name, "n": q.size, "variant": "robust", "status": res.status.name,
            "certified": res.success, "s": seconds, "pivots": res.pivots,
            "all_pivots": res.info.get("path_pivots", res.pivots)
            + res.info.get("attempt_pivots", 0),
            "paths": " ".join(res.info.get("paths", ())),
            "error_over_tol": res.error / res.info["tol"] if res.info["tol"] > 0 else 0.0}


def path_rows(name, M, q, basis, max_pivots=None):
    """One row per sparse path of robust, each walked alone."""
    dense = M.toarray()
    _, d1, d2, s, _, Ms, qs, _ = equilibrated(dense, q, MAX_SWEEPS, True)
    A = sparse.csc_matrix(Ms)
    limit = default_max_pivots(q.size) if max_pivots is None else int(max_pivots)
    rows = []
    for variant, warm, delta, rule in PATHS:
        t0 = time.perf_counter()
        out = revised.solve_revised(A, qs, tie_threshold=delta, rule=rule, max_pivots=limit,
                                    initial_basis=basis if warm else None)
        seconds = time.perf_counter() - t0
        _, _, _, ratio, _, _ = certify_rows(dense, q, out.z, d1, d2, s)
        rows.append({"lcp": name, "n": q.size, "variant": variant, "status": out.status.name,
                     "certified": out.status.name == "SOLVED" and ratio <= 1.0, "s": seconds,
                     "pivots": out.pivots, "all_pivots": out.pivots, "paths": variant,
                     "error_over_tol": ratio})
        print(f"  {name} {variant}: {out.status.name} {out.pivots} pivots {seconds:.1f} s",
              flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lcps", nargs="*", default=list(DEFAULT),
                        help=f"{', '.join(NAMES)} or paths to .npz files of the same form")
    parser.add_argument("--paths", action="store_true", help="also walk each sparse path alone")
    parser.add_argument("--budget", type=int, default=None,
                        help="robust's pivot_budget (default: the pyramid model's)")
    parser.add_argument("--path-pivots", type=int, default=None,
                        help="pivot limit of each path with --paths (default 50 n)")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    rows = []
    for spec in args.lcps:
        M, q, basis = load(spec)
        name = os.path.basename(spec)
        row = robust_row(name, M, q, basis, args.budget)
        print(f"  {name} robust: {row['status']} {row['all_pivots']} pivots "
              f"{row['s']:.1f} s ({row['paths']})", flush=True)
        rows.append(row)
        if args.paths:
            rows += path_rows(name, M, q, basis, args.path_pivots)
    for r in rows:
        r.update(revision=revision, date=date)
    path = common.write_csv(common.results_path("hard_lcps", revision, stamp, args.results_dir),
                            rows, COLUMNS)
    print(common.format_table(rows, ["lcp", "n", "variant", "status", "certified", "s",
                                     "all_pivots"]))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
