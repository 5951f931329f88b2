"""Smoke test of benchmarks/bench_hard_lcps.py: it reads the recorded pour LCPs, solves
them with robust under a pivot budget and walks each sparse path, certifying every answer
and writing one CSV row each. Nothing here is timed; the paths are cut short."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench = pytest.importorskip("bench_hard_lcps")
common = pytest.importorskip("common")


def test_a_budgeted_run_reports_every_path(tmp_path):
    M, q, basis = bench.load("round3")
    assert q.shape == (5170,) and M.shape == (5170, 5170) and basis.size == 448
    assert bench.main(["round3", "--budget", "1000", "--paths", "--path-pivots", "600",
                       "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("hard_lcps_*.csv")
    rows = common.read_csv(path)
    assert [r["variant"] for r in rows] == ["robust"] + [p[0] for p in bench.PATHS]
    robust = rows[0]
    assert robust["status"] == "MAX_PIVOTS" and robust["certified"] == "False"
    assert int(robust["all_pivots"]) == 1000 and robust["paths"].endswith("budget:spent")
    assert all(r["status"] == "MAX_PIVOTS" and int(r["pivots"]) == 600 for r in rows[1:])


def test_a_path_to_an_npz_file_is_read_and_an_unknown_name_is_refused(tmp_path):
    M, q, basis = bench.load("round1")
    path = tmp_path / "lcp.npz"
    np.savez(path, data=M.data, indices=M.indices, indptr=M.indptr, q=q, basis=basis)
    M2, q2, basis2 = bench.load(str(path))
    assert (M2 != M).nnz == 0 and np.array_equal(q2, q) and np.array_equal(basis2, basis)
    np.savez(path, data=M.data, indices=M.indices, indptr=M.indptr, q=q,
             basis=np.zeros(0, np.int64))
    assert bench.load(str(path))[2] is None  # no warm start: a cold solve
    with pytest.raises(SystemExit, match="round1, round2, round3, t096, hoist_t2171 or a path"):
        bench.load("round4")
    M, q, basis = bench.load("t096")  # the first LCP the pour still fails (bundled)
    assert q.shape == (5210,) and M.shape == (5210, 5210) and basis.size == 445
