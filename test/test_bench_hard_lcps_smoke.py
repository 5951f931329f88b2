"""Smoke test of benchmarks/bench_hard_lcps.py: it reads the recorded pour LCPs, solves
them with robust under a pivot budget and walks each sparse path, certifying every answer
and writing one CSV row each. Nothing here is timed; the paths are cut short."""

import os
import sys

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
