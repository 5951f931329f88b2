"""Smoke test of benchmarks/bench_large.py: it steps the scenes it is given, writes one CSV
row per step and groups them by contacts in the LCP. Nothing here is timed."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench_large = pytest.importorskip("bench_large")
common = pytest.importorskip("common")


def test_rows_per_step_and_the_summary(tmp_path, capsys):
    assert bench_large.main(["box_stack.yaml:0.05", "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("bench_large_*.csv")
    rows = common.read_csv(path)
    assert [int(r["step"]) for r in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 5
    assert all(r["scene"] == "box_stack.yaml" and r["groups"] == "1" for r in rows)
    assert all(r["status"] in ("SOLVED", "NO_CONTACT") for r in rows)
    assert max(int(r["active"]) for r in rows) > 0  # the stack rests on contacts
    assert float(rows[-1]["peak_rss_mb"]) > 0
    assert "median_pivots" in capsys.readouterr().out


def test_the_csv_holds_every_step_so_far_while_the_run_goes_on(tmp_path, monkeypatch):
    """A run of hours that is stopped keeps its rows: the CSV is rewritten after each
    step (here read back when the third step has been written)."""
    seen = []
    real = common.write_csv

    def spy(path, rows, columns, float_format=None):
        real(path, rows, columns, float_format)
        seen.append(len(common.read_csv(path)))

    monkeypatch.setattr(common, "write_csv", spy)
    assert bench_large.main(["box_stack.yaml:0.03", "--results-dir", str(tmp_path)]) == 0
    assert seen[:3] == [1, 2, 3] and seen[-1] == seen[-2]  # and once more at the end
