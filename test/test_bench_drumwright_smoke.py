"""Smoke test of benchmarks/bench_drumwright.py: it runs, tabulates and writes its CSV.
Nothing is timed or compared against a speed."""

import os
import sys


BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_drumwright  # noqa: E402
import common  # noqa: E402


def test_quick_run_writes_every_section(tmp_path, capsys):
    assert bench_drumwright.main(["--quick", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Models" in out and "LCPs alone" in out and "No-slip cost" in out
    (csv,) = tmp_path.glob("bench_drumwright_*.csv")
    rows = common.read_csv(csv)
    assert {r["section"] for r in rows} == {"models", "ratio", "lcp", "scaling"}
    models = [r for r in rows if r["section"] == "models"]
    assert len(models) == len(bench_drumwright.MODELS) and all(r["status"] == "ok" for r in models)
    no_slip = next(r for r in models if r["name"] == "no_slip/ppm")
    assert float(no_slip["slip_max"]) <= 1e-9 and int(no_slip["failures"]) == 0
