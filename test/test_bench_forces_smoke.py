"""Smoke test of benchmarks/bench_forces.py: it runs, tabulates and writes its CSV, and its
mirror columns read a symmetric robot as symmetric. Nothing is timed or compared against
a speed."""

import os
import sys


BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_forces  # noqa: E402
import common  # noqa: E402


def test_a_short_run_writes_its_rows_and_reads_the_humanoid_as_symmetric(tmp_path, capsys):
    bench_forces.main(["--scenes", "humanoid_stand", "--steps", "20",
                       "--results-dir", str(tmp_path)])
    assert "mirror_asym" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_forces_*.csv")
    rows = common.read_csv(csv)
    assert [(r["force_distribution"], r["forces_read"]) for r in rows] == \
        [("any", "True"), ("min_norm", "False"), ("min_norm", "True")]
    for r in rows:
        assert float(r["moved"]) == 0.0 and int(r["mirror_pairs"]) == 4
    # the humanoid is a mirror-symmetric model in a symmetric posture
    assert all(float(r["mirror_asym"]) < 1e-6 for r in rows[1:])
